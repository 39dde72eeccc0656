// Package config reads the control plane's configuration from VANTAGE_* environment variables
// into one typed struct, with every default in one place, and validates it at start-up, naming
// every bad variable at once.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/secrets"
)

// Config is the control plane's configuration.
type Config struct {
	DatabaseURL     string        // VANTAGE_DATABASE_URL (required): PostgreSQL connection URL
	HTTPAddr        string        // VANTAGE_HTTP_ADDR, default ":8080": REST API, status pages, /healthz, /readyz
	GRPCAddr        string        // VANTAGE_GRPC_ADDR, default ":9090": the agents' gRPC stream
	SecretKey       []byte        // VANTAGE_SECRET_KEY (required): base64 of 32 random bytes; seals secrets at rest
	PreviousKeys    [][]byte      // VANTAGE_SECRET_KEY_PREVIOUS, default none: comma-separated keys being rotated away from
	BootstrapToken  string        // VANTAGE_BOOTSTRAP_TOKEN: ensures a default org and an all-permission token with this secret
	LogLevel        slog.Level    // VANTAGE_LOG_LEVEL, default "info": debug, info, warn, error
	TrustedProxies  []string      // VANTAGE_TRUSTED_PROXIES, default none: CIDRs/IPs whose X-Forwarded-For is believed
	ShutdownTimeout time.Duration // VANTAGE_SHUTDOWN_TIMEOUT, default 15s: grace period for in-flight requests
	NATSURL         string        // VANTAGE_NATS_URL, default "": NATS with JetStream; empty starts an embedded server
	NATSStoreDir    string        // VANTAGE_NATS_STORE_DIR, default ".vantage/nats": JetStream storage of the embedded server
	StreamReplicas  int           // VANTAGE_NATS_STREAM_REPLICAS, default 1: replicas of the job stream and its consumers (3 on a 3-member cluster)
	AgentToken      string        // VANTAGE_AGENT_TOKEN, default "": a shared token any agent may present, for any region (local development); empty: agent tokens only
	RetentionDays   int           // VANTAGE_RESULT_RETENTION_DAYS, default 30: days of raw results kept
	PingAddr        string        // VANTAGE_PING_ADDR, default ":8082": the public heartbeat ping listener
	SMTPURL         string        // VANTAGE_SMTP_URL, default "": smtp://user:pass@host:port (smtps:// for implicit TLS); empty disables e-mail
	MailFrom        string        // VANTAGE_MAIL_FROM, default "Vantage <vantage@localhost>": sender of every e-mail
	PublicURL       string        // VANTAGE_PUBLIC_URL, default "http://localhost:8080": base of links in e-mails (confirm, unsubscribe) and of badge URLs
	StatusDomain    string        // VANTAGE_STATUS_DOMAIN, default "": pages answer on {subdomain}.{domain} when set
	AllowPrivate    bool          // VANTAGE_ALLOW_PRIVATE_TARGETS, default true: webhooks may reach private and loopback addresses

	MetricsAddr       string        // VANTAGE_METRICS_ADDR, default "127.0.0.1:9100": /metrics, on its own listener
	Profiling         bool          // VANTAGE_PPROF, default false: /debug/pprof/ on the metrics listener
	HTTPReadTimeout   time.Duration // VANTAGE_HTTP_READ_TIMEOUT, default 30s: reading a whole request, body included
	HTTPWriteTimeout  time.Duration // VANTAGE_HTTP_WRITE_TIMEOUT, default 60s: handling a request and writing its answer
	HTTPIdleTimeout   time.Duration // VANTAGE_HTTP_IDLE_TIMEOUT, default 120s: an idle keep-alive connection is closed
	MaxConnsPerClient int           // VANTAGE_MAX_CONNS_PER_CLIENT, default 64: open connections per client address and listener; 0: no bound
	RequestTimeout    time.Duration // VANTAGE_REQUEST_TIMEOUT, default 10s: deadline of every API request (then 503)

	NATSEmbeddedAddr     string // VANTAGE_NATS_EMBEDDED_ADDR, default "127.0.0.1:4222": loopback address of the embedded NATS server
	NATSEmbeddedUser     string // VANTAGE_NATS_EMBEDDED_USER, default "vantage": user clients of the embedded server authenticate as
	NATSEmbeddedPassword string // VANTAGE_NATS_EMBEDDED_PASSWORD, default random per start: that user's password (16+ characters)

	GRPCTLSCert   string        // VANTAGE_GRPC_TLS_CERT, default "": PEM certificate chain of the agents' gRPC stream; empty: plaintext
	GRPCTLSKey    string        // VANTAGE_GRPC_TLS_KEY, default "": its private key
	GRPCClientCA  string        // VANTAGE_GRPC_CLIENT_CA, default "": PEM CAs whose client certificates agents must present (mutual TLS)
	GRPCMaxAge    time.Duration // VANTAGE_GRPC_MAX_CONNECTION_AGE, default 5m: an agent connection is asked to reconnect (GOAWAY) after this, so agents spread again over the replicas
	ReplicaName   string        // VANTAGE_REPLICA_NAME, default the host name: this replica's name in GET /v1/agents
	UnservedGrace time.Duration // VANTAGE_REGION_UNSERVED_GRACE, default 2m: how long a region checks use may lack agents before agent.region_unserved

	// Probe health (docs/detection.md): when a region's probes are judged broken.
	ProbeHealthWindow    time.Duration // VANTAGE_PROBE_HEALTH_WINDOW, default 2m: results looked at
	ProbeHealthMinChecks int           // VANTAGE_PROBE_HEALTH_MIN_CHECKS, default 5: checks failing only there
	ProbeHealthMinOrgs   int           // VANTAGE_PROBE_HEALTH_MIN_ORGS, default 2: of this many organizations
	// CanaryURL is VANTAGE_CANARY_URL, default VANTAGE_PUBLIC_URL + "/healthz": the control
	// plane's public endpoint that agents probe among their canaries; "none": not probed.
	CanaryURL string

	// Custom domains of status pages: verified ones keep proving their TXT record.
	CustomDomainRecheck time.Duration // VANTAGE_CUSTOM_DOMAIN_RECHECK, default 1h: how often a verified domain's record is looked up again
	CustomDomainGrace   time.Duration // VANTAGE_CUSTOM_DOMAIN_GRACE, default 72h: how long it may be missing before the domain is no longer verified

	// The web console's sign-in (docs/console.md).
	ConsoleSessionTTL time.Duration // VANTAGE_CONSOLE_SESSION_TTL, default 12h: how long a console session lasts after sign-in
	ConsoleLinkTTL    time.Duration // VANTAGE_CONSOLE_LINK_TTL, default 15m: how long a one-time sign-in link stays valid
	OIDCIssuer        string        // VANTAGE_OIDC_ISSUER, default "": the OpenID Connect provider users sign in with; empty: none
	OIDCClientID      string        // VANTAGE_OIDC_CLIENT_ID: the console's client id at that provider
	OIDCClientSecret  string        // VANTAGE_OIDC_CLIENT_SECRET: its client secret
}

