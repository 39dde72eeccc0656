package config

import (
	"time"

	"github.com/vantagehq/vantage/agent/internal/canary"
	"github.com/vantagehq/vantage/agent/internal/sizing"
	"github.com/vantagehq/vantage/pkg/envconfig"
)

// Vars lists every variable the agent reads, for `vantage-agent config` and the documentation.
func Vars() []envconfig.Var { return vars(new(Config)) }

// vars declares every setting once, bound to its field of c: name, default, meaning and the
// parser of its value. Load, `vantage-agent config` and the agent's table in
// docs/operations.md (go test ./agent/internal/config -run TestOperationsDoc -update) come from
// it. A new setting is a field of Config and a row here.
func vars(c *Config) []envconfig.Var {
	return []envconfig.Var{
		{Name: "VANTAGE_NATS_URL", Default: "nats://127.0.0.1:4222", Into: envconfig.Field(&c.NATSURL, envconfig.Text),
			Help: "NATS server(s) with JetStream, comma-separated; credentials may be in the URL"},
		{Name: "VANTAGE_NATS_CREDS", Unset: "(none)", Into: envconfig.Field(&c.NATSCredsFile, credsFile),
			Help: "path of a NATS `.creds` file (JWT and NKey seed) the agent authenticates with"},
		{Name: "VANTAGE_NATS_API_PREFIX", Unset: "(`$JS.API`)", Into: envconfig.Field(&c.NATSAPIPrefix, apiPrefix),
			Help: "where the agent's NATS account sees the JetStream API: `vantage.js.api` for the region accounts of " +
				"`vantage-controlplane admin nats-config`"},
		{Name: "VANTAGE_CONTROLPLANE_ADDR", Default: "127.0.0.1:9090", Into: envconfig.Field(&c.ControlPlaneAddr, controlPlaneAddr),
			Help: "host:port of the control plane's gRPC agent stream"},
		{Name: "VANTAGE_CONTROLPLANE_TLS", Default: "false", Into: envconfig.Field(&c.ControlPlaneTLS, envconfig.Bool),
			Help: "TLS on the gRPC stream, verifying the control plane's certificate against the system's CAs (implied by `VANTAGE_CONTROLPLANE_CA`)"},
		{Name: "VANTAGE_CONTROLPLANE_CA", Unset: "(system CAs)", Into: envconfig.Field(&c.ControlPlaneCA, envconfig.Text),
			Help: "PEM bundle of the CAs the control plane's certificate must chain to; turns TLS on; read again when it changes"},
		{Name: "VANTAGE_CONTROLPLANE_SERVER_NAME", Unset: "host of `VANTAGE_CONTROLPLANE_ADDR`",
			Into: envconfig.Field(&c.ControlPlaneServerName, envconfig.Text), Derive: c.deriveServerName,
			Help: "the name (or IP) the control plane's certificate must be valid for"},
		{Name: "VANTAGE_AGENT_TLS_CERT", Unset: "(none)", Into: envconfig.Field(&c.TLSCert, envconfig.Text),
			Help: "PEM client certificate for a control plane that requires one (mutual TLS); needs TLS; read again when it changes"},
		{Name: "VANTAGE_AGENT_TLS_KEY", Unset: "(none)", Into: envconfig.Field(&c.TLSKey, envconfig.Text),
			Help: "PEM private key of `VANTAGE_AGENT_TLS_CERT`; read again when it changes"},
		{Name: "VANTAGE_AGENT_TOKEN", Required: "is required: the agent token configured on the control plane",
			Into: envconfig.Field(&c.AgentToken, envconfig.Secret(16)),
			Help: "presented as `authorization: Bearer <token>`: an agent token (`vta_…`, bound to regions), or the shared development token"},
		{Name: "VANTAGE_REGIONS", Required: regionsRequired(), Into: envconfig.Field(&c.Regions, parseRegions),
			Help: "comma-separated regions this agent serves (`cloud:us-east-1`, …) or `all`"},
		{Name: "VANTAGE_AGENT_CONCURRENCY", Unset: "(machine)", Into: envconfig.Field(&c.Concurrency, envconfig.IntFrom(1, sizing.Max)),
			Help: "probes in flight at once, shared by all regions; the agent fetches only as many jobs as it has free slots; " +
				"unset: the lower of (RLIMIT_NOFILE - 256) / 2 and a quarter of the memory (cgroup limit or RAM) / 256 KiB, " +
				"from 32 to 65536, sized at start (see \"Probes in flight\")"},
		{Name: "VANTAGE_AGENT_ID", Unset: "hostname + random", Into: envconfig.Field(&c.AgentID, agentID), Derive: c.deriveAgentID,
			Help: "id the agent registers with (at most 128 characters, no spaces)"},
		{Name: "VANTAGE_HTTP_ADDR", Default: DefaultHTTPAddr, Into: envconfig.Field(&c.HTTPAddr, envconfig.Addr),
			Help: "listen address of `/healthz` and `/readyz` (for probes)"},
		{Name: "VANTAGE_METRICS_ADDR", Default: "127.0.0.1:9101", Into: envconfig.Field(&c.MetricsAddr, envconfig.Addr),
			Help: "listen address of `/metrics` (Prometheus), apart from the probes' listener; keep it private"},
		{Name: "VANTAGE_PPROF", Default: "false", Into: envconfig.Field(&c.Profiling, envconfig.Bool),
			Help: "`true` serves Go's profiler at `/debug/pprof/` on the metrics listener, for measuring (see \"Profiling\")"},
		{Name: "VANTAGE_ALLOW_PRIVATE_TARGETS", Default: "true", Into: envconfig.Field(&c.AllowPrivateTargets, envconfig.Bool),
			Help: "whether probes may reach private, loopback, link-local and special-purpose addresses " +
				"(`false`: refused by `pkg/netpolicy`; set `false` on hosted agents)"},
		{Name: "VANTAGE_CANARY_TARGETS", Unset: "(none)", Into: envconfig.Field(&c.CanaryTargets, canary.ParseTargets),
			Help: "canary targets probed every canary interval besides the control plane's endpoint: `http(s)://host[:port][/path]`, " +
				"`tcp://host:port`, `dns://name[@resolver[:port]]`, comma-separated; under the same address policy as checks " +
				"([detection.md](detection.md) \"Canaries\")"},
		{Name: "VANTAGE_CANARY_INTERVAL", Default: canary.DefaultInterval.String(),
			Into: envconfig.Field(&c.CanaryInterval, envconfig.DurationFrom(time.Second, time.Minute)),
			Help: "time between canary rounds (1s to 1m)"},
		{Name: "VANTAGE_MAX_CLOCK_SKEW", Default: canary.DefaultMaxClockSkew.String(),
			Into: envconfig.Field(&c.MaxClockSkew, envconfig.DurationFrom(time.Second, 30*time.Second)),
			Help: "how far the agent's clock may be off the control plane's before it reports itself unhealthy (1s to 30s)"},
		{Name: "VANTAGE_TEST_CLOCK_SKEW", Default: "0s",
			Into: envconfig.Field(&c.TestClockSkew, envconfig.DurationFrom(-24*time.Hour, 24*time.Hour)),
			Help: "**for tests only**: shifts the clock the agent compares with the control plane's by this duration (may be negative)"},
		{Name: "VANTAGE_LOG_LEVEL", Default: "info", Into: envconfig.Field(&c.LogLevel, envconfig.Level),
			Help: "`debug`, `info`, `warn` or `error`"},
		{Name: "VANTAGE_SHUTDOWN_TIMEOUT", Default: "10s", Into: envconfig.Field(&c.ShutdownTimeout, envconfig.Duration("10s")),
			Help: "on SIGTERM, how long in-flight jobs may finish before they are aborted and handed back for redelivery"},
		{Name: "VANTAGE_BROWSER_PATH", Unset: "(found)", Into: envconfig.Field(&c.BrowserPath, browserPath),
			Help: "Chromium for browser checks; unset: `chromium-headless-shell` (or `chromium`) found on `PATH`; `none`: this agent " +
				"runs no browser checks. A launcher script (Debian's `/usr/bin/chromium-headless-shell`) is replaced by the browser " +
				"it starts, which the agent starts with its own death signal: a killed agent leaves no browser running"},
		{Name: "VANTAGE_BROWSER_CONCURRENCY", Unset: "number of CPUs",
			Into: envconfig.Field(&c.BrowserConcurrency, envconfig.IntFrom(1, maxBrowserConcurrency)), Derive: c.deriveBrowserConcurrency,
			Help: "browser checks run at once (each in its own browser context); more tabs than cores only add latency to every timing"},
		{Name: "VANTAGE_BROWSER_SANDBOX", Unset: "`true` unless root", Into: envconfig.Field(&c.BrowserSandbox, browserSandbox),
			Derive: c.deriveBrowserSandbox,
			Help: "run Chromium's own sandbox; it needs user namespaces, which containers usually deny — the agent image sets `false` " +
				"and relies on the container (non-root, read-only root), a fresh browser context per check, the script worker's " +
				"limits, and the scheme guard and Landlock file view of \"Security model\""},
		{Name: "VANTAGE_BROWSER_WORKER_MEMORY_MB", Default: "512", Into: envconfig.Field(&c.BrowserWorkerMemory, workerMemory),
			Help: "memory cap (MiB, 64 to 65536) of the process that runs one browser script; its script's heap may use a quarter of it"},
	}
}
