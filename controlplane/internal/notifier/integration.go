package notifier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/integration"
	"github.com/vantagehq/vantage/controlplane/internal/notifier/provider"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/netpolicy"
)

// maxRetryAfter caps how long a provider's Retry-After may hold a delivery back.
const maxRetryAfter = time.Hour

// maxAnswer is how much of a provider's answer is kept (for errors and the test route).
const maxAnswer = 4 << 10

// answer is what a provider answered one request.
type answer struct {
	Status     int
	Body       string        // the beginning of the body, secrets redacted
	RetryAfter time.Duration // asked for by a 429 or 503; 0 when not
}

// sendIntegration delivers one alert to an integration in its provider's own format. A 2xx
// answer is success; a 429 (or 503) with Retry-After is retried after that wait rather than
// the backoff. Error texts name the host and the class of a failure (netpolicy.Describe), never
// the integration's secrets nor the address the host resolved to.
func (n *Notifier) sendIntegration(ctx context.Context, d store.DueDelivery) (*answer, error) {
	set, err := integration.Decode(d.Settings)
	if err != nil {
		return nil, err
	}
	m, err := n.message(ctx, d)
	if err != nil {
		return nil, err
	}
	return n.call(ctx, d.IntegrationType, set, m)
}

// call sends one message and reads the answer.
func (n *Notifier) call(ctx context.Context, typ string, set integration.Settings, m provider.Message) (*answer, error) {
	p := provider.For(typ)
	if p == nil {
		return nil, fmt.Errorf("unknown integration type %q", typ)
	}
	secrets := integration.Secrets(typ, set)
	req, err := p.Request(ctx, set, m)
	if err != nil {
		return nil, errors.New(redactSecrets(err.Error(), secrets))
	}
	req.Header.Set("User-Agent", "Vantage-Integrations/1.0")
	resp, err := n.client.Do(req)
	if err != nil {
		return nil, errors.New(redactSecrets(netpolicy.Describe(req.URL.Host, err), secrets))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseRead))
	a := &answer{Status: resp.StatusCode, Body: redactSecrets(string(body), secrets)}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		a.RetryAfter = min(provider.RetryAfter(resp.Header, body, n.now()), maxRetryAfter)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := fmt.Sprintf("%s: the provider answered HTTP %d", req.URL.Host, resp.StatusCode)
		if excerpt := strings.TrimSpace(a.Body); excerpt != "" {
			msg += ": " + truncateText(excerpt, 300)
		}
		return a, errors.New(msg)
	}
	return a, nil
}

// TestIntegration sends a clearly marked test message to an integration now, through the same
// client (and address policy) as alerts, and returns what the provider answered. An on-call or
// incident.io test is resolved right after it is triggered, so that nobody stays paged.
func (n *Notifier) TestIntegration(ctx context.Context, typ string, set integration.Settings, name string) integration.TestResult {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	id := uuid.Must(uuid.NewV7()).String()
	now := n.now()
	m := provider.Message{EventID: id, EventType: "test", State: provider.Down, Test: true, Kind: "integration", Name: name,
		Since: now, At: now, Priority: "LOW", DedupKey: "vantage/test/" + id, Summary: "This is a test message sent from Vantage.",
		Link: strings.TrimRight(n.cfg.PublicURL, "/")}
	start := time.Now()
	a, err := n.call(ctx, typ, set, m)
	res := integration.TestResult{LatencyMs: float64(time.Since(start).Microseconds()) / 1000}
	if a != nil {
		res.StatusCode, res.Body = &a.Status, a.Body
	}
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.Delivered = true
	if typ == integration.Oncall || typ == integration.IncidentIO {
		m.State = provider.Up
		_, _ = n.call(ctx, typ, set, m) // best effort: the answer shown is the trigger's
	}
	return res
}