// Var documents one variable, for the README and `vantage-controlplane config`.
type Var struct{ Name, Default, Meaning string }

// Vars lists every variable the control plane reads.
var Vars = []Var{
	{"VANTAGE_DATABASE_URL", "(required)", "PostgreSQL URL, e.g. postgres://postgres@127.0.0.1:5432/vantage?sslmode=disable"},
	{"VANTAGE_SECRET_KEY", "(required)", "base64 of 32 random bytes (openssl rand -base64 32); encrypts variable values and check passwords; every replica must have the same (checked at start-up against the database's key fingerprint)"},
	{"VANTAGE_SECRET_KEY_PREVIOUS", "(unset)", "while rotating VANTAGE_SECRET_KEY: the old key(s), comma-separated; values sealed with them still open (then run admin reencrypt-secrets)"},
	{"VANTAGE_HTTP_ADDR", ":8080", "listen address of the REST API, the status pages, /healthz and /readyz"},
	{"VANTAGE_METRICS_ADDR", "127.0.0.1:9100", "listen address of /metrics (Prometheus), apart from the public API; keep it private"},
	{"VANTAGE_PPROF", "false", "serve Go's profiler at /debug/pprof/ on the metrics listener (for measuring; keep that listener private)"},
	{"VANTAGE_GRPC_ADDR", ":9090", "listen address of the agents' gRPC stream"},
	{"VANTAGE_BOOTSTRAP_TOKEN", "(unset)", "when set (16+ characters), start-up ensures a paid default organization with an all-permission API token whose secret is this value"},
	{"VANTAGE_LOG_LEVEL", "info", "debug, info, warn or error"},
	{"VANTAGE_TRUSTED_PROXIES", "(none)", "comma-separated IPs/CIDRs of reverse proxies whose X-Forwarded-For is trusted"},
	{"VANTAGE_SHUTDOWN_TIMEOUT", "15s", "how long SIGTERM waits for in-flight work"},
	{"VANTAGE_NATS_URL", "(embedded)", "NATS server with JetStream, e.g. nats://127.0.0.1:4222; unset starts an embedded server (local runs)"},
	{"VANTAGE_NATS_STORE_DIR", ".vantage/nats", "JetStream storage directory of the embedded NATS server"},
	{"VANTAGE_NATS_STREAM_REPLICAS", "1", "replicas of the JetStream job stream and its consumers, 1 to 5: 3 on a 3-member NATS cluster, so that losing one member stops nothing (an existing stream is scaled at start-up); 1 with the embedded server"},
	{"VANTAGE_NATS_EMBEDDED_ADDR", "127.0.0.1:4222", "listen address of the embedded NATS server; loopback only (port 0 picks a free one)"},
	{"VANTAGE_NATS_EMBEDDED_USER", "vantage", "user that clients of the embedded NATS server authenticate as"},
	{"VANTAGE_NATS_EMBEDDED_PASSWORD", "(random per start)", "password of that user (16+ characters); set it so that local agents can connect (nats://user:password@host:port)"},
	{"VANTAGE_AGENT_TOKEN", "(unset)", "a shared token any agent may present, for any region (16+ characters): for local development; unset, agents need tokens of their own (admin create-agent-token)"},
	{"VANTAGE_GRPC_TLS_CERT", "(unset)", "PEM certificate chain of the agents' gRPC stream; with VANTAGE_GRPC_TLS_KEY turns TLS on (unset: plaintext); reloaded when the file changes"},
	{"VANTAGE_GRPC_TLS_KEY", "(unset)", "PEM private key of VANTAGE_GRPC_TLS_CERT"},
	{"VANTAGE_GRPC_CLIENT_CA", "(unset)", "PEM bundle of CAs: when set, agents must present a client certificate signed by one of them (mutual TLS); needs VANTAGE_GRPC_TLS_CERT"},
	{"VANTAGE_GRPC_MAX_CONNECTION_AGE", "5m", "an agent's connection is asked to reconnect (gRPC GOAWAY, ±10 % jitter) after this long; the agent hands its stream over without losing a result and reconnects through its address list or load balancer, so agents spread again over the replicas within this after one returns (at least 10s)"},
	{"VANTAGE_REPLICA_NAME", "(host name)", "this replica's name where GET /v1/agents says which replica an agent is connected to"},
	{"VANTAGE_REGION_UNSERVED_GRACE", "2m", "how long a region that active checks use may have no live agent before agent.region_unserved is sent"},
	{"VANTAGE_PROBE_HEALTH_WINDOW", "2m", "probe health: how far back the results are that judge whether a region's probes are broken (docs/detection.md)"},
	{"VANTAGE_PROBE_HEALTH_MIN_CHECKS", "5", "probe health: checks a region must fail while another region passes them (and at least half of those it probed) to be unhealthy"},
	{"VANTAGE_PROBE_HEALTH_MIN_ORGS", "2", "probe health: organizations those checks must belong to"},
	{"VANTAGE_CANARY_URL", "(VANTAGE_PUBLIC_URL/healthz)", "the control plane's public endpoint, sent to agents at registration, which they probe among their canaries; \"none\": not probed"},
	{"VANTAGE_CUSTOM_DOMAIN_RECHECK", "1h", "how often the TXT record of a status page's verified custom domain is looked up again"},
	{"VANTAGE_CUSTOM_DOMAIN_GRACE", "72h", "how long that record may be missing before the domain is no longer verified (PENDING again, status_page.custom_domain_unverified)"},
	{"VANTAGE_CONSOLE_SESSION_TTL", "12h", "how long a web console session lasts after sign-in (never longer than the token it was made from)"},
	{"VANTAGE_CONSOLE_LINK_TTL", "15m", "how long a one-time console sign-in link (admin console-link, e-mailed links) stays valid"},
	{"VANTAGE_OIDC_ISSUER", "(unset)", "OpenID Connect issuer URL (https; http only on loopback) the console's users may sign in with; its redirect URL is {VANTAGE_PUBLIC_URL}/console/signin/oidc/callback"},
	{"VANTAGE_OIDC_CLIENT_ID", "(unset)", "the console's OpenID Connect client id (required with VANTAGE_OIDC_ISSUER)"},
	{"VANTAGE_OIDC_CLIENT_SECRET", "(unset)", "the console's OpenID Connect client secret"},
	{"VANTAGE_RESULT_RETENTION_DAYS", "30", "days of raw check results kept; older daily partitions are dropped"},
	{"VANTAGE_PING_ADDR", ":8082", "listen address of the public heartbeat ping endpoint (GET|POST /{heartbeat_id})"},
	{"VANTAGE_SMTP_URL", "(unset)", "SMTP server for e-mail, smtp://user:pass@host:port or smtps://...; unset disables e-mail"},
	{"VANTAGE_MAIL_FROM", "Vantage <vantage@localhost>", "sender address of every e-mail"},
	{"VANTAGE_PUBLIC_URL", "http://localhost:8080", "public base URL used in links Vantage sends (confirmations, unsubscribes, status pages)"},
	{"VANTAGE_STATUS_DOMAIN", "(unset)", "when set, status pages also answer on {subdomain}.{domain} by Host header"},
	{"VANTAGE_ALLOW_PRIVATE_TARGETS", "true", "whether webhook deliveries may reach loopback, private and link-local addresses (set false on a hosted deployment)"},
	{"VANTAGE_HTTP_READ_TIMEOUT", "30s", "HTTP listeners (API, pings, metrics): time to read a whole request, body included; slower clients are cut off"},
	{"VANTAGE_HTTP_WRITE_TIMEOUT", "60s", "HTTP listeners: time to handle a request and write its answer"},
	{"VANTAGE_HTTP_IDLE_TIMEOUT", "120s", "HTTP listeners: an idle keep-alive connection is closed after this"},
	{"VANTAGE_MAX_CONNS_PER_CLIENT", "64", "open connections one client address may hold per HTTP listener (trusted proxies are exempt); 0 means no bound"},
	{"VANTAGE_REQUEST_TIMEOUT", "10s", "deadline of every API request; a request that needs longer (a frozen database) is answered 503"},
}

