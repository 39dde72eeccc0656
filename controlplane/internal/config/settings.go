package config

import (
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/secrets"
	"github.com/vantagehq/vantage/pkg/envconfig"
)

// Vars lists every variable the control plane reads, for `vantage-controlplane config` and the
// documentation.
func Vars() []envconfig.Var { return vars(new(Config)) }

// vars declares every setting once, bound to its field of c: name, default, meaning and the
// parser of its value. Load, `vantage-controlplane config` and the control plane's table in
// docs/operations.md (go test ./controlplane/internal/config -run TestOperationsDoc -update)
// come from it. A new setting is a field of Config and a row here.
func vars(c *Config) []envconfig.Var {
	return []envconfig.Var{
		{Name: "VANTAGE_DATABASE_URL", Into: envconfig.Field(&c.DatabaseURL, envconfig.Text),
			Required: "is required (e.g. postgres://postgres@127.0.0.1:5432/vantage?sslmode=disable)",
			Help:     "PostgreSQL URL, e.g. `postgres://postgres@127.0.0.1:5432/vantage?sslmode=disable`"},
		{Name: "VANTAGE_SECRET_KEY", Into: envconfig.Field(&c.SecretKey, secrets.ParseKey),
			Required: "is required: base64 of 32 random bytes (openssl rand -base64 32)",
			Help: "base64 of 32 random bytes (`openssl rand -base64 32`); encrypts variable values and check passwords at rest; " +
				"every replica must have the same (checked at start-up against the database's key fingerprint)"},
		{Name: "VANTAGE_SECRET_KEY_PREVIOUS", Unset: "(unset)", Into: envconfig.Field(&c.PreviousKeys, previousKeys),
			Help: "while rotating the key: the old key(s), comma-separated; values sealed with them still open, job signatures " +
				"made with them still verify (then run `admin reencrypt-secrets`; see \"The secret key\")"},
		{Name: "VANTAGE_HTTP_ADDR", Default: ":8080", Into: envconfig.Field(&c.HTTPAddr, envconfig.Addr),
			Help: "listen address of the REST API, the status pages, `/healthz` and `/readyz` (probes stay here)"},
		{Name: "VANTAGE_METRICS_ADDR", Default: "127.0.0.1:9100", Into: envconfig.Field(&c.MetricsAddr, envconfig.Addr),
			Help: "listen address of `/metrics` (Prometheus), never the public API's; keep it private"},
		{Name: "VANTAGE_PPROF", Default: "false", Into: envconfig.Field(&c.Profiling, envconfig.Bool),
			Help: "`true` serves Go's profiler at `/debug/pprof/` on the metrics listener, for measuring (see \"Profiling\")"},
		{Name: "VANTAGE_GRPC_ADDR", Default: ":9090", Into: envconfig.Field(&c.GRPCAddr, envconfig.Addr),
			Help: "listen address of the agents' gRPC stream"},
		{Name: "VANTAGE_AGENT_TOKEN", Unset: "(unset)", Into: envconfig.Field(&c.AgentToken, envconfig.Secret(16)),
			Help: "a shared token any agent may present, for any region (16+ characters): local development (`make run` sets it). " +
				"Unset, agents need tokens of their own (`admin create-agent-token`): the production setting"},
		{Name: "VANTAGE_GRPC_TLS_CERT", Unset: "(unset: plaintext)", Into: envconfig.Field(&c.GRPCTLSCert, envconfig.Text),
			Help: "PEM certificate chain of the agents' gRPC stream; with `VANTAGE_GRPC_TLS_KEY` turns TLS on. " +
				"Read again when the file changes (a rotated Secret)"},
		{Name: "VANTAGE_GRPC_TLS_KEY", Unset: "(unset)", Into: envconfig.Field(&c.GRPCTLSKey, envconfig.Text),
			Help: "PEM private key of `VANTAGE_GRPC_TLS_CERT`; read again when it changes"},
		{Name: "VANTAGE_GRPC_CLIENT_CA", Unset: "(unset)", Into: envconfig.Field(&c.GRPCClientCA, envconfig.Text),
			Help: "PEM bundle of CAs: agents must present a client certificate signed by one of them (mutual TLS); " +
				"needs `VANTAGE_GRPC_TLS_CERT`; read again when it changes"},
		// Below 10s agents would spend more time reconnecting than sending.
		{Name: "VANTAGE_GRPC_MAX_CONNECTION_AGE", Default: "5m", Into: envconfig.Field(&c.GRPCMaxAge, envconfig.DurationAtLeast(10*time.Second, "5m")),
			Help: "an agent's connection is sent GOAWAY after this long (±10 % jitter; at least `10s`): the agent hands its stream " +
				"over — every result sent is acked first — and reconnects through its address list or load balancer, so agents " +
				"spread again over the replicas within this after one returns (see \"Agents all on one replica\")"},
		{Name: "VANTAGE_REPLICA_NAME", Unset: "host name", Into: envconfig.Field(&c.ReplicaName, envconfig.Text), Derive: c.deriveReplicaName,
			Help: "this replica's name where `GET /v1/agents` says which replica an agent is connected to"},
		{Name: "VANTAGE_REGION_UNSERVED_GRACE", Default: "2m", Into: envconfig.Field(&c.UnservedGrace, envconfig.Duration("2m")),
			Help: "how long a region that active checks use may have no live agent before `agent.region_unserved` goes out"},
		{Name: "VANTAGE_PROBE_HEALTH_WINDOW", Default: "2m", Into: envconfig.Field(&c.ProbeHealthWindow, envconfig.DurationAtLeast(10*time.Second, "2m")),
			Help: "probe health: how far back the results are that judge whether a region's probes are broken ([detection.md](detection.md))"},
		{Name: "VANTAGE_PROBE_HEALTH_MIN_CHECKS", Default: "5", Into: envconfig.Field(&c.ProbeHealthMinChecks, envconfig.IntAtLeast(1)),
			Help: "probe health: checks a region must fail while another region passes them (and at least half of those it probed) to be unhealthy"},
		{Name: "VANTAGE_PROBE_HEALTH_MIN_ORGS", Default: "2", Into: envconfig.Field(&c.ProbeHealthMinOrgs, envconfig.IntAtLeast(1)),
			Help: "probe health: organizations those checks must belong to"},
		{Name: "VANTAGE_CANARY_URL", Unset: "`VANTAGE_PUBLIC_URL` + `/healthz`", Into: envconfig.Field(&c.CanaryURL, canaryURL), Derive: c.deriveCanaryURL,
			Help: "the control plane's public endpoint, sent to agents at registration, which they probe among their canaries; " +
				"`none`: not probed ([detection.md](detection.md) \"Canaries\")"},
		{Name: "VANTAGE_CUSTOM_DOMAIN_RECHECK", Default: "1h", Into: envconfig.Field(&c.CustomDomainRecheck, envconfig.PositiveDuration("30s")),
			Help: "how often the TXT record of a status page's verified custom domain is looked up again " +
				"(every replica scans every 15 s for domains due; each domain is looked up by one)"},
		{Name: "VANTAGE_CUSTOM_DOMAIN_GRACE", Default: "72h", Into: envconfig.Field(&c.CustomDomainGrace, envconfig.PositiveDuration("30s")),
			Help: "how long that record may be missing (or its lookup fail) before the domain is no longer verified: `PENDING` again, " +
				"the page no longer answers on it, and `status_page.custom_domain_unverified` goes out"},
		{Name: "VANTAGE_JUDGE", Default: JudgeOwner, Into: envconfig.Field(&c.Judge, judgeMode),
			Help: "where runs are judged: `owner`, in memory by the replica that owns the check's shard, which ingest tells of " +
				"each final attempt over NATS (`vantage.finals.<shard>`) after storing it; `ingest`, in the transaction that " +
				"stores their results, on the replica whose agent sent them, with the checks locked"},
		{Name: "VANTAGE_NATS_URL", Unset: "(embedded)", Into: envconfig.Field(&c.NATSURL, envconfig.Text),
			Help: "NATS with JetStream, e.g. `nats://127.0.0.1:4222`; unset starts an embedded server (local runs)"},
		{Name: "VANTAGE_NATS_STORE_DIR", Default: ".vantage/nats", Into: envconfig.Field(&c.NATSStoreDir, envconfig.Text),
			Help: "JetStream storage directory of the embedded server"},
		// JetStream allows at most 5 replicas of a stream.
		{Name: "VANTAGE_NATS_STREAM_REPLICAS", Default: "1", Into: envconfig.Field(&c.StreamReplicas, envconfig.IntFrom(1, 5)),
			Help: "replicas (1–5) of the JetStream job stream and its consumers: 3 on a 3-member NATS cluster, so that losing a member " +
				"stops no job flow; an existing stream is scaled at start-up; 1 with the embedded server"},
		{Name: "VANTAGE_NATS_EMBEDDED_ADDR", Default: "127.0.0.1:4222", Into: envconfig.Field(&c.NATSEmbeddedAddr, embeddedAddr),
			Help: "where the embedded server listens; loopback only (port 0: a free one)"},
		{Name: "VANTAGE_NATS_EMBEDDED_USER", Default: "vantage", Into: envconfig.Field(&c.NATSEmbeddedUser, embeddedUser),
			Help: "the user clients of the embedded server authenticate as"},
		{Name: "VANTAGE_NATS_EMBEDDED_PASSWORD", Unset: "(random per start)", Into: envconfig.Field(&c.NATSEmbeddedPassword, envconfig.Secret(16)),
			Help: "its password (16+ characters); set it so agents can connect with `nats://user:password@host:port`"},
		{Name: "VANTAGE_BOOTSTRAP_TOKEN", Unset: "(unset)", Into: envconfig.Field(&c.BootstrapToken, envconfig.Secret(16)),
			Help: "when set (16+ characters), start-up ensures a paid default organization with an all-permission API token whose secret is this value"},
		{Name: "VANTAGE_RESULT_RETENTION_DAYS", Default: "30",
			Into: envconfig.Field(&c.RetentionDays, envconfig.IntWhere(func(n int) bool { return n >= 1 && n <= 3650 }, "a whole number of days from 1 to 3650")),
			Help: "days of raw results kept (older daily partitions are dropped)"},
		{Name: "VANTAGE_LOG_LEVEL", Default: "info", Into: envconfig.Field(&c.LogLevel, envconfig.Level),
			Help: "`debug`, `info`, `warn` or `error`"},
		{Name: "VANTAGE_TRUSTED_PROXIES", Unset: "(none)", Into: envconfig.Field(&c.TrustedProxies, trustedProxies),
			Help: "comma-separated IPs/CIDRs of reverse proxies whose `X-Forwarded-For` is trusted"},
		{Name: "VANTAGE_SHUTDOWN_TIMEOUT", Default: "15s", Into: envconfig.Field(&c.ShutdownTimeout, envconfig.PositiveDuration("15s")),
			Help: "grace period on SIGTERM for in-flight work"},
		{Name: "VANTAGE_PING_ADDR", Default: ":8082", Into: envconfig.Field(&c.PingAddr, envconfig.Addr),
			Help: "listen address of the public heartbeat pings (`GET|POST /{heartbeat_id}`, `/start`, `/fail`)"},
		{Name: "VANTAGE_SMTP_URL", Unset: "(unset)", Into: envconfig.Field(&c.SMTPURL, smtpURL),
			Help: "SMTP for alert and subscriber e-mail, `smtp://user:pass@host:port` or `smtps://…`; unset records e-mails as skipped"},
		{Name: "VANTAGE_MAIL_FROM", Default: "Vantage <vantage@localhost>", Into: envconfig.Field(&c.MailFrom, mailFrom),
			Help: "sender of every e-mail"},
		{Name: "VANTAGE_PUBLIC_URL", Default: "http://localhost:8080", Into: envconfig.Field(&c.PublicURL, publicURL),
			Help: "base of links Vantage sends (confirmations, unsubscribes, status pages) and of the public badge URLs the API answers"},
		{Name: "VANTAGE_STATUS_DOMAIN", Unset: "(unset)", Into: envconfig.Field(&c.StatusDomain, statusDomain),
			Help: "status pages also answer on `{subdomain}.{domain}` by Host header"},
		{Name: "VANTAGE_ALLOW_PRIVATE_TARGETS", Default: "true", Into: envconfig.Field(&c.AllowPrivate, envconfig.Bool),
			Help: "whether webhook and integration deliveries may reach loopback, private, link-local and special-purpose addresses " +
				"(`false`: refused by `pkg/netpolicy`; set `false` on a hosted deployment; the agent has the same switch for probes)"},
		{Name: "VANTAGE_HTTP_READ_TIMEOUT", Default: "30s", Into: envconfig.Field(&c.HTTPReadTimeout, envconfig.PositiveDuration("30s")),
			Help: "every HTTP listener (API, pings, metrics): time to read a whole request, body included — a client that withholds its body is cut off"},
		{Name: "VANTAGE_HTTP_WRITE_TIMEOUT", Default: "60s", Into: envconfig.Field(&c.HTTPWriteTimeout, envconfig.PositiveDuration("30s")),
			Help: "every HTTP listener: time to handle a request and write its answer"},
		{Name: "VANTAGE_HTTP_IDLE_TIMEOUT", Default: "120s", Into: envconfig.Field(&c.HTTPIdleTimeout, envconfig.PositiveDuration("30s")),
			Help: "every HTTP listener: an idle keep-alive connection is closed after this"},
		{Name: "VANTAGE_MAX_CONNS_PER_CLIENT", Default: "64",
			Into: envconfig.Field(&c.MaxConnsPerClient, envconfig.IntWhere(func(n int) bool { return n >= 0 }, "a whole number, 0 for no bound")),
			Help: "open connections one client address may hold per HTTP listener (more are closed at once; `VANTAGE_TRUSTED_PROXIES` are exempt); `0`: no bound"},
		{Name: "VANTAGE_CONSOLE_SESSION_TTL", Default: "12h", Into: envconfig.Field(&c.ConsoleSessionTTL, envconfig.PositiveDuration("30s")),
			Help: "how long a web console session lasts after sign-in; never longer than the token it was made from ([console.md](console.md#signing-in))"},
		{Name: "VANTAGE_CONSOLE_LINK_TTL", Default: "15m", Into: envconfig.Field(&c.ConsoleLinkTTL, envconfig.PositiveDuration("30s")),
			Help: "how long a one-time console sign-in link (e-mailed; `admin console-link` has its own `--expires`) stays valid"},
		{Name: "VANTAGE_OIDC_ISSUER", Unset: "(unset)", Into: envconfig.Field(&c.OIDCIssuer, envconfig.Text),
			Help: "the OpenID Connect provider the console's users may sign in with (https; http only on loopback); register " +
				"`{VANTAGE_PUBLIC_URL}/console/signin/oidc/callback` as the redirect URL ([console.md](console.md#signing-in))"},
		{Name: "VANTAGE_OIDC_CLIENT_ID", Unset: "(unset)", Into: envconfig.Field(&c.OIDCClientID, envconfig.Text),
			Help: "the console's client id at that provider (required with the issuer)"},
		{Name: "VANTAGE_OIDC_CLIENT_SECRET", Unset: "(unset)", Into: envconfig.Field(&c.OIDCClientSecret, envconfig.Text),
			Help: "its client secret"},
		{Name: "VANTAGE_REQUEST_TIMEOUT", Default: "10s", Into: envconfig.Field(&c.RequestTimeout, envconfig.PositiveDuration("30s")),
			Help: "deadline of every API request: past it (a frozen database) the answer is a 503 failure envelope; below the write timeout"},
	}
}
