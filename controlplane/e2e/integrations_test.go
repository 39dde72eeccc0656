package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vantagehq/vantage/pkg/testwait"
)

// providerFake records what a chat or on-call service was sent: one string per request
// ("trigger <dedup_key>", "resolve <dedup_key>", or a Slack header's text).
type providerFake struct {
	*httptest.Server
	mu  sync.Mutex
	got []string
}

func newProviderFake(t *testing.T, read func(r *http.Request, v map[string]any) string) *providerFake {
	f := &providerFake{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var v map[string]any
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &v) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.got = append(f.got, read(r, v))
		f.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *providerFake) messages() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.got...)
}

// TestIntegrationAlertsEndToEnd: on the real binaries, integrations created through the API
// and named by a check's slack_alerts and oncall_alerts get one DOWN message (an on-call
// trigger) when the target fails, and one UP message (a resolve with the same dedup_key) when
// it heals; the test route reaches the provider too.
func TestIntegrationAlertsEndToEnd(t *testing.T) {
	parallel(t)
	target := newHTTPTarget(t, true)
	slackFake := newProviderFake(t, func(r *http.Request, v map[string]any) string {
		blocks, _ := v["blocks"].([]any)
		if r.URL.Path != "/services/T/B/X" || len(blocks) == 0 {
			return "malformed"
		}
		text, _ := blocks[0].(map[string]any)["text"].(map[string]any)
		h, _ := text["text"].(string)
		return strings.SplitN(h, ":", 2)[0]
	})
	pdFake := newProviderFake(t, func(r *http.Request, v map[string]any) string {
		if r.URL.Path != "/v2/enqueue" || v["routing_key"] != "e2e-routing-key" {
			return "malformed"
		}
		return v["event_action"].(string) + " " + v["dedup_key"].(string)
	})
	s := newStack(t)
	s.startAgent(t, "agent-all", "all")

	var slackInt, pd struct {
		ID string `json:"id"`
	}
	s.mustCall(t, http.MethodPost, "/v1/integrations", map[string]any{"name": "ops", "type": "SLACK",
		"settings": map[string]any{"webhook_url": slackFake.URL + "/services/T/B/X"}}, &slackInt)
	s.mustCall(t, http.MethodPost, "/v1/integrations", map[string]any{"name": "pager", "type": "ONCALL",
		"settings": map[string]any{"routing_key": "e2e-routing-key", "events_url": pdFake.URL + "/v2/enqueue"}}, &pd)
	var tested struct {
		Delivered  bool `json:"delivered"`
		StatusCode *int `json:"status_code"`
	}
	s.mustCall(t, http.MethodPost, "/v1/integrations/"+slackInt.ID+"/test", nil, &tested)
	if !tested.Delivered || tested.StatusCode == nil || *tested.StatusCode != http.StatusAccepted ||
		!slices.Equal(slackFake.messages(), []string{"[TEST] DOWN"}) {
		t.Fatalf("test message: %+v, fake got %v", tested, slackFake.messages())
	}

	id := s.createCheck(t, "/v1/checks", map[string]any{"name": "e2e alerts", "url": target.URL,
		"test_regions": []string{"cloud:eu-west-2"}, "confirmation_period_seconds": 0, "recovery_period_seconds": 0,
		"reminder_alert_interval_minutes": -1, "timeout": 5000,
		"slack_alerts": []string{slackInt.ID}, "oncall_alerts": []string{pd.ID}})
	s.setInterval(t, id, fastInterval)
	s.waitStatus(t, id, "UP", 30*time.Second)

	target.healthy.Store(false)
	s.waitStatus(t, id, "DOWN", fastInterval*time.Second+slack)
	testwait.Eventually(t, 10*time.Second, testwait.Holds("1 PagerDuty and 2 Slack messages", func() bool { return len(pdFake.messages()) >= 1 && len(slackFake.messages()) >= 2 }))
	target.healthy.Store(true)
	s.waitStatus(t, id, "UP", fastInterval*time.Second+slack)
	testwait.Eventually(t, 10*time.Second, testwait.Holds("2 PagerDuty and 3 Slack messages", func() bool { return len(pdFake.messages()) >= 2 && len(slackFake.messages()) >= 3 }))
	time.Sleep(time.Second) // a duplicate would arrive now

	if got := slackFake.messages(); !slices.Equal(got, []string{"[TEST] DOWN", "DOWN", "UP"}) {
		t.Errorf("Slack got %v, want the test, then DOWN and UP once each", got)
	}
	got := pdFake.messages()
	if len(got) != 2 || !strings.HasPrefix(got[0], "trigger ") || got[1] != "resolve "+strings.TrimPrefix(got[0], "trigger ") {
		t.Errorf("PagerDuty got %v, want one trigger and one resolve of the same dedup_key", got)
	}
	if code, body, err := s.do(http.MethodDelete, "/v1/integrations/"+pd.ID, nil); err != nil || code != http.StatusConflict ||
		!strings.Contains(string(body), "e2e alerts") {
		t.Errorf("deleting an integration in use: %d %s %v", code, body, err)
	}
}