// Load reads the configuration through getenv and validates it.
func Load(getenv func(string) string) (Config, error) {
	c := Config{HTTPAddr: ":8080", GRPCAddr: ":9090", LogLevel: slog.LevelInfo, ShutdownTimeout: 15 * time.Second,
		NATSStoreDir: ".vantage/nats", StreamReplicas: 1, RetentionDays: 30, PingAddr: ":8082",
		MailFrom: "Vantage <vantage@localhost>", PublicURL: "http://localhost:8080", AllowPrivate: true,
		MetricsAddr: "127.0.0.1:9100", HTTPReadTimeout: 30 * time.Second, HTTPWriteTimeout: 60 * time.Second,
		HTTPIdleTimeout: 120 * time.Second, MaxConnsPerClient: 64, RequestTimeout: 10 * time.Second,
		NATSEmbeddedAddr: "127.0.0.1:4222", NATSEmbeddedUser: "vantage", UnservedGrace: 2 * time.Minute, GRPCMaxAge: 5 * time.Minute,
		ProbeHealthWindow: 2 * time.Minute, ProbeHealthMinChecks: 5, ProbeHealthMinOrgs: 2,
		CustomDomainRecheck: time.Hour, CustomDomainGrace: 72 * time.Hour,
		ConsoleSessionTTL: 12 * time.Hour, ConsoleLinkTTL: 15 * time.Minute}
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...)))
	}

	if c.DatabaseURL = getenv("VANTAGE_DATABASE_URL"); c.DatabaseURL == "" {
		bad("VANTAGE_DATABASE_URL", "is required (e.g. postgres://postgres@127.0.0.1:5432/vantage?sslmode=disable)")
	}
	if s := getenv("VANTAGE_SECRET_KEY"); s == "" {
		bad("VANTAGE_SECRET_KEY", "is required: base64 of 32 random bytes (openssl rand -base64 32)")
	} else if k, err := secrets.ParseKey(s); err != nil {
		bad("VANTAGE_SECRET_KEY", "%v", err)
	} else {
		c.SecretKey = k
	}
	if s := getenv("VANTAGE_SECRET_KEY_PREVIOUS"); s != "" {
		for i, part := range strings.Split(s, ",") {
			if k, err := secrets.ParseKey(strings.TrimSpace(part)); err != nil {
				bad("VANTAGE_SECRET_KEY_PREVIOUS", "key %d: %v", i+1, err)
			} else {
				c.PreviousKeys = append(c.PreviousKeys, k)
			}
		}
	}
	for _, a := range []struct {
		name string
		dst  *string
	}{{"VANTAGE_HTTP_ADDR", &c.HTTPAddr}, {"VANTAGE_GRPC_ADDR", &c.GRPCAddr}, {"VANTAGE_METRICS_ADDR", &c.MetricsAddr}} {
		if s := getenv(a.name); s != "" {
			if _, _, err := net.SplitHostPort(s); err != nil {
				bad(a.name, "must be host:port or :port, got %q", s)
			}
			*a.dst = s
		}
	}
	if c.BootstrapToken = getenv("VANTAGE_BOOTSTRAP_TOKEN"); c.BootstrapToken != "" && len(c.BootstrapToken) < 16 {
		bad("VANTAGE_BOOTSTRAP_TOKEN", "must be at least 16 characters")
	}
	if s := getenv("VANTAGE_LOG_LEVEL"); s != "" {
		if err := c.LogLevel.UnmarshalText([]byte(s)); err != nil {
			bad("VANTAGE_LOG_LEVEL", "must be debug, info, warn or error, got %q", s)
		}
	}
	if s := getenv("VANTAGE_TRUSTED_PROXIES"); s != "" {
		for _, p := range strings.Split(s, ",") {
			p = strings.TrimSpace(p)
			if net.ParseIP(p) == nil {
				if _, _, err := net.ParseCIDR(p); err != nil {
					bad("VANTAGE_TRUSTED_PROXIES", "%q is neither an IP nor a CIDR", p)
					continue
				}
			}
			c.TrustedProxies = append(c.TrustedProxies, p)
		}
	}
	if s := getenv("VANTAGE_SHUTDOWN_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			bad("VANTAGE_SHUTDOWN_TIMEOUT", "must be a positive duration such as 15s, got %q", s)
		}
		c.ShutdownTimeout = d
	}
	c.NATSURL = getenv("VANTAGE_NATS_URL")
	if s := getenv("VANTAGE_NATS_STORE_DIR"); s != "" {
		c.NATSStoreDir = s
	}
	if s := getenv("VANTAGE_NATS_STREAM_REPLICAS"); s != "" {
		// JetStream allows at most 5 replicas of a stream.
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 5 {
			bad("VANTAGE_NATS_STREAM_REPLICAS", "must be a whole number from 1 to 5, got %q", s)
		}
		c.StreamReplicas = n
	}
	if c.AgentToken = getenv("VANTAGE_AGENT_TOKEN"); c.AgentToken != "" && len(c.AgentToken) < 16 {
		bad("VANTAGE_AGENT_TOKEN", "must be at least 16 characters")
	}
	if s := getenv("VANTAGE_PROBE_HEALTH_WINDOW"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 10*time.Second {
			bad("VANTAGE_PROBE_HEALTH_WINDOW", "must be a duration of at least 10s such as 2m, got %q", s)
		}
		c.ProbeHealthWindow = d
	}
	for _, v := range []struct {
		name string
		to   *int
	}{{"VANTAGE_PROBE_HEALTH_MIN_CHECKS", &c.ProbeHealthMinChecks}, {"VANTAGE_PROBE_HEALTH_MIN_ORGS", &c.ProbeHealthMinOrgs}} {
		if s := getenv(v.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				bad(v.name, "must be a whole number of at least 1, got %q", s)
			}
			*v.to = n
		}
	}
	if s := getenv("VANTAGE_RESULT_RETENTION_DAYS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 3650 {
			bad("VANTAGE_RESULT_RETENTION_DAYS", "must be a whole number of days from 1 to 3650, got %q", s)
		}
		c.RetentionDays = n
	}
	if s := getenv("VANTAGE_PING_ADDR"); s != "" {
		if _, _, err := net.SplitHostPort(s); err != nil {
			bad("VANTAGE_PING_ADDR", "must be host:port or :port, got %q", s)
		}
		c.PingAddr = s
	}
	if c.SMTPURL = getenv("VANTAGE_SMTP_URL"); c.SMTPURL != "" {
		if u, err := url.Parse(c.SMTPURL); err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Host == "" {
			bad("VANTAGE_SMTP_URL", "must be smtp://[user:pass@]host:port or smtps://...")
		}
	}
	if s := getenv("VANTAGE_MAIL_FROM"); s != "" {
		if _, err := mail.ParseAddress(s); err != nil {
			bad("VANTAGE_MAIL_FROM", "must be an e-mail address such as Vantage <alerts@example.com>")
		}
		c.MailFrom = s
	}
	if s := getenv("VANTAGE_PUBLIC_URL"); s != "" {
		if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("VANTAGE_PUBLIC_URL", "must be an absolute http(s) URL, got %q", s)
		}
		c.PublicURL = strings.TrimRight(s, "/")
	}
	c.CanaryURL = c.PublicURL + "/healthz"
	if s := strings.TrimSpace(getenv("VANTAGE_CANARY_URL")); strings.EqualFold(s, "none") {
		c.CanaryURL = ""
	} else if s != "" {
		if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("VANTAGE_CANARY_URL", "must be an absolute http(s) URL or \"none\", got %q", s)
		}
		c.CanaryURL = s
	}
	loadOIDC(getenv, &c, bad)
	c.StatusDomain = strings.ToLower(strings.TrimSpace(getenv("VANTAGE_STATUS_DOMAIN")))
	if s := getenv("VANTAGE_ALLOW_PRIVATE_TARGETS"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			bad("VANTAGE_ALLOW_PRIVATE_TARGETS", "must be true or false, got %q", s)
		}
		c.AllowPrivate = b
	}
	if s := getenv("VANTAGE_PPROF"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			bad("VANTAGE_PPROF", "must be true or false, got %q", s)
		}
		c.Profiling = b
	}
	loadHTTPLimits(getenv, &c, bad)
	loadEmbeddedNATS(getenv, &c, bad)
	loadAgentChannel(getenv, &c, bad)
	if len(errs) > 0 {
		return c, fmt.Errorf("invalid configuration:%w", joinIndented(errs))
	}
	return c, nil
}

