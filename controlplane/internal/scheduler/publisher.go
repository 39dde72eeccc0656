package scheduler

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/proto"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/wire"
)

// publisher queues jobs with asynchronous JetStream publishes — at most maxInFlight awaiting
// their ack — and a collector goroutine that takes the acks in order, counts them, measures
// lateness and marks the checks queued for the last_queued flush.
type publisher struct {
	js        jetstream.JetStream
	inflight  chan inflight
	marks     *marks
	m         *metrics
	now       func() time.Time
	stallWait time.Duration
	errs      *errorLog
	// byRegion caches the published counter of each region; collect alone uses it.
	byRegion map[string]prometheus.Counter
}

// inflight is one job awaiting its ack.
type inflight struct {
	fut          jetstream.PubAckFuture
	orgID, check uuid.UUID
	region       string
	due          int64
}

func newPublisher(js jetstream.JetStream, maxInFlight int, stallWait time.Duration, m *metrics, now func() time.Time, log *slog.Logger) *publisher {
	return &publisher{
		js:        js,
		inflight:  make(chan inflight, 2*maxInFlight),
		marks:     newMarks(),
		m:         m,
		now:       now,
		stallWait: stallWait,
		errs:      &errorLog{log: log, every: 5 * time.Second},
		byRegion:  map[string]prometheus.Counter{},
	}
}

// publish queues one job per region of the run of p due at due. It returns false when NATS
// cannot take them now (no free in-flight slot within stallWait, or the connection is down):
// the caller retries the run later, until its deadline, and JetStream drops the regions
// already queued as duplicates.
func (pb *publisher) publish(p *plan, due int64, confirmation bool, spacing time.Duration) bool {
	id := jobID(p.id, due)
	deadline := jobDeadline(due, spacing, p.timeout, p.attempts)
	for _, region := range p.regions {
		job := p.newJob(id, region, due, deadline, confirmation)
		data, err := proto.Marshal(job)
		if err != nil { // cannot happen with a well-formed plan; never retried
			pb.m.publishErrs.Inc()
			pb.errs.report("encode job", err, "check_id", p.id.String())
			continue
		}
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

// collect takes acks in publish order until inflight is closed and drained.
func (pb *publisher) collect() {
	for f := range pb.inflight {
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
			pb.marks.add(f.orgID, f.check, at)
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

// marks collects the newest queue time of each check between last_queued flushes.
type marks struct {
	mu sync.Mutex
	m  map[uuid.UUID]store.QueuedMark
}

func newMarks() *marks { return &marks{m: map[uuid.UUID]store.QueuedMark{}} }

func (k *marks) add(orgID, checkID uuid.UUID, at time.Time) {
	k.mu.Lock()
	if cur, ok := k.m[checkID]; !ok || cur.At.Before(at) {
		k.m[checkID] = store.QueuedMark{OrgID: orgID, CheckID: checkID, At: at}
	}
	k.mu.Unlock()
}

// take removes and returns every mark.
func (k *marks) take() []store.QueuedMark {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.m) == 0 {
		return nil
	}
	out := make([]store.QueuedMark, 0, len(k.m))
	for _, v := range k.m {
		out = append(out, v)
	}
	k.m = make(map[uuid.UUID]store.QueuedMark, len(out))
	return out
}

// putBack returns marks a failed flush could not write, keeping any newer ones.
func (k *marks) putBack(ms []store.QueuedMark) {
	for _, v := range ms {
		k.add(v.OrgID, v.CheckID, v.At)
	}
}

// flushLastQueued writes the collected marks every interval until ctx ends, then once more
// with a bounded grace so that a clean step-down leaves last_queued true.
func (s *Scheduler) flushLastQueued(ctx context.Context, k *marks) {
	t := time.NewTicker(s.cfg.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.flushOnce(ctx, k)
		case <-ctx.Done():
			return
		}
	}
}

func (s *Scheduler) flushOnce(ctx context.Context, k *marks) {
	batch := k.take()
	if len(batch) == 0 {
		return
	}
	if err := s.store.SetLastQueued(ctx, batch); err != nil {
		k.putBack(batch)
		s.flushErrs.report("write last_queued", err, "checks", len(batch))
		return
	}
	s.m.lastQueuedWrites.Add(float64(len(batch)))
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
