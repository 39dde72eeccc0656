package ingest

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/jobguard"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Who may open a stream, for which regions, and which results it may send.
//
// An agent presents either an agent token (admin create-agent-token), bound to a set of
// regions and looked up by its hash on every stream it opens, or — for local development —
// the shared token (VANTAGE_AGENT_TOKEN), which allows any region. It may register only for
// regions its token allows, and receives the keys of those regions' sealed job secrets. Each
// result must carry the signature of a job published to one of the regions the stream
// registered for (JobGuard), so that no credential lets an agent report on checks or regions
// it was not sent.
//
// A revoked token ends its streams: store.RevokeAgentToken notifies every replica through
// the API's revocation feed (auth.Authenticator), which tells this server
// (CredentialChanged) before it acknowledges the change; when the feed was lost, and every
// RecheckInterval regardless, the tokens of the live streams are looked up again
// (WatchRevocations).

// AgentTokens resolves agent tokens; *store.Store implements it.
type AgentTokens interface {
	// AgentTokenBySecret resolves a secret's hash to a valid token, or store.ErrNotFound.
	AgentTokenBySecret(ctx context.Context, secretHash []byte) (store.AgentToken, error)
	// ActiveAgentTokens returns those of ids that exist and are not revoked.
	ActiveAgentTokens(ctx context.Context, ids []uuid.UUID) ([]uuid.UUID, error)
}

var _ AgentTokens = (*store.Store)(nil)

// JobGuard checks results against the signature of their job and gives agents the keys of
// their regions; *jobguard.Guard implements it.
type JobGuard interface {
	// VerifyResult returns the bounds of the job whose signature r carries, or an error when
	// r carries none that matches it.
	VerifyResult(r *vantagev1.CheckResult) (jobguard.Bounds, error)
	RegionKeys(regions []string) ([]*vantagev1.RegionKey, error)
}

var _ JobGuard = (*jobguard.Guard)(nil)

var _ auth.ChangeListener = (*Server)(nil)

// credential is what a stream's bearer token grants.
type credential struct {
	tokenID *uuid.UUID // nil: the shared token
	name    string
	regions []string // the regions it may serve; nil: any (the shared token)
}

// errRevoked ends the streams of a revoked token. Unauthenticated is fatal to the agent: it
// stops instead of reconnecting with a token that will not be accepted again.
var errRevoked = status.Error(codes.Unauthenticated, "the agent token was revoked")

// authenticate resolves "authorization: Bearer <token>": the shared token (compared in
// constant time) or an agent token.
func (s *Server) authenticate(ctx context.Context) (credential, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		scheme, token, ok := strings.Cut(v, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			continue
		}
		h := sha256.Sum256([]byte(strings.TrimSpace(token)))
		if s.sharedHash != nil && subtle.ConstantTimeCompare(h[:], s.sharedHash) == 1 {
			return credential{name: "shared"}, nil
		}
		if s.tokens == nil {
			break
		}
		t, err := s.tokens.AgentTokenBySecret(ctx, h[:])
		switch {
		case err == nil:
			id := t.ID
			return credential{tokenID: &id, name: t.Name, regions: t.Regions}, nil
		case !errors.Is(err, store.ErrNotFound):
			return credential{}, status.Error(codes.Unavailable, "cannot check the agent token now; retry")
		}
	}
	return credential{}, status.Error(codes.Unauthenticated, "a valid agent token is required (authorization: Bearer <token>)")
}

// admit refuses a registration for regions the credential does not allow.
func admit(c credential, regions []string) error {
	if c.regions == nil {
		return nil
	}
	var refused []string
	for _, r := range regions {
		if !slices.Contains(c.regions, r) {
			refused = append(refused, r)
		}
	}
	if len(refused) > 0 {
		return status.Errorf(codes.PermissionDenied, "agent token %s (%s) may serve %s, not %s",
			c.tokenID, c.name, strings.Join(c.regions, ", "), strings.Join(refused, ", "))
	}
	return nil
}

