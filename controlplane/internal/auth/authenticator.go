package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Errors of Authenticate and Principal.
var (
	ErrInvalidToken   = errors.New("invalid or expired token")
	ErrOrgRequired    = errors.New("X-Service-Organisation is required: this credential covers several organizations")
	ErrOrgNotCovered  = errors.New("X-Service-Organisation names an organization this credential does not cover")
	ErrNoOrganization = errors.New("this credential belongs to no organization")
)

// Errors of a console session standing in for a bearer token (api.SessionResolver).
var (
	// ErrNoSession: the request carries no session cookie; it needs a bearer token.
	ErrNoSession = errors.New("missing bearer token: send Authorization: Bearer <token>")
	// ErrCSRF: a change made with a session cookie lacks the X-CSRF-Token header that proves
	// it comes from the console's own pages rather than another site's form.
	ErrCSRF = errors.New("X-CSRF-Token is missing or does not match this session's: a change made with the console's session cookie must send it")
)

// CredentialStore resolves secret hashes; *store.Store implements it.
type CredentialStore interface {
	LookupCredential(ctx context.Context, secretHash []byte) (store.Credential, error)
}

var _ CredentialStore = (*store.Store)(nil)

// Principal is the caller of one request, acting in one organization.
type Principal struct {
	Credential store.Credential
	OrgID      uuid.UUID
	Perms      Permissions
}

// Actor is the principal as the audit log records it.
func (p Principal) Actor(remoteIP string) store.Actor {
	a := store.Actor{ID: p.Credential.TokenID.String(), Type: "ApiToken", DisplayName: p.Credential.Display, RemoteIP: remoteIP}
	if p.Credential.Kind == store.CredentialAccessToken {
		a.Type, a.ID = "User", p.Credential.UserID.String()
	}
	return a
}

// AuthenticatorConfig tunes an Authenticator's cache. Zero values take the documented
// defaults.
type AuthenticatorConfig struct {
	// PositiveTTL is how long a found credential stays cached. Default 30s.
	PositiveTTL time.Duration
	// NegativeTTL is how long an unknown secret stays cached. Default 5s.
	NegativeTTL time.Duration
	// MaxEntries bounds the cache; a full cache is cleared. Default 100,000.
	MaxEntries int
}

// AuthenticatorDeps are an Authenticator's collaborators.
type AuthenticatorDeps struct {
	Store CredentialStore // required
	// Now is the clock of cache expiry and credential expiry. Default time.Now.
	Now func() time.Time
	// Logger receives Run's log; the caller sets its component. Default: discarded.
	Logger *slog.Logger
}

// Authenticator turns bearer secrets into credentials, caching lookups in memory.
//
// A positive entry lives for AuthenticatorConfig.PositiveTTL, a negative one for NegativeTTL.
// Positive entries are trusted only while Run listens to the revocation feed: a deleted token
// or a removed member is evicted on every replica as the change commits, and the request that
// made the change can wait until every replica acknowledged it (Expect), so revocation
// takes effect on the next request anywhere. While the feed is down (not started, connection
// lost, database not answering) every request is looked up in the database — fail safe — and
// when it listens again the cache starts empty, since notifications may have been missed.
// Expiry is checked on every request.
type Authenticator struct {
	cfg   AuthenticatorConfig
	store CredentialStore
	now   func() time.Time
	log   *slog.Logger

	mu        sync.Mutex
	cache     map[[32]byte]cacheEntry
	listening bool           // Run listens to the feed: positive entries may be trusted
	feed      RevocationFeed // Run's, while it runs
	gen       uint64         // bumped by every eviction; a lookup that raced one is not cached
	waiters   map[string][]*Expectation
	listeners []ChangeListener // AddChangeListener's
}

type cacheEntry struct {
	cred    store.Credential
	found   bool
	expires time.Time
}

// NewAuthenticator returns an authenticator. It caches positive lookups only while Run
// listens to a revocation feed.
func NewAuthenticator(cfg AuthenticatorConfig, deps AuthenticatorDeps) (*Authenticator, error) {
	if deps.Store == nil {
		return nil, errors.New("authenticator: a credential store is required")
	}
	if cfg.PositiveTTL <= 0 {
		cfg.PositiveTTL = 30 * time.Second
	}
	if cfg.NegativeTTL <= 0 {
		cfg.NegativeTTL = 5 * time.Second
	}
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = 100_000
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	return &Authenticator{cfg: cfg, store: deps.Store, now: deps.Now, log: deps.Logger,
		cache: map[[32]byte]cacheEntry{}, waiters: map[string][]*Expectation{}}, nil
}