// loadOIDC reads the console's OpenID Connect provider: all of it or nothing.
func loadOIDC(getenv func(string) string, c *Config, bad func(name, format string, args ...any)) {
	c.OIDCIssuer, c.OIDCClientID = getenv("VANTAGE_OIDC_ISSUER"), getenv("VANTAGE_OIDC_CLIENT_ID")
	c.OIDCClientSecret = getenv("VANTAGE_OIDC_CLIENT_SECRET")
	if c.OIDCIssuer == "" {
		if c.OIDCClientID != "" || c.OIDCClientSecret != "" {
			bad("VANTAGE_OIDC_ISSUER", "is required with VANTAGE_OIDC_CLIENT_ID and VANTAGE_OIDC_CLIENT_SECRET")
		}
		return
	}
	u, err := url.Parse(c.OIDCIssuer)
	loopback := err == nil && (u.Hostname() == "localhost" || net.ParseIP(u.Hostname()).IsLoopback())
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && loopback)) {
		bad("VANTAGE_OIDC_ISSUER", "must be an https URL (http only on loopback), got %q", c.OIDCIssuer)
	}
	if c.OIDCClientID == "" {
		bad("VANTAGE_OIDC_CLIENT_ID", "is required with VANTAGE_OIDC_ISSUER")
	}
}

