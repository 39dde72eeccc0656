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

// outcome is how a job's attempts ended, and so what happens to its message.
type outcome int

const (
	done      outcome = iota // every result stored: ack
	retryLate                // not stored, or no result could be produced: redeliver after RetryNakDelay
	retryNow                 // aborted or the stream dropped: redeliver at once
)

// handle runs one job from region and acks or hands back its message. Nothing about the job's
// content beyond ids is logged: headers, bodies and secret values never reach a log line.
func (w *Worker) handle(ctx context.Context, region string, msg jetstream.Msg) {
	job, err := wire.DecodeJob(msg.Data())
	if err != nil {
		w.log.Error("dropping a job that cannot be decoded", "region", region, "err", err)
		w.m.skipped.WithLabelValues("undecodable").Inc()
		w.term(msg, w.log)
		return
	}
	log := w.log.With("job_id", job.GetJobId(), "check_id", job.GetCheckId(), "region", region,
		"kind", kindLabel(job.GetKind()))
	if dl := job.GetDeadlineUnixMs(); dl > 0 && w.cfg.Now().UnixMilli() > dl {
		log.Debug("skipping a job past its deadline", "deadline", time.UnixMilli(dl).UTC())
		w.m.skipped.WithLabelValues("past_deadline").Inc()
		w.term(msg, log)
		return
	}

	stopProgress := w.keepInProgress(msg, log)
	out := w.runAttempts(ctx, region, job, log)
	stopProgress()

	switch out {
	case done:
		// Ack even if the drain timeout struck meanwhile: every result is stored. A lost ack
		// only means a redelivery, which ingest de-duplicates.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := msg.DoubleAck(actx); err != nil {
			log.Warn("ack job (it will be redelivered; its results are idempotent)", "err", err)
			return
		}
		w.m.jobs.WithLabelValues("acked").Inc()
	case retryLate:
		w.handBack(msg, w.cfg.RetryNakDelay, log)
	case retryNow:
		w.handBack(msg, 0, log)
	}
}

// runAttempts runs attempts 1..max_attempts until one passes, sending each result and waiting
// for its ack before deciding on the next.
func (w *Worker) runAttempts(ctx context.Context, region string, job *vantagev1.CheckJob, log *slog.Logger) outcome {
	maxAttempts := max(int(job.GetMaxAttempts()), 1)
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		res := w.attempt(ctx, job, attempt, log)
		if res == nil {
			if ctx.Err() != nil {
				log.Info("job aborted by shutdown; handing it back", "attempt", attempt)
				return retryNow
			}
			log.Error("the probe produced no result; handing the job back", "attempt", attempt)
			return retryLate
		}
		final := res.GetPassing() || attempt == maxAttempts
		w.complete(res, job, region, attempt, final)

		sctx, cancel := context.WithTimeout(ctx, w.cfg.ResultTimeout)
		stored, err := w.up.Send(sctx, res)
		cancel()
		switch {
		case err != nil:
			log.Warn("result not acked by the control plane; handing the job back", "attempt", attempt, "err", err)
			return retryNow
		case !stored:
			log.Warn("control plane did not store the result; handing the job back", "attempt", attempt)
			return retryLate
		}
		log.Debug("result stored", "attempt", attempt, "passing", res.GetPassing(), "final", final)
		if final {
			return done
		}
	}
	return done // unreachable: the last attempt is final
}

// attempt runs one attempt under the job's timeout. It returns nil when the attempt has nothing
// to report: the agent is stopping (a probe cut short by our own cancellation says nothing about
// the target), or the runner failed.
func (w *Worker) attempt(ctx context.Context, job *vantagev1.CheckJob, attempt int, log *slog.Logger) (res *vantagev1.CheckResult) {
	timeout := time.Duration(job.GetTimeoutMs()) * time.Millisecond
	if timeout <= 0 {
		timeout = w.cfg.AttemptTimeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			log.Error("probe panicked", "attempt", attempt, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
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
	kind := kindLabel(job.GetKind())
	outcome := "fail"
	if res.GetPassing() {
		outcome = "pass"
	}
	w.m.probes.WithLabelValues(kind, outcome).Inc()
	w.m.duration.WithLabelValues(kind).Observe(time.Since(start).Seconds())
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
	redact(res, job.GetRedact())
}

// keepInProgress tells JetStream every ProgressInterval that the job is still being worked on,
// so a long job (browser checks, retries, a slow ack) is not redelivered to another agent. The
// returned function stops it and returns once it has stopped.
func (w *Worker) keepInProgress(msg jetstream.Msg, log *slog.Logger) (stop func()) {
	quit, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(w.cfg.ProgressInterval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				if err := msg.InProgress(); err != nil {
					log.Debug("extend job ack deadline", "err", err)
				}
			}
		}
	}()
	return func() {
		close(quit)
		<-stopped
	}
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