// registered is the Registered message of an admitted agent: its session and the keys of
// its regions' sealed job secrets.
func (s *Server) registered(a Agent) (*vantagev1.Registered, error) {
	keys, err := s.guard.RegionKeys(a.Regions)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "region keys: %v", err)
	}
	return &vantagev1.Registered{SessionId: a.SessionID, RegionKeys: keys, ProtocolVersion: a.Protocol,
		Capabilities: a.Caps, ServerTimeUnixMs: s.now().UnixMilli(), CanaryUrl: s.cfg.CanaryURL}, nil
}

// revocations tracks the live streams of agent tokens, to end them when their token is
// revoked.
type revocations struct {
	mu      sync.Mutex
	streams map[uuid.UUID]map[string]context.CancelCauseFunc // token → session → cancel
	revoked map[uuid.UUID]bool                               // heard revoked while this replica runs
	recheck chan struct{}                                    // pokes WatchRevocations
}

func newRevocations() *revocations {
	return &revocations{streams: map[uuid.UUID]map[string]context.CancelCauseFunc{}, revoked: map[uuid.UUID]bool{},
		recheck: make(chan struct{}, 1)}
}

// track records a stream of c; untrack forgets it. A token heard revoked since it was looked
// up is refused here.
func (r *revocations) track(c credential, sessionID string, cancel context.CancelCauseFunc) (untrack func(), err error) {
	if c.tokenID == nil {
		return func() {}, nil
	}
	id := *c.tokenID
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.revoked[id] {
		return nil, errRevoked
	}
	if r.streams[id] == nil {
		r.streams[id] = map[string]context.CancelCauseFunc{}
	}
	r.streams[id][sessionID] = cancel
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.streams[id], sessionID)
		if len(r.streams[id]) == 0 {
			delete(r.streams, id)
		}
	}, nil
}

// revoke ends every stream of token id and refuses its later streams.
func (r *revocations) revoke(id uuid.UUID) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.revoked[id] = true
	for _, cancel := range r.streams[id] {
		cancel(errRevoked)
	}
	return len(r.streams[id])
}

func (r *revocations) liveTokens() []uuid.UUID {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]uuid.UUID, 0, len(r.streams))
	for id := range r.streams {
		ids = append(ids, id)
	}
	return ids
}

// CredentialChanged implements auth.ChangeListener: a revoked agent token's streams end.
func (s *Server) CredentialChanged(kind string, id uuid.UUID) {
	if kind != store.AuthChangeAgentToken {
		return
	}
	if n := s.revs.revoke(id); n > 0 {
		s.log.Info("agent token revoked: its streams end", "token_id", id.String(), "streams", n)
	}
}

// ChangesMissed implements auth.ChangeListener: the live streams' tokens are looked up again.
func (s *Server) ChangesMissed() {
	select {
	case s.revs.recheck <- struct{}{}:
	default:
	}
}

// RecheckInterval is how often WatchRevocations looks up the tokens of the live streams,
// whatever the revocation feed says: the bound on a revocation's delay while the feed is down.
const RecheckInterval = 30 * time.Second

// WatchRevocations looks up the tokens of the live streams every RecheckInterval and when
// the revocation feed may have missed changes, and ends the streams of tokens that are gone
// or revoked. It returns nil when ctx ends; a failed lookup is logged and retried.
func (s *Server) WatchRevocations(ctx context.Context) error {
	if s.tokens == nil {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(RecheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-s.revs.recheck:
		}
		ids := s.revs.liveTokens()
		if len(ids) == 0 {
			continue
		}
		active, err := s.tokens.ActiveAgentTokens(ctx, ids)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("cannot recheck the agent tokens of live streams", "err", err)
			}
			continue
		}
		for _, id := range ids {
			if !slices.Contains(active, id) {
				s.CredentialChanged(store.AuthChangeAgentToken, id)
			}
		}
	}
}
