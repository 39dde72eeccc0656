package config

import (
	"flag"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vantagehq/vantage/pkg/envconfig/envconfigtest"
)

var update = flag.Bool("update", false, "rewrite the control plane's settings table in docs/operations.md")

// TestVarsBindEveryField: every field of Config is set by a declared variable, and every
// variable has a name of its own, a meaning and a default (or says what unset means).
func TestVarsBindEveryField(t *testing.T) {
	t.Parallel()
	c := new(Config)
	envconfigtest.CheckVars(t, c, vars(c))
}

// TestOperationsDoc: docs/operations.md shows the control plane's settings as they are declared.
// Rewrite it with go test ./controlplane/internal/config -run TestOperationsDoc -update.
func TestOperationsDoc(t *testing.T) {
	envconfigtest.CheckDoc(t, "../../../docs/operations.md", "vantage-controlplane", Vars(), *update)
}

const validKey = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=" // base64 of 32 bytes

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	c, err := Load(env(map[string]string{"VANTAGE_DATABASE_URL": "postgres://x/y", "VANTAGE_SECRET_KEY": validKey}))
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != ":8080" || c.GRPCAddr != ":9090" || c.PingAddr != ":8082" || c.LogLevel != slog.LevelInfo ||
		c.ShutdownTimeout != 15*time.Second || c.RetentionDays != 30 || c.NATSURL != "" || c.NATSStoreDir != ".vantage/nats" ||
		c.StreamReplicas != 1 || !c.AllowPrivate || c.PublicURL != "http://localhost:8080" || len(c.SecretKey) != 32 {
		t.Fatalf("unexpected defaults: %+v", c)
	}
	if c.MetricsAddr != "127.0.0.1:9100" || c.HTTPReadTimeout != 30*time.Second || c.HTTPWriteTimeout != time.Minute ||
		c.HTTPIdleTimeout != 2*time.Minute || c.MaxConnsPerClient != 64 || c.RequestTimeout != 10*time.Second ||
		c.NATSEmbeddedAddr != "127.0.0.1:4222" || c.NATSEmbeddedUser != "vantage" || c.NATSEmbeddedPassword != "" ||
		c.CustomDomainRecheck != time.Hour || c.CustomDomainGrace != 72*time.Hour || c.Judge != JudgeOwner {
		t.Fatalf("unexpected listener defaults: %+v", c)
	}
}

func TestLoadNamesEveryBadVariable(t *testing.T) {
	t.Parallel()
	bad := map[string]string{
		"VANTAGE_SECRET_KEY":             "c2hvcnQ=",
		"VANTAGE_HTTP_ADDR":              "8080",
		"VANTAGE_GRPC_ADDR":              "nope",
		"VANTAGE_PING_ADDR":              "x",
		"VANTAGE_BOOTSTRAP_TOKEN":        "short",
		"VANTAGE_AGENT_TOKEN":            "short",
		"VANTAGE_LOG_LEVEL":              "loud",
		"VANTAGE_TRUSTED_PROXIES":        "10.0.0.1,not-an-ip",
		"VANTAGE_SHUTDOWN_TIMEOUT":       "-3s",
		"VANTAGE_RESULT_RETENTION_DAYS":  "0",
		"VANTAGE_SMTP_URL":               "http://mail",
		"VANTAGE_MAIL_FROM":              "not an address",
		"VANTAGE_PUBLIC_URL":             "ftp://x",
		"VANTAGE_ALLOW_PRIVATE_TARGETS":  "maybe",
		"VANTAGE_METRICS_ADDR":           "9100",
		"VANTAGE_HTTP_READ_TIMEOUT":      "0s",
		"VANTAGE_HTTP_WRITE_TIMEOUT":     "soon",
		"VANTAGE_HTTP_IDLE_TIMEOUT":      "-1s",
		"VANTAGE_MAX_CONNS_PER_CLIENT":   "-2",
		"VANTAGE_REQUEST_TIMEOUT":        "never",
		"VANTAGE_NATS_EMBEDDED_ADDR":     "0.0.0.0:4222",
		"VANTAGE_NATS_EMBEDDED_USER":     "a:b",
		"VANTAGE_NATS_EMBEDDED_PASSWORD": "short",
		"VANTAGE_NATS_STREAM_REPLICAS":   "6",
		"VANTAGE_CUSTOM_DOMAIN_RECHECK":  "0s",
		"VANTAGE_CUSTOM_DOMAIN_GRACE":    "3 days",
		"VANTAGE_JUDGE":                  "replica",
	}
	_, err := Load(env(bad))
	if err == nil {
		t.Fatal("want an error")
	}
	for name := range bad {
		if !strings.Contains(err.Error(), name+":") {
			t.Errorf("error does not name %s:\n%v", name, err)
		}
	}
	if !strings.Contains(err.Error(), "VANTAGE_DATABASE_URL: is required") {
		t.Errorf("error does not name the missing database URL:\n%v", err)
	}
}

