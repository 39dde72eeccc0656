package worker

import (
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// outcome is how a job ended, and so what happens to its message.
type outcome int

const (
	done      outcome = iota // every result stored: ack
	retryLate                // not stored, or no result could be produced: redeliver after RetryNakDelay
	retryNow                 // aborted or the stream dropped: redeliver at once
)

// tracked is a job's message from its fetch until it is acked or handed back. Its probe slot
// is given back when its attempts end (seal); the message is settled once, after the seal,
// every result submitted for it has been answered by the control plane.
type tracked struct {
	w   *Worker
	msg jetstream.Msg
	q   queue
	job *vantagev1.CheckJob // nil until decoded

	mu          sync.Mutex
	lastSignal  time.Time // fetch, or the last InProgress
	outstanding int       // results submitted and not yet answered
	sealed      bool      // no more results will be submitted
	sealedAt    time.Time
	out         outcome // the worst seen so far
	settled     bool
}

// track starts holding msg: from now until it settles, it is kept in progress.
func (w *Worker) track(msg jetstream.Msg, q queue) *tracked {
	t := &tracked{w: w, msg: msg, q: q, lastSignal: time.Now()}
	w.heldMu.Lock()
	w.held[t] = struct{}{}
	w.heldMu.Unlock()
	w.unsettled.Add(1)
	w.m.inFlight.Inc()
	return t
}

// add counts a result about to be submitted.
func (t *tracked) add() {
	t.mu.Lock()
	t.outstanding++
	t.mu.Unlock()
}

// result is the uplink's answer for one submitted result (uplink.Done).
func (t *tracked) result(stored bool, err error) {
	t.mu.Lock()
	t.outstanding--
	switch {
	case err != nil:
		t.worsen(retryNow)
	case !stored:
		t.worsen(retryLate)
	}
	ready := t.sealed && t.outstanding == 0 && !t.settled
	t.settled = t.settled || ready
	t.mu.Unlock()
	if ready {
		t.settle()
	}
}

// seal records that the job's attempts are over with o.
func (t *tracked) seal(o outcome) {
	t.mu.Lock()
	t.worsen(o)
	t.sealed, t.sealedAt = true, time.Now()
	ready := t.outstanding == 0 && !t.settled
	t.settled = t.settled || ready
	t.mu.Unlock()
	if ready {
		t.settle()
	}
}

// drop stops holding a message the worker already terminated.
func (t *tracked) drop() {
	t.mu.Lock()
	t.sealed, t.settled = true, true
	t.mu.Unlock()
	t.untrack()
}

func (t *tracked) worsen(o outcome) { t.out = max(t.out, o) }

// settle acks the message or hands it back. Acks are plain publishes, not round trips: those
// of one batch of control-plane acks leave together in the connection's next write. A lost
// ack only means a redelivery, which ingest de-duplicates.
func (t *tracked) settle() {
	t.untrack()
	w := t.w
	switch t.out {
	case done:
		if err := t.msg.Ack(); err != nil {
			w.log.Warn("ack job (it will be redelivered; its results are idempotent)", "region", t.q.region, "err", err)
			return
		}
		w.m.acked.Inc()
	case retryLate:
		w.handBack(t.msg, w.cfg.RetryNakDelay, w.log)
	case retryNow:
		w.handBack(t.msg, 0, w.log)
	}
}

func (t *tracked) untrack() {
	w := t.w
	w.heldMu.Lock()
	delete(w.held, t)
	w.heldMu.Unlock()
	w.m.inFlight.Dec()
	w.unsettled.Done()
}

// keepInProgress tells JetStream, for every held message not signalled within the last half
// ProgressInterval, that its job is still being worked on, so that a long probe (a browser
// check, a slow target, retries) or a result waiting for its ack is not redelivered to another
// agent after AckWait. A job whose results have waited for their acks longer than
// ResultTimeout is left to AckWait: the control plane is not answering, and another agent may
// do better. One ticker serves every job, so a fast probe costs nothing here.
func (w *Worker) keepInProgress(stop <-chan struct{}) {
	every := w.cfg.ProgressInterval / 2
	tick := time.NewTicker(every)
	defer tick.Stop()
	var due []*tracked
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		now := time.Now()
		due = due[:0]
		w.heldMu.Lock()
		for t := range w.held {
			due = append(due, t)
		}
		w.heldMu.Unlock()
		for _, t := range due {
			t.mu.Lock()
			signal := !t.settled && now.Sub(t.lastSignal) >= every/2 &&
				(!t.sealed || now.Sub(t.sealedAt) < w.cfg.ResultTimeout)
			if signal {
				t.lastSignal = now
			}
			t.mu.Unlock()
			if signal {
				if err := t.msg.InProgress(); err != nil {
					w.log.Debug("extend job ack deadline", "region", t.q.region, "err", err)
				}
			}
		}
	}
}
