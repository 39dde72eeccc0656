package config

import (
	"flag"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/envconfig/envconfigtest"
)

var update = flag.Bool("update", false, "rewrite the agent's settings table in docs/operations.md")

// TestVarsBindEveryField: every field of Config is set by a declared variable, and every
// variable has a name of its own, a meaning and a default (or says what unset means).
func TestVarsBindEveryField(t *testing.T) {
	t.Parallel()
	c := new(Config)
	envconfigtest.CheckVars(t, c, vars(c))
}

// TestOperationsDoc: docs/operations.md shows the agent's settings as they are declared.
// Rewrite it with go test ./agent/internal/config -run TestOperationsDoc -update.
func TestOperationsDoc(t *testing.T) {
	envconfigtest.CheckDoc(t, "../../../docs/operations.md", "vantage-agent", Vars(), *update)
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	c, err := Load(env(map[string]string{
		"VANTAGE_AGENT_TOKEN": "0123456789abcdef",
		"VANTAGE_REGIONS":     "cloud:eu-central-1",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.NATSURL != "nats://127.0.0.1:4222" || c.ControlPlaneAddr != "127.0.0.1:9090" || c.Concurrency != 0 ||
		c.HTTPAddr != ":8081" || c.MetricsAddr != "127.0.0.1:9101" || !c.AllowPrivateTargets || c.LogLevel != slog.LevelInfo || c.ShutdownTimeout != 10*time.Second {
		t.Errorf("defaults: %+v", c)
	}
	if c.BrowserPath != "" || c.BrowserConcurrency != runtime.NumCPU() || c.BrowserWorkerMemory != 512<<20 {
		t.Errorf("browser defaults: path %q, concurrency %d, worker memory %d", c.BrowserPath, c.BrowserConcurrency, c.BrowserWorkerMemory)
	}
	if !slices.Equal(c.Regions, []string{"cloud:eu-central-1"}) {
		t.Errorf("regions = %v", c.Regions)
	}
	if c.AgentID == "" || !strings.Contains(c.AgentID, "-") {
		t.Errorf("agent id = %q, want hostname-random", c.AgentID)
	}
	c2, _ := Load(env(map[string]string{"VANTAGE_AGENT_TOKEN": "0123456789abcdef", "VANTAGE_REGIONS": "all"}))
	if c.AgentID == c2.AgentID {
		t.Errorf("two default agent ids are equal: %q", c.AgentID)
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	base := map[string]string{"VANTAGE_AGENT_TOKEN": "0123456789abcdef", "VANTAGE_REGIONS": "all"}
	tests := []struct {
		name    string
		env     map[string]string
		check   func(t *testing.T, c Config)
		wantErr []string // every variable the error must name
	}{
		{
			name: "all regions",
			env:  map[string]string{},
			check: func(t *testing.T, c Config) {
				if !slices.Equal(c.Regions, check.Regions) {
					t.Errorf("regions = %v", c.Regions)
				}
			},
		},
		{
			name: "region list trimmed and de-duplicated",
			env:  map[string]string{"VANTAGE_REGIONS": " cloud:us-east-1, cloud:ap-south-1 ,cloud:us-east-1"},
			check: func(t *testing.T, c Config) {
				if !slices.Equal(c.Regions, []string{"cloud:us-east-1", "cloud:ap-south-1"}) {
					t.Errorf("regions = %v", c.Regions)
				}
			},
		},
		{
			name: "every setting",
			env: map[string]string{
				"VANTAGE_NATS_URL": "nats://n1:4222,nats://n2:4222", "VANTAGE_CONTROLPLANE_ADDR": "cp.internal:9443",
				"VANTAGE_AGENT_CONCURRENCY": "4", "VANTAGE_AGENT_ID": "agent-7", "VANTAGE_HTTP_ADDR": "127.0.0.1:9000",
				"VANTAGE_ALLOW_PRIVATE_TARGETS": "false", "VANTAGE_LOG_LEVEL": "debug", "VANTAGE_SHUTDOWN_TIMEOUT": "3s",
			},
			check: func(t *testing.T, c Config) {
				want := Config{NATSURL: "nats://n1:4222,nats://n2:4222", ControlPlaneAddr: "cp.internal:9443",
					AgentToken: "0123456789abcdef", Regions: check.Regions, Concurrency: 4, AgentID: "agent-7",
					HTTPAddr: "127.0.0.1:9000", AllowPrivateTargets: false, LogLevel: slog.LevelDebug, ShutdownTimeout: 3 * time.Second}
				c.Regions, want.Regions = nil, nil
				if c.NATSURL != want.NATSURL || c.ControlPlaneAddr != want.ControlPlaneAddr || c.Concurrency != want.Concurrency ||
					c.AgentID != want.AgentID || c.HTTPAddr != want.HTTPAddr || c.AllowPrivateTargets != want.AllowPrivateTargets ||
					c.LogLevel != want.LogLevel || c.ShutdownTimeout != want.ShutdownTimeout {
					t.Errorf("got %+v\nwant %+v", c, want)
				}
			},
		},
		{
			name: "browser settings",
			env: map[string]string{"VANTAGE_BROWSER_PATH": "/bin/sh", "VANTAGE_BROWSER_CONCURRENCY": "3",
				"VANTAGE_BROWSER_WORKER_MEMORY_MB": "256"},
			check: func(t *testing.T, c Config) {
				if c.BrowserPath != "/bin/sh" || c.BrowserConcurrency != 3 || c.BrowserWorkerMemory != 256<<20 {
					t.Errorf("got path %q, concurrency %d, worker memory %d", c.BrowserPath, c.BrowserConcurrency, c.BrowserWorkerMemory)
				}
			},
		},
		{
			name: "browser sandbox off",
			env:  map[string]string{"VANTAGE_BROWSER_SANDBOX": "false"},
			check: func(t *testing.T, c Config) {
				if c.BrowserSandbox {
					t.Error("sandbox on, want off")
				}
			},
		},
		{
			name:    "browser sandbox not a boolean",
			env:     map[string]string{"VANTAGE_BROWSER_SANDBOX": "sometimes"},
			wantErr: []string{`VANTAGE_BROWSER_SANDBOX: must be true or false, got "sometimes"`},
		},
		{
			name: "no browser",
			env:  map[string]string{"VANTAGE_BROWSER_PATH": "none"},
			check: func(t *testing.T, c Config) {
				if c.BrowserPath != NoBrowser {
					t.Errorf("browser path %q, want none", c.BrowserPath)
				}
			},
		},
		{
			name: "bad browser settings",
			env: map[string]string{"VANTAGE_BROWSER_PATH": "/nonexistent/chromium", "VANTAGE_BROWSER_CONCURRENCY": "0",
				"VANTAGE_BROWSER_WORKER_MEMORY_MB": "lots"},
			wantErr: []string{`VANTAGE_BROWSER_PATH: "/nonexistent/chromium" is not an executable file`,
				"VANTAGE_BROWSER_CONCURRENCY: must be a whole number from 1 to 64", "VANTAGE_BROWSER_WORKER_MEMORY_MB"},
		},
		{
			name:    "required missing",
			env:     map[string]string{"VANTAGE_AGENT_TOKEN": "", "VANTAGE_REGIONS": ""},
			wantErr: []string{"VANTAGE_AGENT_TOKEN: is required", "VANTAGE_REGIONS: is required"},
		},
		{
			name: "every bad variable named",
			env: map[string]string{
				"VANTAGE_AGENT_TOKEN": "short", "VANTAGE_REGIONS": "cloud:us-east-1,us-east-1,cloud:mars-1",
				"VANTAGE_CONTROLPLANE_ADDR": "nohostport", "VANTAGE_AGENT_CONCURRENCY": "0", "VANTAGE_AGENT_ID": "has space",
				"VANTAGE_HTTP_ADDR": "8081", "VANTAGE_METRICS_ADDR": "9101", "VANTAGE_ALLOW_PRIVATE_TARGETS": "maybe", "VANTAGE_LOG_LEVEL": "loud",
				"VANTAGE_SHUTDOWN_TIMEOUT": "soon", "VANTAGE_NATS_CREDS": "/nonexistent/agent.creds",
			},
			wantErr: []string{
				"VANTAGE_AGENT_TOKEN: must be at least 16", `VANTAGE_REGIONS: unknown region "us-east-1", "cloud:mars-1"`,
				"VANTAGE_CONTROLPLANE_ADDR", "VANTAGE_AGENT_CONCURRENCY", "VANTAGE_AGENT_ID", "VANTAGE_HTTP_ADDR", "VANTAGE_METRICS_ADDR",
				"VANTAGE_ALLOW_PRIVATE_TARGETS", "VANTAGE_LOG_LEVEL", "VANTAGE_SHUTDOWN_TIMEOUT", "VANTAGE_NATS_CREDS",
			},
		},
		{
			name:    "concurrency not a number",
			env:     map[string]string{"VANTAGE_AGENT_CONCURRENCY": "many"},
			wantErr: []string{"VANTAGE_AGENT_CONCURRENCY: must be a whole number from 1 to 65536"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := map[string]string{}
			for k, v := range base {
				m[k] = v
			}
			for k, v := range tt.env {
				m[k] = v
			}
			c, err := Load(env(m))
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				tt.check(t, c)
				return
			}
			if err == nil {
				t.Fatalf("no error, want one naming %v", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), m["VANTAGE_AGENT_TOKEN"]) && m["VANTAGE_AGENT_TOKEN"] != "" {
				t.Errorf("error reveals the token: %v", err)
			}
		})
	}
}

func TestLoadChannel(t *testing.T) {
	t.Parallel()
	base := func(extra map[string]string) map[string]string {
		m := map[string]string{"VANTAGE_AGENT_TOKEN": "0123456789abcdef", "VANTAGE_REGIONS": "cloud:eu-west-2",
			"VANTAGE_CONTROLPLANE_ADDR": "cp.vantage.test:9090"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	c, err := Load(env(base(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if c.ControlPlaneTLS || c.ControlPlaneServerName != "cp.vantage.test" || c.NATSAPIPrefix != "" {
		t.Errorf("defaults: TLS %v, server name %q, API prefix %q", c.ControlPlaneTLS, c.ControlPlaneServerName, c.NATSAPIPrefix)
	}
	file := t.TempDir() + "/ca.pem"
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = Load(env(base(map[string]string{"VANTAGE_CONTROLPLANE_CA": file, "VANTAGE_AGENT_TLS_CERT": file,
		"VANTAGE_AGENT_TLS_KEY": file, "VANTAGE_CONTROLPLANE_SERVER_NAME": "grpc.vantage.test",
		"VANTAGE_NATS_API_PREFIX": "vantage.js.api"})))
	if err != nil || !c.ControlPlaneTLS || c.ControlPlaneServerName != "grpc.vantage.test" || c.TLSKey != file ||
		c.NATSAPIPrefix != "vantage.js.api" {
		t.Errorf("a CA turns TLS on: %+v, %v", c, err)
	}
	for name, extra := range map[string]map[string]string{
		"VANTAGE_AGENT_TLS_CERT":   {"VANTAGE_AGENT_TLS_CERT": file, "VANTAGE_AGENT_TLS_KEY": file}, // without TLS
		"VANTAGE_CONTROLPLANE_CA":  {"VANTAGE_CONTROLPLANE_CA": "/no/such/ca.pem"},
		"VANTAGE_CONTROLPLANE_TLS": {"VANTAGE_CONTROLPLANE_TLS": "yes please"},
		"VANTAGE_NATS_API_PREFIX":  {"VANTAGE_NATS_API_PREFIX": "vantage.>"},
	} {
		if _, err := Load(env(base(extra))); err == nil || !strings.Contains(err.Error(), name+":") {
			t.Errorf("%v: error %v does not name %s", extra, err, name)
		}
	}
}

// Chromium's sandbox refuses to run as root: as root the default is off, and asking for it is
// an error that says why; as another user the default is on.
func TestBrowserSandboxFollowsTheUser(t *testing.T) {
	env := map[string]string{"VANTAGE_AGENT_TOKEN": "0123456789abcdef", "VANTAGE_REGIONS": "cloud:us-east-1"}
	getenv := func(k string) string { return env[k] }
	c, err := Load(getenv)
	if err != nil {
		t.Fatal(err)
	}
	if root := os.Geteuid() == 0; c.BrowserSandbox == root {
		t.Errorf("sandbox %v by default for uid %d", c.BrowserSandbox, os.Geteuid())
	}
	env["VANTAGE_BROWSER_SANDBOX"] = "true"
	_, err = Load(getenv)
	if os.Geteuid() == 0 && (err == nil || !strings.Contains(err.Error(), "cannot run as root")) {
		t.Errorf("sandbox asked for as root: %v, want a refusal", err)
	}
}
