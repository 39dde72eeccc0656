package main

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// TestFrozenDatabaseAnswers503Quickly: with PostgreSQL frozen (SIGSTOP), API requests are
// answered 503 with the failure envelope within the request deadline instead of hanging, and
// /readyz says not ready; once it is thawed, the API recovers by itself.
func TestFrozenDatabaseAnswers503Quickly(t *testing.T) {
	t.Parallel()
	pg := storetest.NewServer(t)
	const requestTimeout = time.Second
	s := startServe(t, testServeEnv(t, map[string]string{
		"VANTAGE_DATABASE_URL":    pg.NewDatabase(),
		"VANTAGE_REQUEST_TIMEOUT": requestTimeout.String(),
	}))
	client := &http.Client{Timeout: 15 * time.Second}
	get := func(path, token string) (int, map[string]any, time.Duration, error) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+s.addrs["http"]+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, time.Since(start), err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var body map[string]any
		_ = json.Unmarshal(b, &body)
		return resp.StatusCode, body, time.Since(start), nil
	}
	const token = "vtg_bootstrap_0123456789"
	if code, body, _, err := get("/v1/checks", token); err != nil || code != http.StatusOK {
		t.Fatalf("before the freeze: %d %v %v", code, body, err)
	}

	pg.Freeze()
	frozen := time.Now()
	// A known token (cached or not), an unknown one (the lookup needs the database): both are
	// answered, quickly, with the failure envelope.
	for _, tc := range []struct{ name, token string }{{"known token", token}, {"unknown token", "vtg_not_a_token_0123456789"}} {
		code, body, took, err := get("/v1/checks", tc.token)
		if err != nil {
			t.Fatalf("%s: no answer while the database is frozen: %v (after %s)", tc.name, err, took.Round(time.Millisecond))
		}
		if code != http.StatusServiceUnavailable || body["success"] != false {
			t.Errorf("%s: %d %v, want 503 and the failure envelope", tc.name, code, body)
		}
		if errs, _ := body["errors"].([]any); len(errs) != 1 {
			t.Errorf("%s: errors %v, want one", tc.name, body["errors"])
		}
		if took > requestTimeout+2*time.Second {
			t.Errorf("%s: answered after %s, want within the request timeout (%s) and a little", tc.name, took.Round(time.Millisecond), requestTimeout)
		}
	}
	if code, body := s.readyz(); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz with the database frozen = %d %s, want 503", code, body)
	}
	t.Logf("frozen for %s", time.Since(frozen).Round(time.Millisecond))

	pg.Thaw()
	testwait.Eventually(t, 30*time.Second, func() error {
		code, body, _, err := get("/v1/checks", token)
		if err != nil || code != http.StatusOK {
			return fmtErr("after the thaw: %d %v %v", code, body, err)
		}
		return nil
	})
	s.waitReady(t, 30*time.Second)
}
