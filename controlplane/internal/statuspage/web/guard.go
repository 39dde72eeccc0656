package web

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/ratelimit"
)

// The password form is the one place where an anonymous client makes the server do expensive
// work (PBKDF2, ~100 ms of a core), so it is bounded twice: attempts are rate-limited per page
// and client address (guessing), and the hashing itself is shared fairly between pages (one
// page flooded cannot hold every hashing slot and stall the private pages of other tenants).

// Defaults of the password attempt limits (Config).
const (
	defaultAttemptsPerAddress = 5                // burst per page and client address
	defaultAddressRefill      = 12 * time.Second // one more attempt per page and address every 12 s (5 a minute)
	defaultAttemptsPerPage    = 60               // burst per page, every address together
	defaultPageRefill         = time.Second      // one more attempt per page every second
)

// pageLimits are two limits of a form of a page, shared by every replica: per page and client
// address, then per page from every address. Both fail closed: they stop guessing and bulk
// mail, so a form whose limits cannot be read is refused (the page answers 503).
type pageLimits struct {
	lim                 ratelimit.Limiter
	perAddress, perPage ratelimit.Rule
}

func newAttemptLimits(lim ratelimit.Limiter, o Config) pageLimits {
	return pageLimits{lim: lim,
		perAddress: ratelimit.Rule{Name: "statuspage_password_address", Every: o.PasswordAddressRefill,
			Burst: o.PasswordAttemptsPerAddress, OnError: ratelimit.FailClosed},
		perPage: ratelimit.Rule{Name: "statuspage_password_page", Every: o.PasswordPageRefill,
			Burst: o.PasswordAttemptsPerPage, OnError: ratelimit.FailClosed}}
}

// reserve takes one use of page's form from addr at now; it returns 0 when the request may go
// on, else how long to wait (and takes nothing from the page's bucket then). An error means
// the limits could not be read: refuse the request.
func (l pageLimits) reserve(ctx context.Context, page, addr string, now time.Time) (time.Duration, error) {
	if wait, err := l.lim.Reserve(ctx, l.perAddress, page+"|"+addr, now); wait > 0 || err != nil {
		return wait, err
	}
	return l.lim.Reserve(ctx, l.perPage, page, now)
}

// fairSlots bounds concurrent password hashing: at most one hash per page at a time, and at
// most cap(global) in all. A page's waiting attempts queue on their page's slot, not on the
// global ones, so the other pages always find a free global slot soon.
type fairSlots struct {
	global chan struct{}
	mu     sync.Mutex
	pages  map[string]*pageSlot
}

type pageSlot struct {
	ch   chan struct{}
	refs int
}

// newFairSlots allows n hashes at once (default: the number of CPUs, at least 2).
func newFairSlots(n int) *fairSlots {
	if n <= 0 {
		n = max(2, runtime.GOMAXPROCS(0))
	}
	return &fairSlots{global: make(chan struct{}, n), pages: map[string]*pageSlot{}}
}

// do runs fn holding page's slot and a global one; it returns false without running fn when ctx
// ends first.
func (s *fairSlots) do(ctx context.Context, page string, fn func()) bool {
	s.mu.Lock()
	ps := s.pages[page]
	if ps == nil {
		ps = &pageSlot{ch: make(chan struct{}, 1)}
		s.pages[page] = ps
	}
	ps.refs++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if ps.refs--; ps.refs == 0 {
			delete(s.pages, page)
		}
		s.mu.Unlock()
	}()
	select {
	case ps.ch <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	defer func() { <-ps.ch }()
	select {
	case s.global <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	defer func() { <-s.global }()
	fn()
	return true
}
