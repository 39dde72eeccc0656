package worker

import (
	"sync"
	"time"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Shedding in rotation. Checks sit on a fixed grid and the region's queue is FIFO, so when
// demand exceeds capacity, plain expiry sheds the same checks every round (the ones queued
// behind the backlog) while others always run. The rotation spreads the loss instead: a job
// that comes late — its start later than a quarter of its window after its due time (or
// after it was queued, if later: a catch-up run), the window being its deadline minus that
// time (the check's interval for most checks) — runs only if its check's previous job on this agent
// was not run; if that one ran, this one is shed (not run, reason SHED), which costs an ack
// and a not-run result, so the agent drains the backlog at full speed. Each check then loses
// at most every other run while the shedding lasts: at twice the capacity, no check goes more
// than two intervals without a run. Jobs not late enough run. The first late job of a check
// the agent does not remember is shed like one whose check ran: running every unknown late
// job would put all checks in step (all run in one round, all shed in the next), and each
// such round would be twice the capacity again. A job past its deadline is still EXPIRED (and
// counts as not run for the rotation). A catch-up run (CheckJob.catch_up) and a redelivered
// job are never shed: the check's one run after the scheduler's downtime or after a run the
// scheduler shed, and a job whose agent died, are run if still current.
//
// The memory is per agent and per region: with several agents in a region, a check's
// consecutive jobs may go to different agents, each of which alternates over the jobs it
// gets, so runs are still spread over the checks but two sheds in a row are possible.

const (
	// shedLateFraction: a job whose start is later than this fraction of its window after its
	// due time takes part in the rotation.
	shedLateFraction = 4 // window / 4
	// rotationTTL is how long the rotation remembers a check's last job; a check not seen
	// since then is unknown again.
	rotationTTL = 2 * time.Hour
	// rotationSweep is how often entries older than rotationTTL are dropped.
	rotationSweep = time.Minute
	// rotationMax bounds the checks remembered; past it, remembering a new check forgets an
	// arbitrary one.
	rotationMax = 1 << 20
)

type rotationKey struct{ region, check string }

// lastJob is what the rotation remembers of a check's previous job on this agent.
type lastJob struct {
	ran bool
	at  time.Time
}

// rotation decides which late jobs run; see above. Safe for concurrent use.
type rotation struct {
	mu    sync.Mutex
	last  map[rotationKey]lastJob
	swept time.Time
}

func newRotation() *rotation { return &rotation{last: map[rotationKey]lastJob{}} }

// admit reports whether job, from region, runs when started at now (true) or is shed, and
// remembers the decision for the check's next job. queued is when the job entered the queue
// (its message's JetStream timestamp; zero if unknown): lateness counts from its due time or
// from then, whichever is later, so that a catch-up run, queued when a shard's new owner took
// over long after its due time, is only as late as the queue made it. A catch-up run (the check's
// only run of a gap without a scheduler, or its run after one the scheduler shed) and a redelivered job (its agent died, or could not
// deliver its result: its run is still current, and it was admitted once already) are never
// shed.
func (r *rotation) admit(region string, job *vantagev1.CheckJob, queued time.Time, redelivered bool, now time.Time) bool {
	k := rotationKey{region, job.GetCheckId()}
	from := max(job.GetScheduledAtUnixMs(), queued.UnixMilli())
	window := job.GetDeadlineUnixMs() - from
	late := now.UnixMilli() - from
	r.mu.Lock()
	defer r.mu.Unlock()
	prev, known := r.last[k]
	known = known && now.Sub(prev.at) <= rotationTTL
	run := redelivered || job.GetCatchUp() || window <= 0 || late <= window/shedLateFraction || known && !prev.ran
	r.remember(k, run, now)
	return run
}

// missed remembers that the check's job from region was not run for another reason (its
// deadline had passed), so that its next late job runs.
func (r *rotation) missed(region, check string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.remember(rotationKey{region, check}, false, now)
}

// remember records the check's last job, sweeping forgotten entries now and then. r.mu is held.
func (r *rotation) remember(k rotationKey, ran bool, now time.Time) {
	if now.Sub(r.swept) >= rotationSweep {
		r.swept = now
		for key, v := range r.last {
			if now.Sub(v.at) > rotationTTL {
				delete(r.last, key)
			}
		}
	}
	if _, ok := r.last[k]; !ok && len(r.last) >= rotationMax {
		for key := range r.last { // full: forget an arbitrary check (map order is random)
			delete(r.last, key)
			break
		}
	}
	r.last[k] = lastJob{ran: ran, at: now}
}
