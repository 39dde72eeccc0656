// Package config reads the agent's configuration from VANTAGE_* environment variables into one
// typed struct, with every default in one place, and validates it at start-up, naming every bad
// variable at once.
package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vantagehq/vantage/agent/internal/canary"
	"github.com/vantagehq/vantage/agent/internal/sizing"
	"github.com/vantagehq/vantage/pkg/check"
)

// Config is the agent's configuration.
type Config struct {
	NATSURL          string   // VANTAGE_NATS_URL: NATS with JetStream
	NATSCredsFile    string   // VANTAGE_NATS_CREDS: NATS credentials file (JWT + NKey), optional
	ControlPlaneAddr string   // VANTAGE_CONTROLPLANE_ADDR: the control plane's gRPC address
	AgentToken       string   // VANTAGE_AGENT_TOKEN (required): presented on the gRPC stream
	Regions          []string // VANTAGE_REGIONS (required): "cloud:…" regions served
	// Concurrency is VANTAGE_AGENT_CONCURRENCY: probes in flight at once; 0 (the default)
	// sizes it from the machine (package sizing) at start.
	Concurrency         int
	AgentID             string        // VANTAGE_AGENT_ID: stable id of this agent process
	HTTPAddr            string        // VANTAGE_HTTP_ADDR: /healthz, /readyz
	MetricsAddr         string        // VANTAGE_METRICS_ADDR: /metrics, on its own (loopback) listener
	Profiling           bool          // VANTAGE_PPROF: /debug/pprof/ on the metrics listener
	AllowPrivateTargets bool          // VANTAGE_ALLOW_PRIVATE_TARGETS: probes may reach private/loopback addresses
	LogLevel            slog.Level    // VANTAGE_LOG_LEVEL
	ShutdownTimeout     time.Duration // VANTAGE_SHUTDOWN_TIMEOUT: how long in-flight jobs may finish on SIGTERM
	// BrowserPath is VANTAGE_BROWSER_PATH: the Chromium executable; "" finds one, NoBrowser
	// runs the agent without browser checks.
	BrowserPath string
	// BrowserConcurrency is VANTAGE_BROWSER_CONCURRENCY: browser checks run at once.
	BrowserConcurrency int
	// BrowserSandbox is VANTAGE_BROWSER_SANDBOX: whether Chromium runs its own sandbox.
	BrowserSandbox bool
	// BrowserWorkerMemory is VANTAGE_BROWSER_WORKER_MEMORY_MB, in bytes: the memory cap of a
	// browser script's worker process.
	BrowserWorkerMemory int64
	// NATSAPIPrefix is VANTAGE_NATS_API_PREFIX: where the agent's NATS account sees the job
	// stream's JetStream API; "" is JetStream's own ($JS.API). A region account made by
	// `vantage-controlplane admin nats-config` sees it under that command's prefix.
	NATSAPIPrefix string

	// ControlPlaneTLS is VANTAGE_CONTROLPLANE_TLS (implied by VANTAGE_CONTROLPLANE_CA): the
	// gRPC stream uses TLS and verifies the control plane's certificate.
	ControlPlaneTLS bool
	// ControlPlaneCA is VANTAGE_CONTROLPLANE_CA: the PEM CAs the control plane's certificate
	// must chain to; empty: the system's.
	ControlPlaneCA string
	// ControlPlaneServerName is VANTAGE_CONTROLPLANE_SERVER_NAME: the name the control plane's
	// certificate must be valid for; default the host of ControlPlaneAddr.
	ControlPlaneServerName string
	// TLSCert and TLSKey are VANTAGE_AGENT_TLS_CERT and VANTAGE_AGENT_TLS_KEY: the client
	// certificate presented to a control plane that requires one (mutual TLS).
	TLSCert, TLSKey string

	// CanaryTargets is VANTAGE_CANARY_TARGETS: the operator's canary targets, probed besides
	// the control plane's endpoint (docs/detection.md "Canaries").
	CanaryTargets []canary.Target
	// CanaryInterval is VANTAGE_CANARY_INTERVAL: the time between canary rounds.
	CanaryInterval time.Duration
	// MaxClockSkew is VANTAGE_MAX_CLOCK_SKEW: how far the agent's clock may be off the
	// control plane's before it calls itself unhealthy.
	MaxClockSkew time.Duration
	// TestClockSkew is VANTAGE_TEST_CLOCK_SKEW, for tests only: shifts the clock the agent
	// compares with the control plane's.
	TestClockSkew time.Duration
}