// loadHTTPLimits reads the timeouts and bounds of the HTTP listeners and API requests, and the
// other positive durations (the custom domain re-check, the console's sessions and links).
func loadHTTPLimits(getenv func(string) string, c *Config, bad func(name, format string, args ...any)) {
	for _, d := range []struct {
		name string
		dst  *time.Duration
	}{{"VANTAGE_HTTP_READ_TIMEOUT", &c.HTTPReadTimeout}, {"VANTAGE_HTTP_WRITE_TIMEOUT", &c.HTTPWriteTimeout},
		{"VANTAGE_HTTP_IDLE_TIMEOUT", &c.HTTPIdleTimeout}, {"VANTAGE_REQUEST_TIMEOUT", &c.RequestTimeout},
		{"VANTAGE_CUSTOM_DOMAIN_RECHECK", &c.CustomDomainRecheck}, {"VANTAGE_CUSTOM_DOMAIN_GRACE", &c.CustomDomainGrace},
		{"VANTAGE_CONSOLE_SESSION_TTL", &c.ConsoleSessionTTL}, {"VANTAGE_CONSOLE_LINK_TTL", &c.ConsoleLinkTTL}} {
		if s := getenv(d.name); s != "" {
			v, err := time.ParseDuration(s)
			if err != nil || v <= 0 {
				bad(d.name, "must be a positive duration such as 30s, got %q", s)
				continue
			}
			*d.dst = v
		}
	}
	if c.RequestTimeout >= c.HTTPWriteTimeout {
		bad("VANTAGE_REQUEST_TIMEOUT", "must be below VANTAGE_HTTP_WRITE_TIMEOUT (%s), so that the 503 can still be written", c.HTTPWriteTimeout)
	}
	if s := getenv("VANTAGE_MAX_CONNS_PER_CLIENT"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			bad("VANTAGE_MAX_CONNS_PER_CLIENT", "must be a whole number, 0 for no bound, got %q", s)
		}
		c.MaxConnsPerClient = n
	}
}