// Authenticate resolves a bearer secret. It returns ErrInvalidToken for unknown or expired
// secrets; other errors mean the store could not answer.
func (a *Authenticator) Authenticate(ctx context.Context, secret string) (store.Credential, error) {
	return a.AuthenticateHash(ctx, sha256.Sum256([]byte(secret)))
}

// AuthenticateHash resolves a secret by its hash (HashSecret), exactly as Authenticate resolves
// the secret: the console's sessions keep only the hash of the token they act with, and are
// judged through the same cache and revocation feed as bearer requests.
func (a *Authenticator) AuthenticateHash(ctx context.Context, key [32]byte) (store.Credential, error) {
	now := a.now()
	a.mu.Lock()
	e, ok := a.cache[key]
	trusted := ok && now.Before(e.expires) && (!e.found || a.listening)
	gen := a.gen
	a.mu.Unlock()
	if !trusted {
		cred, err := a.store.LookupCredential(ctx, key[:])
		switch {
		case err == nil:
			e = cacheEntry{cred: cred, found: true, expires: now.Add(a.cfg.PositiveTTL)}
		case errors.Is(err, store.ErrNotFound):
			e = cacheEntry{expires: now.Add(a.cfg.NegativeTTL)}
		default:
			return store.Credential{}, err
		}
		a.mu.Lock()
		// Not cached when an eviction happened meanwhile (the lookup may predate the change
		// it announced), nor a positive while nobody listens for revocations.
		if a.gen == gen && (!e.found || a.listening) {
			if len(a.cache) >= a.cfg.MaxEntries {
				clear(a.cache)
			}
			a.cache[key] = e
		}
		a.mu.Unlock()
	}
	if !e.found || (e.cred.ExpiresAt != nil && !now.Before(*e.cred.ExpiresAt)) {
		return store.Credential{}, ErrInvalidToken
	}
	return e.cred, nil
}

// Forget evicts every cached entry of a token (after it was deleted through this replica; the
// feed tells every replica too).
func (a *Authenticator) Forget(tokenID uuid.UUID) {
	a.evict(func(c store.Credential) bool { return c.TokenID == tokenID })
}

// Listening reports whether Run listens to the revocation feed (positive entries are trusted).
func (a *Authenticator) Listening() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.listening
}

// setListening records the feed that is heard (nil: none); either way the cache starts over,
// since changes may have been missed in between. Nobody waits for a feed that is not heard.
func (a *Authenticator) setListening(feed RevocationFeed) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.listening, a.feed = feed != nil, feed
	a.gen++
	clear(a.cache)
	if feed == nil {
		for p, ws := range a.waiters {
			for _, e := range ws {
				e.release()
			}
			delete(a.waiters, p)
		}
	}
}

// evict drops the positive entries whose credential matches.
func (a *Authenticator) evict(match func(store.Credential) bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen++
	for k, e := range a.cache {
		if e.found && match(e.cred) {
			delete(a.cache, k)
		}
	}
}

// Resolve selects the organization a request acts in. orgHeader is the X-Service-Organisation
// value ("" when absent). An API token acts in its own organization (a header naming another is
// refused); an access token needs the header when its user belongs to several organizations.
func Resolve(cred store.Credential, orgHeader string) (Principal, error) {
	p := Principal{Credential: cred, Perms: NewPermissions(cred.Grants)}
	if orgHeader != "" {
		id, err := uuid.Parse(orgHeader)
		if err != nil {
			return p, ErrOrgNotCovered
		}
		for _, o := range cred.OrgIDs {
			if o == id {
				p.OrgID = id
				return p, nil
			}
		}
		return p, ErrOrgNotCovered
	}
	switch len(cred.OrgIDs) {
	case 0:
		return p, ErrNoOrganization
	case 1:
		p.OrgID = cred.OrgIDs[0]
		return p, nil
	default:
		return p, ErrOrgRequired
	}
}