// Defaults. Load starts from these; Vars documents them.
const (
	DefaultNATSURL          = "nats://127.0.0.1:4222"
	DefaultControlPlaneAddr = "127.0.0.1:9090"
	DefaultHTTPAddr         = ":8081"
	DefaultMetricsAddr      = "127.0.0.1:9101"
	DefaultAllowPrivate     = true
	DefaultShutdownTimeout  = 10 * time.Second
	MaxConcurrency          = sizing.Max
	// NoBrowser as VANTAGE_BROWSER_PATH runs the agent without a browser.
	NoBrowser                  = "none"
	MaxBrowserConcurrency      = 64
	DefaultBrowserWorkerMemory = 512 << 20
)

// DefaultBrowserConcurrency is the number of CPUs: more tabs than cores only add latency to
// every timing users see.
var DefaultBrowserConcurrency = runtime.NumCPU()

// Var documents one variable, for the README and `vantage-agent config`.
type Var struct{ Name, Default, Meaning string }

// Vars lists every variable the agent reads.
var Vars = []Var{
	{"VANTAGE_NATS_URL", DefaultNATSURL, "NATS server(s) with JetStream, comma-separated URLs; credentials may be in the URL"},
	{"VANTAGE_NATS_CREDS", "(none)", "path of a NATS .creds file (JWT and NKey seed) the agent authenticates to NATS with"},
	{"VANTAGE_CONTROLPLANE_ADDR", DefaultControlPlaneAddr, "host:port of the control plane's gRPC agent stream"},
	{"VANTAGE_AGENT_TOKEN", "(required)", "secret presented to the control plane as \"authorization: Bearer <token>\""},
	{"VANTAGE_REGIONS", "(required)", "comma-separated regions this agent serves (cloud:us-east-1, …) or \"all\""},
	{"VANTAGE_AGENT_CONCURRENCY", "(machine)", "probes in flight at once, shared by all regions; the agent fetches only as many jobs as it has free slots; default: the lower of (RLIMIT_NOFILE - 256) / 2 and a quarter of the memory (cgroup limit or RAM) / 256 KiB, from 32 to 65536"},
	{"VANTAGE_AGENT_ID", "(hostname-random)", "id the agent registers with; defaults to the hostname plus a random suffix"},
	{"VANTAGE_HTTP_ADDR", DefaultHTTPAddr, "listen address of /healthz and /readyz (for probes)"},
	{"VANTAGE_METRICS_ADDR", DefaultMetricsAddr, "listen address of /metrics (Prometheus), apart from the probes' listener; keep it private"},
	{"VANTAGE_PPROF", "false", "serve Go's profiler at /debug/pprof/ on the metrics listener (for measuring; keep that listener private)"},
	{"VANTAGE_ALLOW_PRIVATE_TARGETS", strconv.FormatBool(DefaultAllowPrivate), "whether probes may reach private, loopback and link-local addresses (deny on hosted agents)"},
	{"VANTAGE_LOG_LEVEL", "info", "debug, info, warn or error"},
	{"VANTAGE_SHUTDOWN_TIMEOUT", DefaultShutdownTimeout.String(), "on SIGTERM, how long in-flight jobs may finish before they are aborted and handed back for redelivery"},
	{"VANTAGE_BROWSER_PATH", "(found)", "Chromium for browser checks (chromium-headless-shell preferred); unset: found on PATH; \"none\": no browser checks on this agent"},
	{"VANTAGE_BROWSER_CONCURRENCY", "(CPUs)", "browser checks run at once, each in its own browser context; default the number of CPUs"},
	{"VANTAGE_BROWSER_SANDBOX", "(true unless root)", "run Chromium's own sandbox; it needs user namespaces, which containers usually deny: the agent image sets false and relies on the container (non-root, read-only, per-check browser contexts, the script worker's limits)"},
	{"VANTAGE_BROWSER_WORKER_MEMORY_MB", strconv.Itoa(DefaultBrowserWorkerMemory >> 20), "memory cap (MiB) of the process that runs one browser check's script; a script using more is stopped"},
	{"VANTAGE_NATS_API_PREFIX", "($JS.API)", "where the agent's NATS account sees the JetStream API; vantage.js.api for the region accounts of vantage-controlplane admin nats-config"},
	{"VANTAGE_CONTROLPLANE_TLS", "false", "use TLS on the gRPC stream and verify the control plane's certificate (implied by VANTAGE_CONTROLPLANE_CA)"},
	{"VANTAGE_CONTROLPLANE_CA", "(system CAs)", "PEM bundle of the CAs the control plane's certificate must chain to; turns TLS on; reloaded when the file changes"},
	{"VANTAGE_CONTROLPLANE_SERVER_NAME", "(host of VANTAGE_CONTROLPLANE_ADDR)", "the name (or IP) the control plane's certificate must be valid for"},
	{"VANTAGE_AGENT_TLS_CERT", "(none)", "PEM client certificate presented to a control plane that requires one (mutual TLS); needs TLS; reloaded when the file changes"},
	{"VANTAGE_AGENT_TLS_KEY", "(none)", "PEM private key of VANTAGE_AGENT_TLS_CERT"},
	{"VANTAGE_CANARY_TARGETS", "(none)", "comma-separated canary targets probed every canary interval besides the control plane's endpoint: http(s)://host[:port][/path], tcp://host:port, dns://name[@resolver[:port]]; they go through the outbound address policy like checks"},
	{"VANTAGE_CANARY_INTERVAL", canary.DefaultInterval.String(), "time between canary rounds, from 1s to 1m"},
	{"VANTAGE_MAX_CLOCK_SKEW", canary.DefaultMaxClockSkew.String(), "how far the agent's clock may be off the control plane's before the agent reports itself unhealthy, from 1s to 30s"},
	{"VANTAGE_TEST_CLOCK_SKEW", "0s", "FOR TESTS ONLY: shifts the clock the agent compares with the control plane's by this duration (may be negative)"},
}

