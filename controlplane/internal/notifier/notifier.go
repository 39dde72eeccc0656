package notifier

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/netpolicy"
)

// Store is what the notifier needs from storage.
type Store interface {
	DispatchOutbox(ctx context.Context, limit int, retryAfter time.Duration,
		route func(ctx context.Context, ev store.PendingEvent) (store.Fanout, error)) (store.DispatchResult, error)
	ClaimDeliveries(ctx context.Context, limit int, lease time.Duration) ([]store.DueDelivery, error)
	RecordAttempts(ctx context.Context, recs []store.Recorded) error
	ResolveVars(ctx context.Context, orgID uuid.UUID, projectID *uuid.UUID, names []string) (map[string]store.ResolvedVar, error)
	GetCheck(ctx context.Context, orgID, id uuid.UUID, withScript bool) (store.Check, error)
	CheckRegions(ctx context.Context, c store.Check) ([]store.RegionView, error)
	ListenOutbox(ctx context.Context, wake func()) error
	SubscriberMail(ctx context.Context, orgID, subscriberID uuid.UUID) (store.SubscriberMail, error)
	InvitationMail(ctx context.Context, orgID, invitationID uuid.UUID) (store.InvitationMail, error)
	LatestRun(ctx context.Context, orgID, checkID uuid.UUID, at time.Time) ([]store.RunResult, error)
}

var _ Store = (*store.Store)(nil)

// DefaultBackoff is the retry schedule: the wait after the 1st, 2nd, … failed attempt. Ten
// attempts span about a day.
var DefaultBackoff = []time.Duration{30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 8 * time.Hour}

// Config holds a Notifier's settings. Every zero value means the documented default.
type Config struct {
	// Workers is the number of worker loops; each fans out events and delivers. Default 4.
	Workers int
	// Batch is how many deliveries a worker claims and sends concurrently. Default 32.
	Batch int
	// FanoutBatch is how many outbox events one fan-out transaction takes. Default 50.
	FanoutBatch int
	// PollInterval is how often an idle worker looks for work. Default 200ms.
	PollInterval time.Duration
	// Timeout bounds one attempt (HTTP request or SMTP conversation). Default 10s.
	Timeout time.Duration
	// Backoff is the retry schedule (see DefaultBackoff); after len(Backoff) retries the
	// delivery is FAILED.
	Backoff []time.Duration
	// Jitter spreads each wait by ±Jitter of itself. Default 0.2; negative disables it.
	Jitter float64
	// SMTPURL is smtp://[user:pass@]host:port or smtps://…; empty disables e-mail (the deliveries
	// are recorded as SKIPPED with the reason). Default "".
	SMTPURL string
	// MailFrom is the sender of e-mails. Default "Vantage <vantage@localhost>".
	MailFrom string
	// PublicURL is the base of links in e-mails. Default "http://localhost:8080".
	PublicURL string
	// DenyPrivateTargets refuses webhook connections to every address the outbound address
	// policy (pkg/netpolicy) refuses: private, loopback, link-local, every IANA
	// special-purpose range and the IPv6 forms embedding them (checked at connect time, after
	// name resolution, so DNS rebinding cannot get around it). Default false: allowed, for
	// self-hosting; a hosted deployment sets true. It applies to the default Deps.Client only.
	DenyPrivateTargets bool
}

// Deps are what a Notifier works with.
type Deps struct {
	Store Store // required
	// Logger receives the notifier's log (component notifier). Default: discarded.
	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Registerer takes the notifier's metrics. Default: a private registry.
	Registerer prometheus.Registerer
	// RenderCheck renders a check as GET /v1/checks/{id} returns it (api.RenderCheckForWebhook).
	// Nil, or a check deleted before fan-out: the outbox payload's snapshot is sent instead.
	RenderCheck func(store.Check) any
	// Client sends webhooks and integration requests. Default: an http.Client that follows no
	// redirects, keeps up to 32 idle connections per host and applies Config.DenyPrivateTargets.
	Client *http.Client
}

