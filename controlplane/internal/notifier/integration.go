package notifier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
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

// message builds the provider-neutral message of a delivery from its typed event. A down
// check's message says what its latest run found.
func (n *Notifier) message(ctx context.Context, d store.DueDelivery) (provider.Message, error) {
	ev, err := event.Decode(d.Event)
	if err != nil {
		return provider.Message{}, err
	}
	a, err := n.alertOf(ctx, d, ev)
	if err != nil {
		return provider.Message{}, err
	}
	m := a.message(strings.TrimRight(n.cfg.PublicURL, "/"))
	if a.Check != nil && m.State == provider.Down {
		n.lastRun(ctx, d.OrgID, a.Check.ID, a.At, &m)
	}
	return m, nil
}

// lastRun adds what the check's latest run before the alert found: the regions that failed and
// the first failure's summary. Without a run (or the database) the message goes without them.
func (n *Notifier) lastRun(ctx context.Context, orgID, checkID uuid.UUID, at time.Time, m *provider.Message) {
	run, err := n.st.LatestRun(ctx, orgID, checkID, at)
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