func TestLoadAcceptsValidValues(t *testing.T) {
	t.Parallel()
	c, err := Load(env(map[string]string{
		"VANTAGE_DATABASE_URL": "postgres://x/y", "VANTAGE_SECRET_KEY": validKey,
		"VANTAGE_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.1", "VANTAGE_LOG_LEVEL": "debug",
		"VANTAGE_SMTP_URL": "smtps://u:p@mail.example.com:465", "VANTAGE_MAIL_FROM": "Ops <ops@example.com>",
		"VANTAGE_PUBLIC_URL": "https://status.example.com/", "VANTAGE_ALLOW_PRIVATE_TARGETS": "false",
		"VANTAGE_STATUS_DOMAIN":         " Status.Example.COM ",
		"VANTAGE_CUSTOM_DOMAIN_RECHECK": "15m", "VANTAGE_CUSTOM_DOMAIN_GRACE": "24h",
		"VANTAGE_JUDGE": "ingest",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.TrustedProxies) != 2 || c.LogLevel != slog.LevelDebug || c.AllowPrivate ||
		c.PublicURL != "https://status.example.com" || c.StatusDomain != "status.example.com" ||
		c.CustomDomainRecheck != 15*time.Minute || c.CustomDomainGrace != 24*time.Hour || c.Judge != JudgeIngest {
		t.Fatalf("unexpected config: %+v", c)
	}
}

func TestLoadRequestTimeoutBelowWriteTimeout(t *testing.T) {
	t.Parallel()
	_, err := Load(env(map[string]string{"VANTAGE_DATABASE_URL": "postgres://x/y", "VANTAGE_SECRET_KEY": validKey,
		"VANTAGE_REQUEST_TIMEOUT": "90s"}))
	if err == nil || !strings.Contains(err.Error(), "VANTAGE_REQUEST_TIMEOUT: must be below VANTAGE_HTTP_WRITE_TIMEOUT") {
		t.Fatalf("a request timeout above the write timeout: %v", err)
	}
	c, err := Load(env(map[string]string{"VANTAGE_DATABASE_URL": "postgres://x/y", "VANTAGE_SECRET_KEY": validKey,
		"VANTAGE_REQUEST_TIMEOUT": "2s", "VANTAGE_MAX_CONNS_PER_CLIENT": "0", "VANTAGE_NATS_EMBEDDED_ADDR": "[::1]:0",
		"VANTAGE_NATS_EMBEDDED_PASSWORD": "0123456789abcdef"}))
	if err != nil || c.RequestTimeout != 2*time.Second || c.MaxConnsPerClient != 0 || c.NATSEmbeddedAddr != "[::1]:0" {
		t.Fatalf("valid values: %+v, %v", c, err)
	}
}

func TestLoadAgentChannel(t *testing.T) {
	t.Parallel()
	base := map[string]string{"VANTAGE_DATABASE_URL": "postgres://x/y", "VANTAGE_SECRET_KEY": validKey}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	c, err := Load(env(base))
	if err != nil {
		t.Fatal(err)
	}
	if c.AgentToken != "" || c.GRPCTLSCert != "" || c.UnservedGrace != 2*time.Minute || c.ReplicaName == "" || c.GRPCMaxAge != 5*time.Minute {
		t.Errorf("defaults: shared token %q, TLS %q, grace %s, replica %q, connection age %s", c.AgentToken, c.GRPCTLSCert, c.UnservedGrace, c.ReplicaName, c.GRPCMaxAge)
	}
	file := t.TempDir() + "/cert.pem"
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = Load(env(with(map[string]string{"VANTAGE_GRPC_TLS_CERT": file, "VANTAGE_GRPC_TLS_KEY": file,
		"VANTAGE_GRPC_CLIENT_CA": file, "VANTAGE_REPLICA_NAME": "cp-1", "VANTAGE_REGION_UNSERVED_GRACE": "30s",
		"VANTAGE_GRPC_MAX_CONNECTION_AGE": "90s"})))
	if err != nil || c.GRPCClientCA != file || c.ReplicaName != "cp-1" || c.UnservedGrace != 30*time.Second || c.GRPCMaxAge != 90*time.Second {
		t.Errorf("valid values: %+v, %v", c, err)
	}
	for name, extra := range map[string]map[string]string{
		"VANTAGE_GRPC_TLS_CERT":           {"VANTAGE_GRPC_TLS_CERT": file},
		"VANTAGE_GRPC_CLIENT_CA":          {"VANTAGE_GRPC_CLIENT_CA": file},
		"VANTAGE_GRPC_TLS_KEY":            {"VANTAGE_GRPC_TLS_CERT": file, "VANTAGE_GRPC_TLS_KEY": "/no/such/key.pem"},
		"VANTAGE_REGION_UNSERVED_GRACE":   {"VANTAGE_REGION_UNSERVED_GRACE": "soon"},
		"VANTAGE_GRPC_MAX_CONNECTION_AGE": {"VANTAGE_GRPC_MAX_CONNECTION_AGE": "1s"},
	} {
		if _, err := Load(env(with(extra))); err == nil || !strings.Contains(err.Error(), name+":") {
			t.Errorf("%v: error %v does not name %s", extra, err, name)
		}
	}
}

// VANTAGE_CANARY_URL follows VANTAGE_PUBLIC_URL unless set, wherever the two are declared.
func TestLoadCanaryURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, public, canary, want string
	}{
		{"default", "", "", "http://localhost:8080/healthz"},
		{"from the public URL", "https://vantage.example.com/", "", "https://vantage.example.com/healthz"},
		{"set", "https://vantage.example.com", " https://cp.internal/healthz ", "https://cp.internal/healthz"},
		{"none", "https://vantage.example.com", "None", ""},
	} {
		c, err := Load(env(map[string]string{"VANTAGE_DATABASE_URL": "postgres://x/y", "VANTAGE_SECRET_KEY": validKey,
			"VANTAGE_PUBLIC_URL": tt.public, "VANTAGE_CANARY_URL": tt.canary}))
		if err != nil || c.CanaryURL != tt.want {
			t.Errorf("%s: canary URL %q, %v; want %q", tt.name, c.CanaryURL, err, tt.want)
		}
	}
	_, err := Load(env(map[string]string{"VANTAGE_DATABASE_URL": "postgres://x/y", "VANTAGE_SECRET_KEY": validKey,
		"VANTAGE_CANARY_URL": "ftp://x"}))
	if err == nil || !strings.Contains(err.Error(), `VANTAGE_CANARY_URL: must be an absolute http(s) URL or "none", got "ftp://x"`) {
		t.Errorf("a bad canary URL: %v", err)
	}
}