func (o *Config) defaults() {
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.Batch <= 0 {
		o.Batch = 32
	}
	if o.FanoutBatch <= 0 {
		o.FanoutBatch = 50
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 200 * time.Millisecond
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Backoff == nil {
		o.Backoff = DefaultBackoff
	}
	if o.Jitter == 0 {
		o.Jitter = 0.2
	}
	if o.MailFrom == "" {
		o.MailFrom = "Vantage <vantage@localhost>"
	}
	if o.PublicURL == "" {
		o.PublicURL = "http://localhost:8080"
	}
}

// defaultClient follows no redirects and, when denyPrivate, applies the outbound address policy.
func defaultClient(denyPrivate bool) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 32 // many webhooks often share a host
	if denyPrivate {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: netpolicy.Control} // the outbound address policy
		tr.DialContext = d.DialContext
	}
	return &http.Client{Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// Notifier drains the outbox. Run it on every replica.
type Notifier struct {
	log    *slog.Logger
	now    func() time.Time
	st     Store
	cfg    Config
	render func(store.Check) any // nil: send the outbox snapshot
	client *http.Client
	mail   *mailer // nil: e-mail disabled
	m      metrics
	wake   chan struct{}
	lease  time.Duration
}

// New builds a Notifier; it delivers when Run is called.
func New(cfg Config, deps Deps) (*Notifier, error) {
	if deps.Store == nil {
		return nil, errors.New("notifier: a store is required")
	}
	cfg.defaults()
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Registerer == nil {
		deps.Registerer = prometheus.NewRegistry()
	}
	if deps.Client == nil {
		deps.Client = defaultClient(cfg.DenyPrivateTargets)
	}
	n := &Notifier{log: deps.Logger.With("component", "notifier"), now: deps.Now, st: deps.Store, cfg: cfg,
		render: deps.RenderCheck, client: deps.Client,
		wake: make(chan struct{}, cfg.Workers), lease: cfg.Timeout + 30*time.Second}
	if cfg.SMTPURL != "" {
		m, err := newMailer(cfg.SMTPURL, cfg.MailFrom, cfg.PublicURL)
		if err != nil {
			return nil, err
		}
		n.mail = m
	}
	var err error
	if n.m, err = newMetrics(deps.Registerer); err != nil {
		return nil, err
	}
	return n, nil
}

// Run starts the workers and returns when ctx ends; attempts in flight then finish (bounded by
// the attempt timeout) and are recorded.
func (n *Notifier) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		n.listen(ctx)
	}()
	for i := 0; i < n.cfg.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.work(ctx)
		}()
	}
	wg.Wait()
	return nil
}

