// Package config reads the control plane's configuration from VANTAGE_* environment variables
// into one typed struct and validates it at start-up, naming every bad variable at once. Each
// setting is declared once, in settings.go.
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
	"github.com/vantagehq/vantage/pkg/envconfig"
)

// Config is the control plane's configuration. Each field is set by one variable of vars
// (settings.go), which gives its name, default and meaning.
type Config struct {
	DatabaseURL     string
	HTTPAddr        string
	GRPCAddr        string
	SecretKey       []byte
	PreviousKeys    [][]byte
	BootstrapToken  string
	LogLevel        slog.Level
	TrustedProxies  []string
	ShutdownTimeout time.Duration
	NATSURL         string // "": start an embedded server
	NATSStoreDir    string
	StreamReplicas  int
	AgentToken      string // "": agent tokens only
	RetentionDays   int
	PingAddr        string
	SMTPURL         string // "": no e-mail
	MailFrom        string
	PublicURL       string // without a trailing slash
	StatusDomain    string // lower case
	AllowPrivate    bool

	MetricsAddr       string
	Profiling         bool
	HTTPReadTimeout   time.Duration
	HTTPWriteTimeout  time.Duration
	HTTPIdleTimeout   time.Duration
	MaxConnsPerClient int // 0: no bound
	RequestTimeout    time.Duration

	NATSEmbeddedAddr     string
	NATSEmbeddedUser     string
	NATSEmbeddedPassword string // "": a random one per start

	GRPCTLSCert   string // "": plaintext
	GRPCTLSKey    string
	GRPCClientCA  string
	GRPCMaxAge    time.Duration
	ReplicaName   string
	UnservedGrace time.Duration

	ProbeHealthWindow    time.Duration
	ProbeHealthMinChecks int
	ProbeHealthMinOrgs   int
	CanaryURL            string // "": not probed

	CustomDomainRecheck time.Duration
	CustomDomainGrace   time.Duration

	ConsoleSessionTTL time.Duration
	ConsoleLinkTTL    time.Duration
	OIDCIssuer        string // "": no OpenID Connect sign-in
	OIDCClientID      string
	OIDCClientSecret  string

	Judge string // JudgeIngest or JudgeOwner
}

// The values of VANTAGE_JUDGE: where runs are judged.
const (
	// JudgeIngest judges a batch in the transaction that stores it.
	JudgeIngest = "ingest"
	// JudgeOwner judges final attempts on the owner of their check's shard.
	JudgeOwner = "owner"
)

func judgeMode(s string) (string, error) {
	if s != JudgeIngest && s != JudgeOwner {
		return "", fmt.Errorf("must be %s or %s", JudgeIngest, JudgeOwner)
	}
	return s, nil
}

// Load reads the configuration through getenv and validates it.
func Load(getenv func(string) string) (Config, error) {
	var c Config
	errs := envconfig.Load(getenv, vars(&c))
	errs = append(errs, c.checkTogether()...)
	return c, envconfig.Join(errs)
}

