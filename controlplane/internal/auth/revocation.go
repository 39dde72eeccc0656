package auth

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// RevocationFeed tells an Authenticator which credentials changed; *store.Store implements it
// with PostgreSQL LISTEN/NOTIFY, so a change committed through any replica reaches all.
type RevocationFeed interface {
	// ListenAuthChanges hands what it hears to h until ctx ends (nil) or it stops hearing
	// (an error).
	ListenAuthChanges(ctx context.Context, h store.AuthChangeHandler) error
	// CountAuthListeners is how many replicas listen, each of which acknowledges a change.
	CountAuthListeners(ctx context.Context) (int, error)
}

var _ RevocationFeed = (*store.Store)(nil)

// Run listens to feed until ctx ends, evicting what each change names, and listens again after
// a lost feed with a backoff of 100ms doubling to 5s (logged at warn). It returns nil when ctx
// ends.
func (a *Authenticator) Run(ctx context.Context, feed RevocationFeed) error {
	h := &feedHandler{a: a, feed: feed, log: a.log}
	for {
		err := feed.ListenAuthChanges(ctx, h)
		a.setListening(nil)
		if ctx.Err() != nil {
			return nil
		}
		h.failures++
		d := min(100*time.Millisecond<<min(h.failures-1, 6), 5*time.Second)
		a.log.Warn("credential revocations not heard: every request is checked against the database until they are",
			"err", err, "retry_in", d)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// feedHandler applies what the feed hears to its Authenticator.
type feedHandler struct {
	a        *Authenticator
	feed     RevocationFeed
	log      *slog.Logger
	failures int // consecutive lost feeds
}

var _ store.AuthChangeHandler = (*feedHandler)(nil)

func (h *feedHandler) Listening() {
	h.a.setListening(h.feed)
	h.failures = 0
	h.log.Info("listening for credential revocations")
	for _, l := range h.a.changeListeners() {
		l.ChangesMissed()
	}
}

// Changed evicts what a payload names: a token, or every access token of a user; a payload it
// does not understand clears the cache. Agent tokens and badges are not cached here: the change
// goes to the ChangeListeners (the agents' stream, the public badges), which hear every change
// before it is acknowledged.
func (h *feedHandler) Changed(payload string) {
	kind, rest, _ := strings.Cut(payload, ":")
	id, err := uuid.Parse(rest)
	switch {
	case err == nil && kind+":" == store.AuthChangeToken:
		h.a.evict(func(c store.Credential) bool { return c.TokenID == id })
	case err == nil && kind+":" == store.AuthChangeUser:
		h.a.evict(func(c store.Credential) bool { return c.Kind == store.CredentialAccessToken && c.UserID == id })
	case err == nil && (kind+":" == store.AuthChangeAgentToken || kind+":" == store.AuthChangeBadge):
	default:
		h.a.evict(func(store.Credential) bool { return true })
	}
	for _, l := range h.a.changeListeners() {
		if err != nil {
			l.ChangesMissed()
			continue
		}
		l.CredentialChanged(kind+":", id)
	}
}

// ChangeListener hears, besides the authenticator's own cache, what the revocation feed
// delivers: the agents' gRPC server ends the streams of a revoked agent token through it, so
// that one mechanism revokes every kind of credential on every replica.
type ChangeListener interface {
	// CredentialChanged: a credential of kind (store.AuthChangeToken, AuthChangeUser,
	// AuthChangeAgentToken, AuthChangeBadge) changed. It is called before the change is
	// acknowledged, so that whoever waits for the acknowledgements (Expect) finds the change
	// applied; it must not block.
	CredentialChanged(kind string, id uuid.UUID)
	// ChangesMissed: the feed listens (again) or heard what it does not understand; anything
	// may have changed meanwhile. It must not block.
	ChangesMissed()
}

// AddChangeListener makes l hear the changes Run's feed delivers.
func (a *Authenticator) AddChangeListener(l ChangeListener) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.listeners = append(a.listeners, l)
}

func (a *Authenticator) changeListeners() []ChangeListener {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.listeners
}

// Acknowledged counts a replica's acknowledgement towards the Expectations of payload.
func (h *feedHandler) Acknowledged(payload string) {
	a := h.a
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, e := range a.waiters[payload] {
		e.acks++
		e.settle()
	}
}