// loadEmbeddedNATS reads where the embedded NATS server listens and its credentials.
func loadEmbeddedNATS(getenv func(string) string, c *Config, bad func(name, format string, args ...any)) {
	if s := getenv("VANTAGE_NATS_EMBEDDED_ADDR"); s != "" {
		host, port, err := net.SplitHostPort(s)
		switch p, perr := strconv.Atoi(port); {
		case err != nil || perr != nil || p < 0 || p > 65535:
			bad("VANTAGE_NATS_EMBEDDED_ADDR", "must be host:port, got %q", s)
		case !isLoopback(host):
			bad("VANTAGE_NATS_EMBEDDED_ADDR", "must be a loopback address (127.0.0.1, ::1 or localhost), got %q: the embedded server is for local runs; use VANTAGE_NATS_URL for a shared NATS", s)
		}
		c.NATSEmbeddedAddr = s
	}
	if s := getenv("VANTAGE_NATS_EMBEDDED_USER"); s != "" {
		if strings.ContainsAny(s, ":@/ ") {
			bad("VANTAGE_NATS_EMBEDDED_USER", "must not contain ':', '@', '/' or spaces")
		}
		c.NATSEmbeddedUser = s
	}
	if c.NATSEmbeddedPassword = getenv("VANTAGE_NATS_EMBEDDED_PASSWORD"); c.NATSEmbeddedPassword != "" && len(c.NATSEmbeddedPassword) < 16 {
		bad("VANTAGE_NATS_EMBEDDED_PASSWORD", "must be at least 16 characters")
	}
}