// message builds the provider-neutral message of a delivery from the event's document.
func (n *Notifier) message(ctx context.Context, d store.DueDelivery) (provider.Message, error) {
	var doc struct {
		ID            string          `json:"id"`
		Type          string          `json:"type"`
		OccurredAt    time.Time       `json:"occurred_at"`
		AlertPriority string          `json:"alert_priority"`
		Reminder      bool            `json:"reminder"`
		Data          json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(d.Body, &doc); err != nil {
		return provider.Message{}, fmt.Errorf("decode the event document: %w", err)
	}
	m := provider.Message{EventID: doc.ID, EventType: doc.Type, Reminder: doc.Reminder, Priority: doc.AlertPriority, At: doc.OccurredAt}
	base := strings.TrimRight(n.cfg.PublicURL, "/")
	switch doc.Type {
	case event.TypeUptimeDown, event.TypeUptimeUp:
		var data struct {
			Check struct {
				ID          string   `json:"id"`
				Name        string   `json:"name"`
				URL         *string  `json:"url"`
				DNSDomain   *string  `json:"dns_domain"`
				TCPHostname *string  `json:"tcp_hostname"`
				TCPPort     *int     `json:"tcp_port"`
				TestRegions []string `json:"test_regions"`
			} `json:"check"`
			Incident *struct {
				ID        string     `json:"id"`
				StartedAt time.Time  `json:"started_at"`
				EndedAt   *time.Time `json:"ended_at"`
			} `json:"incident"`
		}
		_ = json.Unmarshal(doc.Data, &data) // leniently: a missing member leaves a fact out
		c := data.Check
		m.Kind, m.Name, m.State, m.Regions = "check", c.Name, provider.Down, c.TestRegions
		if doc.Type == event.TypeUptimeUp {
			m.State = provider.Up
		}
		switch { // what the check probes, by kind
		case c.URL != nil:
			m.Target = *c.URL
		case c.DNSDomain != nil:
			m.Target = *c.DNSDomain
		case c.TCPHostname != nil && c.TCPPort != nil:
			m.Target = net.JoinHostPort(*c.TCPHostname, strconv.Itoa(*c.TCPPort))
		}
		m.Link = base + "/v1/checks/" + c.ID
		m.DedupKey = "vantage/check/" + c.ID
		if inc := data.Incident; inc != nil {
			m.Since, m.Until = inc.StartedAt, inc.EndedAt
			m.DedupKey += "/incident/" + inc.ID
		}
		if m.State == provider.Down {
			n.lastRun(ctx, d.OrgID, c.ID, doc.OccurredAt, &m)
		}
	case event.TypeUptimeDegraded, event.TypeUptimeRestored:
		// Regional degradation (docs/detection.md): opened while some regions fail and the check
		// stays UP, resolved when they all pass again.
		var data struct {
			Check struct {
				ID   string  `json:"id"`
				Name string  `json:"name"`
				URL  *string `json:"url"`
			} `json:"check"`
			FailingRegions []string `json:"failing_regions"`
		}
		_ = json.Unmarshal(doc.Data, &data)
		c := data.Check
		m.Kind, m.Name, m.State, m.Regions = "check", c.Name+" (regional degradation)", provider.Open, data.FailingRegions
		m.Summary = "UP, but failing in " + strings.Join(data.FailingRegions, ", ")
		if doc.Type == event.TypeUptimeRestored {
			m.State, m.Summary = provider.Resolved, "passing in every region again"
		}
		if c.URL != nil {
			m.Target = *c.URL
		}
		m.Link = base + "/v1/checks/" + c.ID + "/regions"
		m.DedupKey = "vantage/check/" + c.ID + "/degraded"
	case event.TypeHeartbeatDown, event.TypeHeartbeatUp:
		var hb struct {
			Heartbeat struct {
				ID           string  `json:"id"`
				Name         string  `json:"name"`
				LastSeen     *string `json:"last_seen"`
				ReportPeriod *int    `json:"report_period"`
				Cron         *string `json:"report_period_cron"`
				GracePeriod  int     `json:"grace_period"`
			} `json:"heartbeat"`
		}
		_ = json.Unmarshal(doc.Data, &hb)
		h := hb.Heartbeat
		m.Kind, m.Name, m.State = "heartbeat", h.Name, provider.Down
		if doc.Type == event.TypeHeartbeatUp {
			m.State = provider.Up
		}
		last := "never"
		if h.LastSeen != nil {
			last = *h.LastSeen
		}
		expect := ""
		switch {
		case h.ReportPeriod != nil:
			expect = fmt.Sprintf("every %ds", *h.ReportPeriod)
		case h.Cron != nil:
			expect = "on " + *h.Cron
		}
		m.Summary = fmt.Sprintf("last ping %s; expected %s with %ds of grace", last, expect, h.GracePeriod)
		m.Link = base + "/v1/heartbeats/" + h.ID
		m.DedupKey = "vantage/heartbeat/" + h.ID
	case event.TypeIncidentStarted, event.TypeIncidentUpdated, event.TypeIncidentResolved:
		var data struct {
			Incident struct {
				ID      string    `json:"id"`
				Title   string    `json:"title"`
				Impact  string    `json:"impact"`
				Started time.Time `json:"started"`
				Updates []struct {
					Status      string `json:"status"`
					Description string `json:"description"`
				} `json:"updates"`
			} `json:"incident"`
			StatusPage struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"status_page"`
		}
		_ = json.Unmarshal(doc.Data, &data)
		inc := data.Incident
		m.Kind, m.Name, m.State, m.Since = "status page incident", inc.Title+" ("+data.StatusPage.Name+")", provider.Open, inc.Started
		if doc.Type == event.TypeIncidentResolved {
			m.State = provider.Resolved
		}
		if len(inc.Updates) > 0 {
			u := inc.Updates[0]
			m.Summary = strings.TrimSpace(u.Status + ": " + u.Description)
		}
		if inc.Impact != "" {
			m.Summary = strings.TrimSpace(inc.Impact + " — " + m.Summary)
		}
		m.Link = base + "/v1/status_pages/" + data.StatusPage.ID + "/incidents/" + inc.ID
		m.DedupKey = "vantage/status_page_incident/" + inc.ID
	case event.TypeCertificateExpiring, event.TypeCertificateExpired:
		if err := certificateMessage(doc.Type, doc.Data, base, &m); err != nil {
			return m, err
		}
	default:
		return m, fmt.Errorf("event type %s does not go to integrations", doc.Type)
	}
	return m, nil
}

// lastRun adds what the check's latest run before the alert found: the regions that failed and
// the first failure's summary. Without a run (or the database) the message goes without them.
func (n *Notifier) lastRun(ctx context.Context, orgID uuid.UUID, checkID string, at time.Time, m *provider.Message) {
	id, err := uuid.Parse(checkID)
	if err != nil {
		return
	}
	run, err := n.st.LatestRun(ctx, orgID, id, at)
	if err != nil || len(run) == 0 {
		return
	}
	var failed []string
	for _, r := range run {
		if r.Passing {
			continue
		}
		failed = append(failed, r.Region)
		if m.Summary == "" {
			m.Summary = summarise(r)
		}
	}
	if len(failed) > 0 {
		m.Regions = failed
	}
}

func summarise(r store.RunResult) string {
	var parts []string
	if r.FailureType != nil && *r.FailureType != "" {
		parts = append(parts, *r.FailureType)
	}
	if r.ResponseCode != nil {
		parts = append(parts, fmt.Sprintf("HTTP %d", *r.ResponseCode))
	}
	if r.Summary != nil && *r.Summary != "" {
		parts = append(parts, *r.Summary)
	}
	return truncateText(strings.Join(parts, " — ")+" ("+r.Region+")", 500)
}

func truncateText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
