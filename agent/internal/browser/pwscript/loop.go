package pwscript

import (
	"container/heap"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// loop is the event loop of one run. goja is single-threaded: everything that touches the
// runtime happens on the goroutine that calls wait. Browser operations run on their own
// goroutines and hand their results back through post; timers (setTimeout) fire between
// jobs. A loop of our own rather than goja_nodejs's, because the runner needs to know what is
// outstanding at any moment — the operations in flight and the timers — to say what a
// timed-out test was waiting for, and to see at once that a test awaits a promise nothing
// can settle any more; and because nothing else of Node's is wanted here.
type loop struct {
	vm     *goja.Runtime
	posted chan func() error
	ops    map[uint64]*pendingOp
	nextID uint64
	timers timerHeap

	// Browser events for the script (page.on listeners, routes) queue here: the CDP reader
	// that delivers them must never block on a loop that is not running (between tests).
	mu     sync.Mutex
	queued []func() error
	wake   chan struct{}
	// listening counts what can still call into the script from the browser (page.on
	// listeners, routes): while it is above zero a pending promise is not stalled.
	listening int
}

// pendingOp is an asynchronous API call in flight.
type pendingOp struct {
	what, where string // "locator.click(getByRole('button'))", "login.spec.ts:12:5"
}

func newLoop(vm *goja.Runtime) *loop {
	return &loop{vm: vm, posted: make(chan func() error, 64), ops: map[uint64]*pendingOp{}, wake: make(chan struct{}, 1)}
}

// errStalled: the awaited promise is pending and nothing (no operation, no timer) can settle it.
var errStalled = errors.New("stalled")

// begin records an operation in flight; done(id) must follow, on the loop.
func (l *loop) begin(what, where string) uint64 {
	l.nextID++
	l.ops[l.nextID] = &pendingOp{what: what, where: where}
	return l.nextID
}

func (l *loop) done(id uint64) { delete(l.ops, id) }

// post runs f on the loop. It may be called from any goroutine. A non-nil error from f (an
// interrupt) ends the wait that runs it.
func (l *loop) post(f func() error) { l.posted <- f }

// enqueue runs f on the loop, without ever blocking: for browser events, which arrive on
// chromedp's reading goroutine whether or not a test is running.
func (l *loop) enqueue(f func() error) {
	l.mu.Lock()
	l.queued = append(l.queued, f)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// runQueued runs the queued browser events in order; the first error ends the run of them
// (the rest stay queued).
func (l *loop) runQueued() error {
	for {
		l.mu.Lock()
		if len(l.queued) == 0 {
			l.mu.Unlock()
			return nil
		}
		f := l.queued[0]
		l.queued = l.queued[1:]
		l.mu.Unlock()
		if err := f(); err != nil {
			if l.hasQueued() {
				select {
				case l.wake <- struct{}{}:
				default:
				}
			}
			return err
		}
	}
}

func (l *loop) hasQueued() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queued) > 0
}

// wait runs the loop until p settles, ctx ends (returning ctx's error) or nothing is left
// that could settle p (errStalled). An error from a job (an interrupted script) is returned.
func (l *loop) wait(ctx context.Context, p *goja.Promise) error {
	for p.State() == goja.PromiseStatePending {
		if len(l.ops) == 0 && l.timers.Len() == 0 && len(l.posted) == 0 && l.listening == 0 && !l.hasQueued() {
			return errStalled
		}
		if err := l.step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// step runs one posted job or the due timers, waiting for either.
func (l *loop) step(ctx context.Context) error {
	var fire <-chan time.Time
	if l.timers.Len() > 0 {
		t := time.NewTimer(time.Until(l.timers[0].at))
		defer t.Stop()
		fire = t.C
	}
	select {
	case f := <-l.posted:
		return f()
	case <-l.wake:
		return l.runQueued()
	case <-fire:
		return l.fireTimers()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// timer is a setTimeout/setInterval callback.
type timer struct {
	id    int64
	at    time.Time
	every time.Duration // 0 for setTimeout
	fn    goja.Callable
	args  []goja.Value
	where string
	index int
}

type timerHeap []*timer

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h timerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *timerHeap) Push(x any)        { t := x.(*timer); t.index = len(*h); *h = append(*h, t) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

func (l *loop) addTimer(t *timer) { heap.Push(&l.timers, t) }

func (l *loop) clearTimer(id int64) {
	for _, t := range l.timers {
		if t.id == id {
			heap.Remove(&l.timers, t.index)
			return
		}
	}
}

// fireTimers calls the callbacks of the timers that are due. A callback that throws is an
// uncaught error: it is returned as a *goja.Exception for the test in progress.
func (l *loop) fireTimers() error {
	now := time.Now()
	for l.timers.Len() > 0 && !l.timers[0].at.After(now) {
		t := heap.Pop(&l.timers).(*timer)
		if t.every > 0 {
			t.at = now.Add(t.every)
			heap.Push(&l.timers, t)
		}
		if _, err := t.fn(goja.Undefined(), t.args...); err != nil {
			return err
		}
	}
	return nil
}

// timerDescriptions names the pending timers, for a timeout message.
func (l *loop) timerDescriptions() []string {
	var out []string
	for _, t := range l.timers {
		out = append(out, t.where)
	}
	return out
}
