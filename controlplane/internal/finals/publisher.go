package finals

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/shard"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/wire"
)

// Subject is where the finals of shard k travel, under prefix (wire.FinalsSubjectPrefix
// outside tests).
func Subject(prefix string, k int) string { return prefix + strconv.Itoa(k) }

// PublisherConfig tunes the Publisher. Zero values take the documented defaults.
type PublisherConfig struct {
	// SubjectPrefix is the prefix of the shards' subjects; the Router of the same deployment
	// must have the same. Default wire.FinalsSubjectPrefix.
	SubjectPrefix string
}

// PublisherDeps are what the Publisher works with.
type PublisherDeps struct {
	NATS *nats.Conn // required
	// Registerer takes the publisher's metrics. Default: a private registry.
	Registerer prometheus.Registerer
}

// Publisher hands the final attempts of stored batches to their shards' owners.
type Publisher struct {
	nc     *nats.Conn
	prefix string

	finals, messages, bytes, errs prometheus.Counter
}

// NewPublisher returns a Publisher.
func NewPublisher(cfg PublisherConfig, deps PublisherDeps) (*Publisher, error) {
	if deps.NATS == nil {
		return nil, errors.New("finals publisher: NATS is required")
	}
	if cfg.SubjectPrefix == "" {
		cfg.SubjectPrefix = wire.FinalsSubjectPrefix
	}
	reg := deps.Registerer
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	p := &Publisher{nc: deps.NATS, prefix: cfg.SubjectPrefix,
		finals: prometheus.NewCounter(prometheus.CounterOpts{Name: "vantage_finals_published_total",
			Help: "Final attempts published to their shards' owners."}),
		messages: prometheus.NewCounter(prometheus.CounterOpts{Name: "vantage_finals_published_messages_total",
			Help: "Messages of final attempts published (one per shard of a batch, or more when one would be too large)."}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "vantage_finals_published_bytes_total",
			Help: "Bytes of final attempts published (payloads)."}),
		errs: prometheus.NewCounter(prometheus.CounterOpts{Name: "vantage_finals_publish_errors_total",
			Help: "Messages of final attempts that could not be published; their batch failed and the agents send it again."}),
	}
	for _, c := range []prometheus.Collector{p.finals, p.messages, p.bytes, p.errs} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("finals publisher metrics: %w", err)
		}
	}
	return p, nil
}

// IsFinal says whether r is judged: a final attempt that ran.
func IsFinal(r *store.ResultRow) bool { return r.IsFinalAttempt && r.NotRunReason == "" }

// Publish publishes the final attempts among rows, one message per shard (more when one would
// exceed the server's payload limit), each on its shard's subject. Other rows are left out.
// nats.go buffers publishes while it reconnects; an error means a message was not handed to
// the connection, and the finals of the other shards may have been.
func (p *Publisher) Publish(rows []store.ResultRow) error {
	byShard := map[int][]store.ResultRow{}
	for i := range rows {
		if IsFinal(&rows[i]) {
			k := shard.Of(rows[i].CheckID)
			byShard[k] = append(byShard[k], rows[i])
		}
	}
	var errs []error
	for k, finals := range byShard {
		if err := p.publish(Subject(p.prefix, k), finals); err != nil {
			errs = append(errs, fmt.Errorf("shard %d: %w", k, err))
		}
	}
	return errors.Join(errs...)
}

func (p *Publisher) publish(subject string, finals []store.ResultRow) error {
	data, err := Encode(finals)
	if err != nil {
		return err
	}
	if int64(len(data)) > p.nc.MaxPayload() && len(finals) > 1 {
		half := len(finals) / 2
		return errors.Join(p.publish(subject, finals[:half]), p.publish(subject, finals[half:]))
	}
	if err := p.nc.Publish(subject, data); err != nil {
		p.errs.Inc()
		return fmt.Errorf("publish %d finals on %s: %w", len(finals), subject, err)
	}
	p.finals.Add(float64(len(finals)))
	p.messages.Inc()
	p.bytes.Add(float64(len(data)))
	return nil
}

// Store is what the Sink stores batches with; *store.Store implements it.
type Store interface {
	IngestResults(ctx context.Context, rows []store.ResultRow, judge store.JudgeFunc) (store.IngestStats, error)
}

var _ Store = (*store.Store)(nil)

// Sink is the ingest batcher's sink when shards' owners judge (VANTAGE_JUDGE=owner): it stores
// a batch without judging it, then publishes its finals to their owners.
type Sink struct {
	st  Store
	pub *Publisher
}

// NewSink returns a Sink storing with st and publishing with pub.
func NewSink(st Store, pub *Publisher) *Sink { return &Sink{st: st, pub: pub} }

// IngestBatch stores rows, then publishes the finals of all of them — those already stored
// too: a batch comes again when its publish failed, and its finals must reach the owner then
// (the owner ignores a final it has judged). A publish error fails the batch, so the agents
// send it again.
func (s *Sink) IngestBatch(ctx context.Context, rows []store.ResultRow) (store.IngestStats, error) {
	stats, err := s.st.IngestResults(ctx, rows, nil)
	if err != nil {
		return stats, err
	}
	if err := s.pub.Publish(rows); err != nil {
		return stats, fmt.Errorf("publish the finals of a stored batch: %w", err)
	}
	return stats, nil
}