// isLoopback reports whether host names the loopback interface.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func joinIndented(errs []error) error {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString("\n  ")
		b.WriteString(e.Error())
	}
	return errors.New(b.String())
}

// loadAgentChannel reads the TLS of the agents' gRPC stream and the settings of the agents'
// registry.
func loadAgentChannel(getenv func(string) string, c *Config, bad func(name, format string, args ...any)) {
	c.GRPCTLSCert, c.GRPCTLSKey, c.GRPCClientCA = getenv("VANTAGE_GRPC_TLS_CERT"), getenv("VANTAGE_GRPC_TLS_KEY"), getenv("VANTAGE_GRPC_CLIENT_CA")
	if (c.GRPCTLSCert == "") != (c.GRPCTLSKey == "") {
		bad("VANTAGE_GRPC_TLS_CERT", "and VANTAGE_GRPC_TLS_KEY go together")
	}
	if c.GRPCClientCA != "" && c.GRPCTLSCert == "" {
		bad("VANTAGE_GRPC_CLIENT_CA", "needs VANTAGE_GRPC_TLS_CERT and VANTAGE_GRPC_TLS_KEY: client certificates are a part of TLS")
	}
	for _, f := range []struct{ name, path string }{{"VANTAGE_GRPC_TLS_CERT", c.GRPCTLSCert}, {"VANTAGE_GRPC_TLS_KEY", c.GRPCTLSKey},
		{"VANTAGE_GRPC_CLIENT_CA", c.GRPCClientCA}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			bad(f.name, "cannot read the file: %v", err)
		}
	}
	if s := getenv("VANTAGE_GRPC_MAX_CONNECTION_AGE"); s != "" {
		// Below 10s agents would spend more time reconnecting than sending.
		d, err := time.ParseDuration(s)
		if err != nil || d < 10*time.Second {
			bad("VANTAGE_GRPC_MAX_CONNECTION_AGE", "must be a duration of at least 10s such as 5m, got %q", s)
		}
		c.GRPCMaxAge = d
	}
	if c.ReplicaName = getenv("VANTAGE_REPLICA_NAME"); c.ReplicaName == "" {
		c.ReplicaName, _ = os.Hostname()
	}
	if s := getenv("VANTAGE_REGION_UNSERVED_GRACE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			bad("VANTAGE_REGION_UNSERVED_GRACE", "must be a duration such as 2m, got %q", s)
		}
		c.UnservedGrace = d
	}
}