// checkTogether applies the rules that involve several variables.
func (c *Config) checkTogether() []error {
	var errs []error
	if c.RequestTimeout >= c.HTTPWriteTimeout {
		errs = append(errs, envconfig.Errorf("VANTAGE_REQUEST_TIMEOUT", "must be below VANTAGE_HTTP_WRITE_TIMEOUT (%s), so that the 503 can still be written", c.HTTPWriteTimeout))
	}
	// The console's OpenID Connect provider: all of it or nothing.
	if c.OIDCIssuer == "" && (c.OIDCClientID != "" || c.OIDCClientSecret != "") {
		errs = append(errs, envconfig.Errorf("VANTAGE_OIDC_ISSUER", "is required with VANTAGE_OIDC_CLIENT_ID and VANTAGE_OIDC_CLIENT_SECRET"))
	}
	if c.OIDCIssuer != "" {
		u, err := url.Parse(c.OIDCIssuer)
		loopback := err == nil && isLoopback(u.Hostname())
		if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && loopback)) {
			errs = append(errs, envconfig.Errorf("VANTAGE_OIDC_ISSUER", "must be an https URL (http only on loopback), got %q", c.OIDCIssuer))
		}
		if c.OIDCClientID == "" {
			errs = append(errs, envconfig.Errorf("VANTAGE_OIDC_CLIENT_ID", "is required with VANTAGE_OIDC_ISSUER"))
		}
	}
	// The TLS of the agents' gRPC stream.
	if (c.GRPCTLSCert == "") != (c.GRPCTLSKey == "") {
		errs = append(errs, envconfig.Errorf("VANTAGE_GRPC_TLS_CERT", "and VANTAGE_GRPC_TLS_KEY go together"))
	}
	if c.GRPCClientCA != "" && c.GRPCTLSCert == "" {
		errs = append(errs, envconfig.Errorf("VANTAGE_GRPC_CLIENT_CA", "needs VANTAGE_GRPC_TLS_CERT and VANTAGE_GRPC_TLS_KEY: client certificates are a part of TLS"))
	}
	for _, f := range []struct{ name, path string }{{"VANTAGE_GRPC_TLS_CERT", c.GRPCTLSCert}, {"VANTAGE_GRPC_TLS_KEY", c.GRPCTLSKey},
		{"VANTAGE_GRPC_CLIENT_CA", c.GRPCClientCA}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			errs = append(errs, envconfig.Errorf(f.name, "cannot read the file: %v", err))
		}
	}
	return errs
}

func (c *Config) deriveReplicaName() { c.ReplicaName, _ = os.Hostname() }

func (c *Config) deriveCanaryURL() { c.CanaryURL = c.PublicURL + "/healthz" }

// The parsers of the control plane's own kinds of value.

func previousKeys(s string) ([][]byte, error) {
	var keys [][]byte
	var errs []error
	for i, part := range strings.Split(s, ",") {
		k, err := secrets.ParseKey(strings.TrimSpace(part))
		if err != nil {
			errs = append(errs, fmt.Errorf("key %d: %w", i+1, err))
			continue
		}
		keys = append(keys, k)
	}
	return keys, errors.Join(errs...)
}

func trustedProxies(s string) ([]string, error) {
	var out []string
	var errs []error
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if net.ParseIP(p) == nil {
			if _, _, err := net.ParseCIDR(p); err != nil {
				errs = append(errs, fmt.Errorf("%q is neither an IP nor a CIDR", p))
				continue
			}
		}
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

// smtpURL's error does not quote the value: it may hold a password.
func smtpURL(s string) (string, error) {
	if u, err := url.Parse(s); err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Host == "" {
		return "", errors.New("must be smtp://[user:pass@]host:port or smtps://[user:pass@]host:port")
	}
	return s, nil
}

func mailFrom(s string) (string, error) {
	if _, err := mail.ParseAddress(s); err != nil {
		return "", errors.New("must be an e-mail address such as Vantage <alerts@example.com>")
	}
	return s, nil
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func publicURL(s string) (string, error) {
	if !isHTTPURL(s) {
		return "", fmt.Errorf("must be an absolute http(s) URL, got %q", s)
	}
	return strings.TrimRight(s, "/"), nil
}

func canaryURL(s string) (string, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "none") {
		return "", nil
	}
	if !isHTTPURL(s) {
		return "", fmt.Errorf("must be an absolute http(s) URL or \"none\", got %q", s)
	}
	return s, nil
}

func statusDomain(s string) (string, error) { return strings.ToLower(strings.TrimSpace(s)), nil }

func embeddedAddr(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	switch p, perr := strconv.Atoi(port); {
	case err != nil || perr != nil || p < 0 || p > 65535:
		return "", fmt.Errorf("must be host:port, got %q", s)
	case !isLoopback(host):
		return "", fmt.Errorf("must be a loopback address (127.0.0.1, ::1 or localhost), got %q: the embedded server is for local runs; use VANTAGE_NATS_URL for a shared NATS", s)
	}
	return s, nil
}

func embeddedUser(s string) (string, error) {
	if strings.ContainsAny(s, ":@/ ") {
		return "", errors.New("must not contain ':', '@', '/' or spaces")
	}
	return s, nil
}

// isLoopback reports whether host names the loopback interface.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