// listen wakes the workers when an event is queued, so that it leaves within milliseconds
// rather than a poll interval; polling stays the safety net while the listener reconnects.
func (n *Notifier) listen(ctx context.Context) {
	for ctx.Err() == nil {
		if err := n.st.ListenOutbox(ctx, n.poke); err != nil && ctx.Err() == nil {
			n.log.WarnContext(ctx, "listen for outbox events", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// work is one worker loop: fan out, deliver, and sleep only when there was nothing to do.
func (n *Notifier) work(ctx context.Context) {
	for ctx.Err() == nil {
		busy, failing := false, false
		res, err := n.st.DispatchOutbox(ctx, n.cfg.FanoutBatch, n.cfg.Backoff[0], n.route)
		switch {
		case err != nil && ctx.Err() == nil:
			failing = true
			n.log.ErrorContext(ctx, "fan out outbox events", "err", err)
		case res.Events > 0 || res.Failed > 0:
			busy = true
			n.m.events.Add(float64(res.Events))
			n.m.fanoutErrors.Add(float64(res.Failed))
			if res.Deliveries > 0 {
				n.poke()
			}
		}
		if ctx.Err() != nil {
			return
		}
		due, err := n.st.ClaimDeliveries(ctx, n.cfg.Batch, n.lease)
		if err != nil && ctx.Err() == nil {
			failing = true
			n.log.ErrorContext(ctx, "claim deliveries", "err", err)
		}
		if len(due) > 0 {
			busy = true
			n.deliverAll(ctx, due)
		}
		switch {
		case failing: // the database is struggling: do not hammer it (nor the log)
			select {
			case <-ctx.Done():
			case <-time.After(max(n.cfg.PollInterval, time.Second)):
			}
		case !busy:
			select {
			case <-ctx.Done():
			case <-n.wake:
			case <-time.After(n.cfg.PollInterval):
			}
		}
	}
}

// poke wakes idle workers of this replica (new deliveries are due now).
func (n *Notifier) poke() {
	for i := 0; i < n.cfg.Workers; i++ {
		select {
		case n.wake <- struct{}{}:
		default:
			return
		}
	}
}

// deliverAll makes one attempt of each claimed delivery, concurrently, and records them together.
// Attempts are not cut short when ctx ends: the claim is already taken, so finishing and
// recording is better than leaving it to the lease.
func (n *Notifier) deliverAll(ctx context.Context, due []store.DueDelivery) {
	sendCtx := context.WithoutCancel(ctx)
	recs := make([]store.Recorded, len(due))
	var wg sync.WaitGroup
	for i := range due {
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs[i] = store.Recorded{Delivery: due[i], Attempt: n.attempt(sendCtx, due[i])}
		}()
	}
	wg.Wait()
	if err := n.st.RecordAttempts(sendCtx, recs); err != nil {
		n.log.ErrorContext(ctx, "record delivery attempts", "err", err, "count", len(recs))
	}
}

// attempt makes one attempt of d and decides what comes next.
func (n *Notifier) attempt(ctx context.Context, d store.DueDelivery) store.Attempt {
	start := n.now()
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	var status *int
	var err error
	var retryAfter time.Duration // a provider's Retry-After, instead of the backoff
	skipped := ""
	switch d.Channel {
	case store.ChannelWebhook:
		status, err = n.sendWebhook(ctx, d, start)
	case store.ChannelIntegration:
		var a *answer
		if a, err = n.sendIntegration(ctx, d); a != nil {
			status, retryAfter = &a.Status, a.RetryAfter
		}
	case store.ChannelEmail:
		if n.mail == nil {
			skipped = "e-mail is disabled: VANTAGE_SMTP_URL is not set"
		} else {
			skipped, err = n.sendMail(ctx, d)
		}
	default:
		skipped = "unknown channel " + d.Channel
	}
	a := store.Attempt{At: start, Latency: n.now().Sub(start), StatusCode: status}
	switch {
	case skipped != "":
		a.Status, a.Error = store.DeliverySkipped, skipped
	case err == nil:
		a.Status = store.DeliveryDelivered
		n.m.lag.WithLabelValues(d.Channel).Observe(n.now().Sub(d.CreatedAt).Seconds())
	case d.Tries >= len(n.cfg.Backoff):
		a.Status, a.Error = store.DeliveryFailed, err.Error()
	default:
		a.Status, a.Error = store.DeliveryPending, err.Error()
		a.NextAttempt = start.Add(n.backoff(d.Tries))
		if retryAfter > 0 {
			a.NextAttempt = start.Add(retryAfter)
		}
	}
	outcome := map[string]string{store.DeliveryDelivered: "delivered", store.DeliveryFailed: "failed",
		store.DeliverySkipped: "skipped", store.DeliveryPending: "retry"}[a.Status]
	n.m.attempts.WithLabelValues(d.Channel, outcome).Inc()
	n.m.duration.WithLabelValues(d.Channel).Observe(a.Latency.Seconds())
	if a.Status == store.DeliveryFailed {
		n.log.WarnContext(ctx, "delivery failed for good", "delivery_id", d.ID, "event_id", d.EventID,
			"org_id", d.OrgID, "channel", d.Channel, "attempts", d.Attempt, "err", a.Error)
	}
	return a
}

// backoff is the wait after the (tries+1)-th failed attempt, with jitter.
func (n *Notifier) backoff(tries int) time.Duration {
	d := n.cfg.Backoff[min(tries, len(n.cfg.Backoff)-1)]
	if n.cfg.Jitter > 0 {
		d = time.Duration(float64(d) * (1 + n.cfg.Jitter*(2*rand.Float64()-1))) //nolint:gosec // G404: retry jitter, not a secret
	}
	return d
}

// metrics are the notifier's Prometheus series.
type metrics struct {
	events       prometheus.Counter
	fanoutErrors prometheus.Counter
	attempts     *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	lag          *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) (metrics, error) {
	m := metrics{
		events: prometheus.NewCounter(prometheus.CounterOpts{Name: "vantage_notifier_events_total",
			Help: "Outbox events fanned out into deliveries."}),
		fanoutErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "vantage_notifier_fanout_errors_total",
			Help: "Outbox events whose fan-out failed (retried later)."}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vantage_notifier_attempts_total",
			Help: "Delivery attempts, by channel (webhook, email, integration) and outcome (delivered, retry, failed, skipped)."},
			[]string{"channel", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "vantage_notifier_attempt_duration_seconds",
			Help: "Duration of one delivery attempt, by channel.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 9)},
			[]string{"channel"}),
		lag: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "vantage_notifier_delivery_lag_seconds",
			Help:    "Time from fan-out to successful delivery (retries included), by channel.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 10, 60, 600, 3600, 86400}}, []string{"channel"}),
	}
	for _, c := range []prometheus.Collector{m.events, m.fanoutErrors, m.attempts, m.duration, m.lag} {
		if err := reg.Register(c); err != nil {
			return m, fmt.Errorf("notifier metrics: %w", err)
		}
	}
	return m, nil
}