// Load reads the configuration through getenv and validates it.
func Load(getenv func(string) string) (Config, error) {
	c := Config{
		NATSURL:             DefaultNATSURL,
		ControlPlaneAddr:    DefaultControlPlaneAddr,
		HTTPAddr:            DefaultHTTPAddr,
		MetricsAddr:         DefaultMetricsAddr,
		AllowPrivateTargets: DefaultAllowPrivate,
		LogLevel:            slog.LevelInfo,
		ShutdownTimeout:     DefaultShutdownTimeout,
		BrowserConcurrency:  DefaultBrowserConcurrency,
		BrowserWorkerMemory: DefaultBrowserWorkerMemory,
		BrowserSandbox:      os.Geteuid() != 0, // Chromium's sandbox refuses to run as root
	}
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...)))
	}

	if s := getenv("VANTAGE_NATS_URL"); s != "" {
		c.NATSURL = s
	}
	if c.NATSCredsFile = getenv("VANTAGE_NATS_CREDS"); c.NATSCredsFile != "" {
		if _, err := os.Stat(c.NATSCredsFile); err != nil {
			bad("VANTAGE_NATS_CREDS", "cannot read the credentials file: %v", err)
		}
	}
	if s := getenv("VANTAGE_CONTROLPLANE_ADDR"); s != "" {
		if host, port, err := net.SplitHostPort(s); err != nil || host == "" || port == "" {
			bad("VANTAGE_CONTROLPLANE_ADDR", "must be host:port, got %q", s)
		}
		c.ControlPlaneAddr = s
	}
	if c.AgentToken = getenv("VANTAGE_AGENT_TOKEN"); c.AgentToken == "" {
		bad("VANTAGE_AGENT_TOKEN", "is required: the agent token configured on the control plane")
	} else if len(c.AgentToken) < 16 {
		bad("VANTAGE_AGENT_TOKEN", "must be at least 16 characters")
	}
	if regions, err := parseRegions(getenv("VANTAGE_REGIONS")); err != nil {
		bad("VANTAGE_REGIONS", "%v", err)
	} else {
		c.Regions = regions
	}
	if s := getenv("VANTAGE_AGENT_CONCURRENCY"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxConcurrency {
			bad("VANTAGE_AGENT_CONCURRENCY", "must be a whole number from 1 to %d, got %q", MaxConcurrency, s)
		}
		c.Concurrency = n
	}
	if s := getenv("VANTAGE_PPROF"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			bad("VANTAGE_PPROF", "must be true or false, got %q", s)
		}
		c.Profiling = b
	}
	if c.AgentID = getenv("VANTAGE_AGENT_ID"); c.AgentID == "" {
		c.AgentID = defaultAgentID()
	} else if len(c.AgentID) > 128 || strings.ContainsFunc(c.AgentID, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		bad("VANTAGE_AGENT_ID", "must be at most 128 characters without spaces or control characters")
	}
	for _, a := range []struct {
		name string
		dst  *string
	}{{"VANTAGE_HTTP_ADDR", &c.HTTPAddr}, {"VANTAGE_METRICS_ADDR", &c.MetricsAddr}} {
		if s := getenv(a.name); s != "" {
			if _, _, err := net.SplitHostPort(s); err != nil {
				bad(a.name, "must be host:port or :port, got %q", s)
			}
			*a.dst = s
		}
	}
	if s := getenv("VANTAGE_ALLOW_PRIVATE_TARGETS"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			bad("VANTAGE_ALLOW_PRIVATE_TARGETS", "must be true or false, got %q", s)
		}
		c.AllowPrivateTargets = b
	}
	if s := getenv("VANTAGE_LOG_LEVEL"); s != "" {
		if err := c.LogLevel.UnmarshalText([]byte(s)); err != nil {
			bad("VANTAGE_LOG_LEVEL", "must be debug, info, warn or error, got %q", s)
		}
	}
	if s := getenv("VANTAGE_SHUTDOWN_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			bad("VANTAGE_SHUTDOWN_TIMEOUT", "must be a duration such as 10s, got %q", s)
		}
		c.ShutdownTimeout = d
	}
	c.BrowserPath = strings.TrimSpace(getenv("VANTAGE_BROWSER_PATH"))
	if p := c.BrowserPath; p != "" && p != NoBrowser {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			bad("VANTAGE_BROWSER_PATH", "%q is not an executable file (unset it to find Chromium, or \"none\" for no browser checks)", p)
		}
	}
	if s := getenv("VANTAGE_BROWSER_CONCURRENCY"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxBrowserConcurrency {
			bad("VANTAGE_BROWSER_CONCURRENCY", "must be a whole number from 1 to %d, got %q", MaxBrowserConcurrency, s)
		}
		c.BrowserConcurrency = n
	}
	if s := getenv("VANTAGE_BROWSER_SANDBOX"); s != "" {
		on, err := strconv.ParseBool(s)
		switch {
		case err != nil:
			bad("VANTAGE_BROWSER_SANDBOX", "must be true or false, got %q", s)
		case on && os.Geteuid() == 0:
			bad("VANTAGE_BROWSER_SANDBOX", "Chromium's sandbox cannot run as root: run the agent as another user or set false")
		}
		c.BrowserSandbox = on
	}
	if s := getenv("VANTAGE_BROWSER_WORKER_MEMORY_MB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 64 || n > 65536 {
			bad("VANTAGE_BROWSER_WORKER_MEMORY_MB", "must be a whole number of MiB from 64 to 65536, got %q", s)
		}
		c.BrowserWorkerMemory = int64(n) << 20
	}
	loadChannel(getenv, &c, bad)
	loadCanaries(getenv, &c, bad)
	if len(errs) > 0 {
		return c, fmt.Errorf("invalid configuration:%w", joinIndented(errs))
	}
	return c, nil
}

