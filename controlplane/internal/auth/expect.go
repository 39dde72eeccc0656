package auth

import (
	"context"
	"sync"
)

// Expectation waits until every replica applied a revocation this replica is about to commit;
// see Authenticator.Expect. Its fields are guarded by the Authenticator's mutex.
type Expectation struct {
	a       *Authenticator
	payload string
	acks    int // acknowledgements heard so far
	need    int // acknowledgements to wait for; -1 until Wait knows
	done    chan struct{}
	once    sync.Once
}

// Expect prepares to wait for a revocation — payload is store.AuthChangeToken or
// store.AuthChangeUser plus an id — that the caller is about to commit. Call it before the
// commit and Wait after it: Wait returns once every replica listening for revocations has
// evicted what the change names, so a client that learns of the revocation from this
// replica's answer finds it in force everywhere. Cancel an Expectation whose change did not
// commit.
func (a *Authenticator) Expect(payload string) *Expectation {
	e := &Expectation{a: a, payload: payload, need: -1, done: make(chan struct{})}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.listening {
		e.release() // nothing is cached here; no way to hear the others
		return e
	}
	a.waiters[payload] = append(a.waiters[payload], e)
	return e
}

// Wait returns once every listening replica acknowledged the change, the feed was lost, or
// ctx ended (give it a short deadline: the change is committed either way, and a replica
// that does not acknowledge is frozen or gone).
func (e *Expectation) Wait(ctx context.Context) {
	defer e.Cancel()
	a := e.a
	a.mu.Lock()
	feed := a.feed
	a.mu.Unlock()
	if feed == nil {
		return
	}
	n, err := feed.CountAuthListeners(ctx)
	if err != nil {
		return
	}
	a.mu.Lock()
	e.need = n
	e.settle()
	a.mu.Unlock()
	select {
	case <-e.done:
	case <-ctx.Done():
	}
}

// Cancel stops waiting and forgets the Expectation.
func (e *Expectation) Cancel() {
	a := e.a
	a.mu.Lock()
	defer a.mu.Unlock()
	ws := a.waiters[e.payload]
	for i, w := range ws {
		if w == e {
			ws = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(a.waiters, e.payload)
	} else {
		a.waiters[e.payload] = ws
	}
	e.release()
}

// settle releases the waiter once enough acknowledgements were heard (mutex held).
func (e *Expectation) settle() {
	if e.need >= 0 && e.acks >= e.need {
		e.release()
	}
}

func (e *Expectation) release() { e.once.Do(func() { close(e.done) }) }
