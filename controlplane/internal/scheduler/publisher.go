package scheduler

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/wire"
)

// publisher queues jobs with asynchronous JetStream publishes — at most maxInFlight awaiting
// their ack — and a collector goroutine that takes the acks in order, counts them, measures
// and lateness.
type publisher struct {
	js        jetstream.JetStream
	inflight  chan inflight
	m         *metrics
	now       func() time.Time
	stallWait time.Duration
	errs      *errorLog
	// byRegion caches the published counter of each region; collect alone uses it.
	byRegion map[string]prometheus.Counter
}

// inflight is one job awaiting its ack, or a barrier: closed when every job before it is
// acknowledged or failed.
type inflight struct {
	barrier      chan struct{}
	fut          jetstream.PubAckFuture
	orgID, check uuid.UUID
	region       string
	due          int64
}

func newPublisher(js jetstream.JetStream, maxInFlight int, stallWait time.Duration, m *metrics, now func() time.Time, log *slog.Logger) *publisher {
	return &publisher{
		js:        js,
		inflight:  make(chan inflight, 2*maxInFlight),
		m:         m,
		now:       now,
		stallWait: stallWait,
		errs:      &errorLog{log: log, every: 5 * time.Second},
		byRegion:  map[string]prometheus.Counter{},
	}
}

// publish queues one job per region of regions (of p's) for the run of p due at due; a
// region where rot says the check's previous run was shed gets a catch-up job, which the
// agents never shed in turn (rot may be nil). It returns false when NATS
// cannot take them now (no free in-flight slot within stallWait, or the connection is down):
// the caller retries the run later, until its deadline, and JetStream drops the regions
// already queued as duplicates.
func (pb *publisher) publish(p *plan, regions []string, due, deadline int64, confirmation, catchUp bool, rot *rotation) bool {
	id := jobID(p.id, due)
	for _, region := range regions { // p.regions, or those of them not shed (split)
		job, data := p.newJob(id, slices.Index(p.regions, region), due, deadline, confirmation, catchUp || rot.shedLast(p.id, region))
		msg := &nats.Msg{Subject: wire.SubjectOf(job), Data: data}
		fut, err := pb.js.PublishMsgAsync(msg, jetstream.WithMsgID(wire.JobMsgID(job)), jetstream.WithStallWait(pb.stallWait))
		if err != nil {
			pb.m.publishErrs.Inc()
			pb.errs.report("publish job", err, "check_id", p.id.String(), "region", region)
			return false
		}
		pb.inflight <- inflight{fut: fut, orgID: p.orgID, check: p.id, region: region, due: due}
	}
	return true
}

// barrier returns a channel closed once every job published so far is acknowledged or failed.
func (pb *publisher) barrier() <-chan struct{} {
	b := make(chan struct{})
	pb.inflight <- inflight{barrier: b}
	return b
}

// collect takes acks in publish order until inflight is closed and drained.
func (pb *publisher) collect() {
	for f := range pb.inflight {
		if f.barrier != nil {
			close(f.barrier)
			continue
		}
		select {
		case ack := <-f.fut.Ok():
			at := pb.now()
			if ack.Duplicate {
				pb.m.duplicates.Inc()
			} else {
				c := pb.byRegion[f.region]
				if c == nil {
					c = pb.m.published.WithLabelValues(f.region)
					pb.byRegion[f.region] = c
				}
				c.Inc()
				pb.m.lateness.Observe(float64(unixMs(at)-f.due) / 1000)
			}
		case err := <-f.fut.Err():
			pb.m.publishErrs.Inc()
			pb.errs.report("job not acknowledged", err, "check_id", f.check.String(), "region", f.region)
		}
	}
}

// drain stops accepting jobs and waits up to timeout for the outstanding acks; past it, the
// remaining ones are abandoned (they fail, and their runs are not marked queued).
func (pb *publisher) drain(timeout time.Duration) {
	close(pb.inflight)
	select {
	case <-pb.js.PublishAsyncComplete():
	case <-time.After(timeout):
	}
	pb.js.CleanupPublisher()
}

// recordProgress writes the progress of the shards the loop covers every FlushInterval until
// ctx ends: the handled-through time the loop had reached one interval before, by when the
// publishes of those runs have been acknowledged. A successor starts from it and publishes the
// runs of the last interval or two again; JetStream drops them as duplicates by their message
// ids.
func (s *Scheduler) recordProgress(ctx context.Context) {
	t := time.NewTicker(s.cfg.FlushInterval)
	defer t.Stop()
	prev := s.mark.Load()
	for {
		select {
		case <-t.C:
			s.writeProgress(ctx, prev)
			prev = s.mark.Load()
		case <-ctx.Done():
			return
		}
	}
}

// writeProgress records the skipped runs, and m: the shards' progress (one statement).
func (s *Scheduler) writeProgress(ctx context.Context, m *progressMark) {
	if runs := s.skips.take(); len(runs) > 0 {
		if _, err := s.store.RecordSkippedRuns(ctx, runs); err != nil {
			s.flushErrs.report("record skipped runs", err, "runs", len(runs))
		}
	}
	if m == nil || m.through == noTime || len(m.shards) == 0 {
		return
	}
	if err := s.store.SetShardProgress(ctx, m.shards, time.UnixMilli(m.through).UTC()); err != nil {
		s.flushErrs.report("write scheduler progress", err, "shards", len(m.shards))
		return
	}
	s.m.progressWrites.Inc()
}

// maxSkipLog bounds the skipped runs waiting to be recorded; past it (the database is away
// while NATS is too) they are only counted.
const maxSkipLog = 100_000

// skipLog holds skipped runs between two progress writes.
type skipLog struct {
	mu   sync.Mutex
	runs []store.SkippedRun
}

func (l *skipLog) add(r store.SkippedRun) {
	l.mu.Lock()
	if len(l.runs) < maxSkipLog {
		l.runs = append(l.runs, r)
	}
	l.mu.Unlock()
}

func (l *skipLog) take() []store.SkippedRun {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.runs
	l.runs = nil
	return out
}

// errorLog logs a recurring error at most once per period, with how many occurred between.
type errorLog struct {
	log    *slog.Logger
	every  time.Duration
	mu     sync.Mutex
	last   time.Time
	missed int
}

func (l *errorLog) report(msg string, err error, attrs ...any) {
	l.mu.Lock()
	now := time.Now()
	if now.Sub(l.last) < l.every {
		l.missed++
		l.mu.Unlock()
		return
	}
	missed := l.missed
	l.last, l.missed = now, 0
	l.mu.Unlock()
	l.log.Warn(msg, append(attrs, "err", err, "suppressed_since_last", missed)...)
}