// loadChannel reads the TLS of the gRPC stream and the NATS API prefix.
func loadChannel(getenv func(string) string, c *Config, bad func(name, format string, args ...any)) {
	if s := getenv("VANTAGE_NATS_API_PREFIX"); s != "" {
		if strings.ContainsAny(s, "*> \t") || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") {
			bad("VANTAGE_NATS_API_PREFIX", "must be a subject without wildcards, spaces or a leading or trailing dot, got %q", s)
		}
		c.NATSAPIPrefix = s
	}
	if s := getenv("VANTAGE_CONTROLPLANE_TLS"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			bad("VANTAGE_CONTROLPLANE_TLS", "must be true or false, got %q", s)
		}
		c.ControlPlaneTLS = b
	}
	c.ControlPlaneCA = getenv("VANTAGE_CONTROLPLANE_CA")
	c.TLSCert, c.TLSKey = getenv("VANTAGE_AGENT_TLS_CERT"), getenv("VANTAGE_AGENT_TLS_KEY")
	if c.ControlPlaneCA != "" {
		c.ControlPlaneTLS = true
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		bad("VANTAGE_AGENT_TLS_CERT", "and VANTAGE_AGENT_TLS_KEY go together")
	}
	if c.TLSCert != "" && !c.ControlPlaneTLS {
		bad("VANTAGE_AGENT_TLS_CERT", "needs TLS (VANTAGE_CONTROLPLANE_CA or VANTAGE_CONTROLPLANE_TLS=true): client certificates are a part of TLS")
	}
	for _, f := range []struct{ name, path string }{{"VANTAGE_CONTROLPLANE_CA", c.ControlPlaneCA},
		{"VANTAGE_AGENT_TLS_CERT", c.TLSCert}, {"VANTAGE_AGENT_TLS_KEY", c.TLSKey}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			bad(f.name, "cannot read the file: %v", err)
		}
	}
	if c.ControlPlaneServerName = getenv("VANTAGE_CONTROLPLANE_SERVER_NAME"); c.ControlPlaneServerName == "" {
		c.ControlPlaneServerName, _, _ = net.SplitHostPort(c.ControlPlaneAddr)
	}
}

