package scheduler

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vantagehq/vantage/controlplane/internal/jobqueue"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// backlogs is, per region, whether its job queue is behind: written by sampleBacklogs, read by
// the loop at every run. The map is built once and never changes; only its values do.
type backlogs map[string]*atomic.Bool

func newBacklogs() backlogs {
	b := make(backlogs, len(check.Regions))
	for _, r := range check.Regions {
		b[r] = &atomic.Bool{}
	}
	return b
}

// behind reports whether region's queue is behind (an unknown region never is).
func (b backlogs) behind(region string) bool {
	f := b[region]
	return f != nil && f.Load()
}

// regionSample is what the sampler remembers of one region between two readings.
type regionSample struct {
	delivered uint64
	at        time.Time
	rate      float64 // jobs/s the region's agents take, smoothed; <0: not known yet
}

// sampleBacklogs reads every region's consumer each BacklogSample until ctx ends and judges
// whether the region is behind. A region whose consumer cannot be read keeps its last verdict
// until one is read: NATS slow to answer is no news about the queue.
func (s *Scheduler) sampleBacklogs(ctx context.Context, js jetstream.JetStream, b backlogs) {
	t := time.NewTicker(s.cfg.BacklogSample)
	defer t.Stop()
	prev := map[string]*regionSample{}
	for {
		for _, region := range check.Regions {
			rctx, cancel := context.WithTimeout(ctx, s.cfg.BacklogSample)
			bl, err := jobqueue.RegionBacklog(rctx, js, region)
			cancel()
			if err != nil {
				continue
			}
			now := time.Now()
			p := prev[region]
			if p == nil {
				prev[region] = &regionSample{delivered: bl.Delivered, at: now, rate: -1}
				continue // the take-up rate needs two readings
			}
			inst := 0.0
			if dt := now.Sub(p.at).Seconds(); dt > 0 && bl.Delivered >= p.delivered {
				inst = float64(bl.Delivered-p.delivered) / dt
			}
			if p.rate < 0 {
				p.rate = inst
			} else {
				p.rate = (p.rate + inst) / 2
			}
			p.delivered, p.at = bl.Delivered, now
			was := b[region].Load()
			is := isBehind(was, bl.Pending, p.rate, s.cfg.ShedAfter, s.cfg.ShedMinPending)
			b[region].Store(is)
			if is {
				s.m.behind.WithLabelValues(region).Set(1)
			} else {
				s.m.behind.WithLabelValues(region).Set(0)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// isBehind judges a region's queue from its pending jobs and the rate its agents take them
// (jobs/s): behind when the pending jobs are more than the agents take in shedAfter — the
// newest job then waits longer than that before an agent starts it — and more than
// minPending, so that a region without agents, or a burst, is judged by the count alone. It
// stays behind until the backlog is down to half that bound, so that one drained second does
// not flip it back and forth.
func isBehind(was bool, pending uint64, rate float64, shedAfter time.Duration, minPending int) bool {
	bound := max(float64(minPending), rate*shedAfter.Seconds())
	if was {
		return float64(pending) > bound/2
	}
	return float64(pending) > bound
}

// forgetShedAfter is how long the rotation remembers that a check's run was shed, as the
// agents remember theirs: longer than any interval, shorter than a leak.
const forgetShedAfter = 2 * time.Hour

// rotation remembers, per check and region, the ordinary runs shed last (their due time), so
// that a check shed last time runs next time: while its region stays behind, a check loses
// every other run, never two in a row. The loop owns it.
type rotation struct {
	shedAt    map[runKey]int64
	lastPrune int64
}

type runKey struct {
	check  uuid.UUID
	region string
}

func newRotation() *rotation { return &rotation{shedAt: map[runKey]int64{}} }

// shedLast reports whether the check's previous run in region was shed (false for a nil
// rotation).
func (r *rotation) shedLast(check uuid.UUID, region string) bool {
	if r == nil || len(r.shedAt) == 0 {
		return false
	}
	_, ok := r.shedAt[runKey{check, region}]
	return ok
}

// shed reports whether the ordinary run of check in region goes unpublished: only when the
// region is behind and the check's previous run there was not shed. It changes nothing;
// settle records the outcome once the run is handled.
func (r *rotation) shed(check uuid.UUID, region string, behind bool) bool {
	return behind && !r.shedLast(check, region)
}

// settle records whether the run of check in region due at due was shed.
func (r *rotation) settle(check uuid.UUID, region string, due int64, shed bool) {
	k := runKey{check, region}
	if shed {
		r.shedAt[k] = due
	} else if len(r.shedAt) > 0 {
		delete(r.shedAt, k)
	}
}

// prune forgets sheds older than forgetShedAfter (checks since deleted, paused or moved to
// another replica), at most once a minute.
func (r *rotation) prune(now int64) {
	if now-r.lastPrune < time.Minute.Milliseconds() {
		return
	}
	r.lastPrune = now
	for k, due := range r.shedAt {
		if now-due > forgetShedAfter.Milliseconds() {
			delete(r.shedAt, k)
		}
	}
}

// split divides the regions of e's next run into those to publish and those to shed. Catch-up
// and confirmation runs are never shed, nor browser jobs, which travel on a consumer of their
// own that is not sampled (the agents shed those). The common case — no region behind —
// allocates nothing.
func (s *Scheduler) split(e *entry, b backlogs, rot *rotation) (publish, shed []string) {
	p := e.plan
	if e.confirm || e.release != noTime || p.kind == vantagev1.CheckKind_CHECK_KIND_BROWSER {
		return p.regions, nil
	}
	for i, r := range p.regions {
		if rot.shed(p.id, r, b.behind(r)) {
			if shed == nil {
				publish = append(make([]string, 0, len(p.regions)), p.regions[:i]...)
			}
			shed = append(shed, r)
		} else if shed != nil {
			publish = append(publish, r)
		}
	}
	if shed == nil {
		return p.regions, nil
	}
	return publish, shed
}

// settleRun records the outcome of e's run due at due, once handled: the rotation of every
// region, and the shed regions as skipped runs (written with the next progress, in one
// statement) and counted.
func (s *Scheduler) settleRun(e *entry, due int64, shed []string, rot *rotation) {
	p := e.plan
	for _, r := range p.regions {
		isShed := false
		for _, x := range shed {
			if x == r {
				isShed = true
				break
			}
		}
		rot.settle(p.id, r, due, isShed)
	}
	if len(shed) == 0 {
		return
	}
	at := time.UnixMilli(due).UTC()
	for _, r := range shed {
		s.m.shed.WithLabelValues(r).Inc()
		if s.runsSkipped != nil {
			s.runsSkipped.WithLabelValues(r, store.SkipShed).Inc()
		}
		s.skips.add(store.SkippedRun{OrgID: p.orgID, CheckID: p.id, Region: r, ScheduledAt: at, Reason: store.SkipShed})
	}
}
