package e2e

import (
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestBadgesEndToEnd: through the real binaries, an agent and a local target, a check's public
// badges show it UP with a measured response time and reveal nothing of the check; once its
// target fails, a new badge (after disabling and enabling again) shows it DOWN, and the
// disabled badge's URLs answer 404.
func TestBadgesEndToEnd(t *testing.T) {
	parallel(t)
	target := newHTTPTarget(t, true)
	s := newStack(t)
	s.startAgent(t, "agent-all", "all")
	id := s.createCheck(t, "/v1/checks", map[string]any{
		"name":                            "e2e badge Undisclosed Name",
		"url":                             target.URL,
		"test_regions":                    []string{"cloud:us-east-1"},
		"confirmation_period_seconds":     0,
		"reminder_alert_interval_minutes": -1,
	})
	s.setInterval(t, id, fastInterval)
	s.waitStatus(t, id, "UP", 30*time.Second)

	type badgeState struct {
		Enabled bool              `json:"enabled"`
		URLs    map[string]string `json:"urls"`
	}
	enable := func() map[string]string {
		t.Helper()
		var st badgeState
		s.mustCall(t, http.MethodPost, "/v1/checks/"+id.String()+"/badge", nil, &st)
		if !st.Enabled || len(st.URLs) != 3 {
			t.Fatalf("enabled badge: %+v", st)
		}
		paths := map[string]string{}
		for k, u := range st.URLs {
			paths[k] = u[strings.Index(u, "/badges/"):]
		}
		return paths
	}
	// get fetches a badge as anyone would: no credentials.
	get := func(path string) (int, http.Header, string) {
		t.Helper()
		resp, err := s.client.Get("http://" + s.cp.httpAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp.Header, string(b)
	}
	value := func(path string) string {
		t.Helper()
		code, hd, body := get(path)
		var svg struct {
			Texts []string `xml:"g>text"`
		}
		if code != http.StatusOK || hd.Get("Content-Type") != "image/svg+xml" || xml.Unmarshal([]byte(body), &svg) != nil || len(svg.Texts) != 4 {
			t.Fatalf("GET %s: %d %s %s", path, code, hd.Get("Content-Type"), body)
		}
		for _, secret := range []string{id.String(), "Undisclosed", target.URL, strings.TrimPrefix(target.URL, "http://")} {
			if strings.Contains(path+body, secret) {
				t.Errorf("GET %s reveals %q: %s", path, secret, body)
			}
		}
		return svg.Texts[3]
	}

	up := enable()
	if v := value(up["status"]); v != "up" {
		t.Errorf("status badge of an UP check: %q", v)
	}
	if v := value(up["response"]); !strings.HasSuffix(v, " ms") {
		t.Errorf("response-time badge of a check with passing runs: %q, want milliseconds", v)
	}
	if v := value(up["uptime"]); v != "100%" {
		t.Errorf("uptime badge of a check never down: %q", v)
	}

	target.healthy.Store(false)
	s.waitStatus(t, id, "DOWN", fastInterval*time.Second+slack)
	s.mustCall(t, http.MethodDelete, "/v1/checks/"+id.String()+"/badge", nil, nil)
	for _, p := range up {
		if code, _, body := get(p); code != http.StatusNotFound {
			t.Errorf("GET %s once disabled: %d %s", p, code, body)
		}
	}
	down := enable()
	if down["status"] == up["status"] {
		t.Fatalf("enabled again with the old URL %s", up["status"])
	}
	if v := value(down["status"]); v != "down" {
		t.Errorf("status badge of a DOWN check: %q", v)
	}
}