// loadCanaries reads the canaries and the clock bounds.
func loadCanaries(getenv func(string) string, c *Config, bad func(name, format string, args ...any)) {
	c.CanaryInterval, c.MaxClockSkew = canary.DefaultInterval, canary.DefaultMaxClockSkew
	targets, err := canary.ParseTargets(getenv("VANTAGE_CANARY_TARGETS"))
	if err != nil {
		bad("VANTAGE_CANARY_TARGETS", "%v", err)
	}
	c.CanaryTargets = targets
	for _, d := range []struct {
		name     string
		dst      *time.Duration
		min, max time.Duration
	}{{"VANTAGE_CANARY_INTERVAL", &c.CanaryInterval, time.Second, time.Minute},
		{"VANTAGE_MAX_CLOCK_SKEW", &c.MaxClockSkew, time.Second, 30 * time.Second},
		{"VANTAGE_TEST_CLOCK_SKEW", &c.TestClockSkew, -24 * time.Hour, 24 * time.Hour}} {
		s := getenv(d.name)
		if s == "" {
			continue
		}
		v, err := time.ParseDuration(s)
		if err != nil || v < d.min || v > d.max {
			bad(d.name, "must be a duration from %s to %s, got %q", d.min, d.max, s)
			continue
		}
		*d.dst = v
	}
}

// parseRegions accepts "all" or a comma-separated list of check.Regions; it returns them
// de-duplicated in the order given.
func parseRegions(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("is required: comma-separated regions (%s) or \"all\"", strings.Join(check.Regions, ", "))
	}
	if strings.EqualFold(s, "all") {
		return slices.Clone(check.Regions), nil
	}
	var out, unknown []string
	for _, r := range strings.Split(s, ",") {
		r = strings.TrimSpace(r)
		if !check.IsRegion(r) {
			unknown = append(unknown, strconv.Quote(r))
			continue
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("unknown region %s; known: %s or \"all\"", strings.Join(unknown, ", "), strings.Join(check.Regions, ", "))
	}
	return out, nil
}

// defaultAgentID is the hostname plus a random suffix, so two agents on one host (or two
// containers sharing a hostname) never register under the same id.
func defaultAgentID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "agent"
	}
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return host + "-" + hex.EncodeToString(b[:])
}

func joinIndented(errs []error) error {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString("\n  ")
		b.WriteString(e.Error())
	}
	return errors.New(b.String())
}
