// Package config reads the agent's configuration from VANTAGE_* environment variables into one
// typed struct and validates it at start-up, naming every bad variable at once. Each setting is
// declared once, in settings.go.
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
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/envconfig"
)

// Config is the agent's configuration. Each field is set by one variable of vars (settings.go),
// which gives its name, default and meaning.
type Config struct {
	NATSURL          string
	NATSCredsFile    string // "": none
	ControlPlaneAddr string
	AgentToken       string
	Regions          []string
	// Concurrency is the probes in flight at once; 0 sizes it from the machine (package
	// sizing) at start.
	Concurrency         int
	AgentID             string
	HTTPAddr            string
	MetricsAddr         string
	Profiling           bool
	AllowPrivateTargets bool
	LogLevel            slog.Level
	ShutdownTimeout     time.Duration
	// BrowserPath is the Chromium executable; "" finds one, NoBrowser runs the agent without
	// browser checks.
	BrowserPath         string
	BrowserConcurrency  int
	BrowserSandbox      bool
	BrowserWorkerMemory int64 // in bytes
	// NATSAPIPrefix is where the agent's NATS account sees the job stream's JetStream API; ""
	// is JetStream's own ($JS.API).
	NATSAPIPrefix string

	// ControlPlaneTLS is set by VANTAGE_CONTROLPLANE_TLS and implied by a ControlPlaneCA.
	ControlPlaneTLS        bool
	ControlPlaneCA         string // "": the system's CAs
	ControlPlaneServerName string
	TLSCert, TLSKey        string // the client certificate (mutual TLS)

	CanaryTargets  []canary.Target
	CanaryInterval time.Duration
	MaxClockSkew   time.Duration
	TestClockSkew  time.Duration // for tests only
}

const (
	// DefaultHTTPAddr is where /healthz listens unless VANTAGE_HTTP_ADDR says otherwise.
	DefaultHTTPAddr = ":8081"
	// NoBrowser as VANTAGE_BROWSER_PATH runs the agent without a browser.
	NoBrowser             = "none"
	maxBrowserConcurrency = 64
)

// Load reads the configuration through getenv and validates it.
func Load(getenv func(string) string) (Config, error) {
	var c Config
	errs := envconfig.Load(getenv, vars(&c))
	errs = append(errs, c.checkTLS()...)
	return c, envconfig.Join(errs)
}

// checkTLS applies the rules between the variables of the gRPC stream's TLS.
func (c *Config) checkTLS() []error {
	var errs []error
	if c.ControlPlaneCA != "" {
		c.ControlPlaneTLS = true
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		errs = append(errs, envconfig.Errorf("VANTAGE_AGENT_TLS_CERT", "and VANTAGE_AGENT_TLS_KEY go together"))
	}
	if c.TLSCert != "" && !c.ControlPlaneTLS {
		errs = append(errs, envconfig.Errorf("VANTAGE_AGENT_TLS_CERT", "needs TLS (VANTAGE_CONTROLPLANE_CA or VANTAGE_CONTROLPLANE_TLS=true): client certificates are a part of TLS"))
	}
	for _, f := range []struct{ name, path string }{{"VANTAGE_CONTROLPLANE_CA", c.ControlPlaneCA},
		{"VANTAGE_AGENT_TLS_CERT", c.TLSCert}, {"VANTAGE_AGENT_TLS_KEY", c.TLSKey}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			errs = append(errs, envconfig.Errorf(f.name, "cannot read the file: %v", err))
		}
	}
	return errs
}

func (c *Config) deriveServerName() {
	c.ControlPlaneServerName, _, _ = net.SplitHostPort(c.ControlPlaneAddr)
}

// deriveAgentID is the hostname plus a random suffix, so two agents on one host (or two
// containers sharing a hostname) never register under the same id.
func (c *Config) deriveAgentID() {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "agent"
	}
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	c.AgentID = host + "-" + hex.EncodeToString(b[:])
}

func (c *Config) deriveBrowserConcurrency() { c.BrowserConcurrency = runtime.NumCPU() }

// deriveBrowserSandbox: Chromium's sandbox refuses to run as root.
func (c *Config) deriveBrowserSandbox() { c.BrowserSandbox = os.Geteuid() != 0 }

// The parsers of the agent's own kinds of value.

func credsFile(s string) (string, error) {
	if _, err := os.Stat(s); err != nil {
		return "", fmt.Errorf("cannot read the credentials file: %v", err)
	}
	return s, nil
}

func apiPrefix(s string) (string, error) {
	if strings.ContainsAny(s, "*> \t") || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") {
		return "", fmt.Errorf("must be a subject without wildcards, spaces or a leading or trailing dot, got %q", s)
	}
	return s, nil
}

func controlPlaneAddr(s string) (string, error) {
	if host, port, err := net.SplitHostPort(s); err != nil || host == "" || port == "" {
		return "", fmt.Errorf("must be host:port, got %q", s)
	}
	return s, nil
}

func agentID(s string) (string, error) {
	if len(s) > 128 || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "", errors.New("must be at most 128 characters without spaces or control characters")
	}
	return s, nil
}

func browserPath(s string) (string, error) {
	p := strings.TrimSpace(s)
	if p == NoBrowser {
		return p, nil
	}
	if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%q is not an executable file (unset it to find Chromium, or \"none\" for no browser checks)", p)
	}
	return p, nil
}

func browserSandbox(s string) (bool, error) {
	on, err := envconfig.Bool(s)
	switch {
	case err != nil:
		return false, err
	case on && os.Geteuid() == 0:
		return false, errors.New("the Chromium sandbox cannot run as root: run the agent as another user or set false")
	}
	return on, nil
}

// workerMemory reads MiB and gives bytes.
func workerMemory(s string) (int64, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 64 || n > 65536 {
		return 0, fmt.Errorf("must be a whole number of MiB from 64 to 65536, got %q", s)
	}
	return int64(n) << 20, nil
}

func regionsRequired() string {
	return fmt.Sprintf("is required: comma-separated regions (%s) or \"all\"", strings.Join(check.Regions, ", "))
}

// parseRegions accepts "all" or a comma-separated list of check.Regions; it returns them
// de-duplicated in the order given.
func parseRegions(s string) ([]string, error) {
	s = strings.TrimSpace(s)
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
