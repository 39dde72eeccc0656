package e2e

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/vantagehq/vantage/pkg/testwait"
	"github.com/vantagehq/vantage/pkg/tlsfiles/tlsfilestest"
)

// errNotYet is what a checkFor condition returns while it does not hold yet.
var errNotYet = errors.New("not yet")

// admin runs `vantage-controlplane admin args...` against the stack's database and returns
// its stdout.
func (s *stack) admin(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(controlPlaneBin, append([]string{"admin"}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "VANTAGE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "VANTAGE_DATABASE_URL="+s.dbURL, "VANTAGE_SECRET_KEY="+s.secretKey)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("admin %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// TestSecuredAgentChannelEndToEnd runs the production settings of the agent channel: gRPC
// over TLS with client certificates, no shared token, an agent token bound to one region. A
// check with a secret header runs and passes; the secret never travels in clear through
// NATS; agents without a client certificate, without TLS, or registering for a region their
// token does not allow are refused; GET /v1/agents lists the agent; revoking its token stops
// it.
func TestSecuredAgentChannelEndToEnd(t *testing.T) {
	parallel(t)
	ca := tlsfilestest.NewCA(t, "vantage-e2e")
	srv := ca.Server("controlplane", "127.0.0.1")
	client := ca.Client("agent-eu")
	s := newStackWith(t, map[string]string{
		"VANTAGE_GRPC_TLS_CERT":  srv.CertFile,
		"VANTAGE_GRPC_TLS_KEY":   srv.KeyFile,
		"VANTAGE_GRPC_CLIENT_CA": ca.CertFile,
		"VANTAGE_AGENT_TOKEN":    "", // no shared token
	})
	token := strings.TrimSpace(s.admin(t, "create-agent-token", "--regions", "cloud:eu-west-2", "--name", "e2e eu"))

	const secret = "s3cr3t-e2e-header-value"
	var good, bad atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != secret {
			bad.Add(1)
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		good.Add(1)
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(target.Close)

	// Every job payload NATS carries, as anyone on the job subjects would see it.
	var mu sync.Mutex
	var payloads [][]byte
	sub, err := s.nc.Subscribe("vantage.jobs.>", func(m *nats.Msg) {
		mu.Lock()
		payloads = append(payloads, bytes.Clone(m.Data))
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })

	tlsEnv := map[string]string{"VANTAGE_BROWSER_PATH": "none", "VANTAGE_AGENT_TOKEN": token,
		"VANTAGE_CONTROLPLANE_CA": ca.CertFile, "VANTAGE_AGENT_TLS_CERT": client.CertFile, "VANTAGE_AGENT_TLS_KEY": client.KeyFile}
	eu := s.startAgentWith(t, "agent-eu", tlsEnv, "cloud:eu-west-2")

	s.mustCall(t, http.MethodPost, "/v1/env", map[string]any{"name": "API_KEY", "type": "secret", "value": secret}, nil)
	id := s.createCheck(t, "/v1/checks", map[string]any{"name": "secured", "url": target.URL, "test_regions": []string{"cloud:eu-west-2"},
		"headers": map[string]string{"X-Api-Key": "{{API_KEY}}"}, "confirmation_period_seconds": 0})
	s.setInterval(t, id, fastInterval)
	s.waitStatus(t, id, "UP", 30*time.Second+slack)
	if good.Load() == 0 || bad.Load() != 0 {
		t.Errorf("target saw %d requests with the secret header and %d without", good.Load(), bad.Load())
	}
	mu.Lock()
	n := len(payloads)
	for _, p := range payloads {
		if bytes.Contains(p, []byte(secret)) {
			t.Error("a job on NATS carries the secret header value in clear")
			break
		}
	}
	mu.Unlock()
	if n == 0 {
		t.Error("no job payload seen on NATS")
	}

	t.Run("refused agents", func(t *testing.T) {
		for _, tc := range []struct {
			name, regions, want string
			env                 map[string]string
		}{
			{"no client certificate", "cloud:eu-west-2", "cannot register with the control plane",
				map[string]string{"VANTAGE_AGENT_TOKEN": token, "VANTAGE_CONTROLPLANE_CA": ca.CertFile}},
			{"plaintext", "cloud:eu-west-2", "cannot register with the control plane",
				map[string]string{"VANTAGE_AGENT_TOKEN": token}},
			{"region outside the token", "cloud:us-east-1", "PermissionDenied", tlsEnv},
		} {
			t.Run(tc.name, func(t *testing.T) {
				env := map[string]string{"VANTAGE_NATS_URL": s.ns.ClientURL(), "VANTAGE_CONTROLPLANE_ADDR": s.cp.grpcAddr,
					"VANTAGE_REGIONS": tc.regions, "VANTAGE_AGENT_ID": "refused", "VANTAGE_HTTP_ADDR": "127.0.0.1:0",
					"VANTAGE_METRICS_ADDR": "127.0.0.1:0", "VANTAGE_BROWSER_PATH": "none"}
				for k, v := range tc.env {
					env[k] = v
				}
				p := startProc(t, "refused-"+strings.ReplaceAll(tc.name, " ", "-"), agentBin, s.dir, env)
				testwait.Eventually(t, 30*time.Second, func() error {
					if p.log.contains(tc.want) {
						return nil
					}
					return errNotYet
				})
			})
		}
	})

	var overview struct {
		Agents []struct {
			ID      string `json:"id"`
			Replica string `json:"replica"`
			Token   *struct {
				Name string `json:"name"`
			} `json:"token"`
		} `json:"agents"`
	}
	testwait.Eventually(t, 15*time.Second, func() error {
		if err := s.call(http.MethodGet, "/v1/agents", nil, &overview); err != nil {
			return err
		}
		for _, a := range overview.Agents {
			if a.ID == "agent-eu" && a.Token != nil && a.Token.Name == "e2e eu" && a.Replica != "" {
				return nil
			}
		}
		return errNotYet
	})

	// Revoking the token ends the agent's stream; the agent stops, its token refused.
	var tokenID string
	for _, line := range strings.Split(s.admin(t, "list-agent-tokens"), "\n") {
		if strings.HasSuffix(line, "e2e eu") {
			tokenID = strings.Fields(line)[0]
		}
	}
	start := time.Now()
	s.admin(t, "revoke-agent-token", tokenID)
	select {
	case <-eu.p.done:
		t.Logf("the agent stopped %s after its token was revoked", time.Since(start).Round(time.Millisecond))
	case <-time.After(15 * time.Second):
		t.Fatal("the agent of a revoked token still runs")
	}
	if !eu.p.log.contains("revoked") {
		t.Error("the agent's log does not say its token was revoked")
	}
}
