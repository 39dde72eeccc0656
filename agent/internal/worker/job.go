package worker

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// handle runs one job from q, holding one of q's slots until its attempts end (the caller
// gives the slot back when handle returns), and submits every result to the uplink; the job's
// message is acked or handed back later, when the control plane has answered for all of them
// (tracked.settle). Nothing about the job's content beyond ids is logged: headers, bodies and
// secret values never reach a log line.
func (w *Worker) handle(ctx context.Context, q queue, msg jetstream.Msg) {
	t := w.track(msg, q)
	job, err := wire.DecodeJob(msg.Data())
	if err != nil {
		w.log.Error("dropping a job that cannot be decoded", "region", q.region, "err", err)
		w.m.skipped.WithLabelValues("undecodable").Inc()
		w.term(msg, w.log)
		t.drop()
		return
	}
	t.job = job
	now := w.cfg.Now()
	if dl := job.GetDeadlineUnixMs(); dl > 0 && now.UnixMilli() > dl {
		w.rot.missed(q.region, job.GetCheckId(), now)
		w.notRun(ctx, t, wire.NotRunExpired, 1)
		return
	}
	var (
		queued      time.Time
		redelivered bool
	)
	if md, err := t.msg.Metadata(); err == nil {
		queued, redelivered = md.Timestamp, md.NumDelivered > 1
	}
	if !w.rot.admit(q.region, job, queued, redelivered, now) {
		w.notRun(ctx, t, wire.NotRunShed, 1)
		return
	}
	maxAttempts := max(int(job.GetMaxAttempts()), 1)
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		res := w.attempt(ctx, job, attempt)
		if res == nil {
			if ctx.Err() != nil {
				w.log.Info("job aborted by shutdown", "job_id", job.GetJobId(), "region", q.region, "attempt", attempt)
				if w.lastDelivery(t) {
					w.notRun(ctx, t, wire.NotRunShutdown, attempt)
					return
				}
				t.seal(retryNow)
				return
			}
			w.log.Error("the probe produced no result; handing the job back", "job_id", job.GetJobId(),
				"region", q.region, "attempt", attempt)
			t.seal(retryLate)
			return
		}
		final := res.GetPassing() || attempt == maxAttempts
		w.complete(res, job, q.region, attempt, final)
		if !w.submit(ctx, t, res) || final {
			break
		}
	}
	t.seal(done)
}

// notRun reports that t's job was not run and why, instead of dropping it: the control plane
// counts it as a skipped run, and the job is acked once that is stored. attempt is the attempt
// that did not run.
func (w *Worker) notRun(ctx context.Context, t *tracked, reason string, attempt int) {
	job := t.job
	w.log.Debug("job not run", "job_id", job.GetJobId(), "check_id", job.GetCheckId(), "region", t.q.region,
		"reason", reason, "deadline", time.UnixMilli(job.GetDeadlineUnixMs()).UTC())
	w.m.notRun.WithLabelValues(t.q.region, reason).Inc()
	now := w.cfg.Now().UnixMilli()
	res := &vantagev1.CheckResult{NotRunReason: reason, DispatchedAtUnixMs: now, CheckedAtUnixMs: now,
		JobSignature: job.GetSignature()}
	w.complete(res, job, t.q.region, attempt, true)
	w.submit(ctx, t, res)
	t.seal(done)
}

// submit hands res to the uplink, to be acked for t; false when it could not be queued (the
// job is then handed back).
func (w *Worker) submit(ctx context.Context, t *tracked, res *vantagev1.CheckResult) bool {
	// The result's delivery may outlive a drain that aborts probes, but not ResultTimeout.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.cfg.ResultTimeout)
	defer cancel()
	t.add()
	if err := w.up.Submit(sctx, res, t.result); err != nil {
		t.result(false, err)
		return false
	}
	return true
}

// attempt runs one attempt under the job's timeout. It returns nil when the attempt has nothing
// to report: the agent is stopping (a probe cut short by our own cancellation says nothing about
// the target), or the runner failed.
func (w *Worker) attempt(ctx context.Context, job *vantagev1.CheckJob, attempt int) (res *vantagev1.CheckResult) {
	timeout := time.Duration(job.GetTimeoutMs()) * time.Millisecond
	if timeout <= 0 {
		timeout = w.cfg.AttemptTimeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			w.log.Error("probe panicked", "job_id", job.GetJobId(), "attempt", attempt, "panic", fmt.Sprint(p),
				"stack", string(debug.Stack()))
			res = nil
		}
	}()
	dispatched := w.cfg.Now()
	start := time.Now()
	res = w.runner.Run(actx, job, attempt)
	if res == nil || ctx.Err() != nil {
		return nil
	}
	if res.DispatchedAtUnixMs == 0 {
		res.DispatchedAtUnixMs = dispatched.UnixMilli()
	}
	if res.CheckedAtUnixMs == 0 {
		res.CheckedAtUnixMs = w.cfg.Now().UnixMilli()
	}
	k := kindIndex(job.GetKind())
	outcome := w.m.fail[k]
	if res.GetPassing() {
		outcome = w.m.pass[k]
	}
	outcome.Inc()
	w.m.durations[k].Observe(time.Since(start).Seconds())
	return res
}

// complete stamps what the worker, not the probe, knows about a result, and redacts it.
func (w *Worker) complete(res *vantagev1.CheckResult, job *vantagev1.CheckJob, region string, attempt int, final bool) {
	res.JobId = job.GetJobId()
	res.CheckId = job.GetCheckId()
	res.OrgId = job.GetOrgId()
	res.Kind = job.GetKind()
	res.Region = region
	res.AgentId = w.cfg.AgentID
	res.AttemptNumber = uint32(attempt)
	res.IsFinalAttempt = final
	res.ScheduledAtUnixMs = job.GetScheduledAtUnixMs()
	redactResult(res, job)
}

// lastDelivery reports whether JetStream will not deliver t's message again if it is handed
// back: it was delivered as often as its consumer allows.
func (w *Worker) lastDelivery(t *tracked) bool {
	md, err := t.msg.Metadata()
	maxDeliver := t.q.maxDeliver.Load()
	return err == nil && maxDeliver > 0 && int64(md.NumDelivered) >= maxDeliver
}

// handBack Naks msg so that JetStream redelivers it to an agent of the region after delay.
func (w *Worker) handBack(msg jetstream.Msg, delay time.Duration, log *slog.Logger) {
	var err error
	if delay > 0 {
		err = msg.NakWithDelay(delay)
	} else {
		err = msg.Nak()
	}
	if err != nil {
		log.Warn("hand job back (it will be redelivered after AckWait)", "err", err)
	}
	w.m.jobs.WithLabelValues("redelivered").Inc()
}

// term tells JetStream never to redeliver msg.
func (w *Worker) term(msg jetstream.Msg, log *slog.Logger) {
	if err := msg.Term(); err != nil {
		log.Warn("drop job", "err", err)
	}
}
