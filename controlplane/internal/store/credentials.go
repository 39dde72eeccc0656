package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// Credential kinds.
const (
	CredentialAPIToken    = "api_token"    // bound to one organization
	CredentialAccessToken = "access_token" // OAuth-style, bound to a user and all of their organizations
)

// Credential is what a bearer secret resolves to.
type Credential struct {
	Kind      string
	TokenID   uuid.UUID
	OrgIDs    []uuid.UUID // the one organization of an API token; a user's memberships for an access token
	UserID    uuid.UUID   // access tokens only
	Display   string      // token name or user e-mail, for the audit log
	Grants    []string    // "AREA:LEVEL"
	ExpiresAt *time.Time
}

// LookupCredential resolves a secret's hash to its credential: ErrNotFound when no token has it.
// Expiry is the caller's judgement, since it depends on the clock.
func (s *Store) LookupCredential(ctx context.Context, secretHash []byte) (Credential, error) {
	t, err := s.q.APITokenBySecret(ctx, secretHash)
	if err == nil {
		return Credential{Kind: CredentialAPIToken, TokenID: t.ID, OrgIDs: []uuid.UUID{t.OrgID}, Display: t.Name,
			Grants: t.Grants, ExpiresAt: t.ExpiresAt}, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return Credential{}, translate(err)
	}
	a, err := s.q.AccessTokenBySecret(ctx, secretHash)
	if err != nil {
		return Credential{}, translate(err)
	}
	return Credential{Kind: CredentialAccessToken, TokenID: a.ID, OrgIDs: a.OrgIds, UserID: a.UserID, Display: a.Email,
		Grants: a.Scopes, ExpiresAt: a.ExpiresAt}, nil
}

// Revocation of cached credentials. Every write that takes away what a credential grants
// (deleting a token, removing a member) calls notifyAuthChange in its transaction; PostgreSQL
// delivers the notification to every listening session when the transaction commits.
// ListenAuthChanges is the receiving end, one dedicated session per replica; each listener
// acknowledges what it applied on a second channel, so that the replica that made a change
// can wait until every replica has applied it (CountAuthListeners says how many there are).

// Notification channels (the queries in queries/tokens.sql name them too).
const (
	AuthChannel    = "vantage_auth"     // payload: AuthChangeToken or AuthChangeUser plus an id
	AuthAckChannel = "vantage_auth_ack" // payload: a vantage_auth payload a listener applied
)

// Payloads of AuthChannel notifications.
const (
	AuthChangeToken = "token:" // + the id of an API or access token that was deleted or changed
	AuthChangeUser  = "user:"  // + the id of a user whose memberships changed
)

// AuthListenerName is the application_name of ListenAuthChanges' sessions, by which
// CountAuthListeners finds them (and operators tell them in pg_stat_activity).
const AuthListenerName = "vantage auth revocations"

// notifyAuthChange announces, at commit, that what a credential grants changed.
func notifyAuthChange(ctx context.Context, q *dbsqlc.Queries, kind string, id uuid.UUID) error {
	return q.NotifyAuthChange(ctx, kind+id.String())
}

// AuthChangeHandler receives what ListenAuthChanges hears, one call at a time.
type AuthChangeHandler interface {
	// Listening: the session listens (again); anything may have changed while it did not.
	Listening()
	// Changed: a credential changed (payload as notified). It is acknowledged on
	// AuthAckChannel once Changed returns.
	Changed(payload string)
	// Acknowledged: a listening session — this one or another replica's — applied payload.
	Acknowledged(payload string)
}

// authHealthInterval is how long ListenAuthChanges waits for a notification before it checks
// that its session still answers.
const authHealthInterval = 5 * time.Second

// ListenAuthChanges listens on AuthChannel and AuthAckChannel on a session of its own and
// hands what it hears to h. It returns nil when ctx ends, and an error (translated) when the
// session is lost or stops answering — it checks that the session answers whenever it has
// been quiet for a few seconds, so a frozen or unreachable server is noticed too.
// Notifications sent while no session listens are lost: h.Listening says to assume anything
// changed.
func (s *Store) ListenAuthChanges(ctx context.Context, h AuthChangeHandler) error {
	cfg := s.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = AuthListenerName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return ctxOr(ctx, err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	q := dbsqlc.New(conn)
	if err := q.ListenAuthChanges(ctx); err != nil {
		return ctxOr(ctx, err)
	}
	if err := q.ListenAuthAcks(ctx); err != nil {
		return ctxOr(ctx, err)
	}
	h.Listening()
	for {
		wctx, cancel := context.WithTimeout(ctx, authHealthInterval)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil && n.Channel == AuthChannel:
			h.Changed(n.Payload)
			if err := q.AckAuthChange(ctx, n.Payload); err != nil {
				return ctxOr(ctx, err)
			}
		case err == nil:
			h.Acknowledged(n.Payload)
		case ctx.Err() != nil:
			return nil
		case wctx.Err() != nil: // quiet: make sure the session still answers
			pctx, cancel := context.WithTimeout(ctx, authHealthInterval)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return ctxOr(ctx, err)
			}
		default:
			return translate(err)
		}
	}
}

// CountAuthListeners is the number of sessions listening for credential changes on this
// database: one per replica whose authenticator runs.
func (s *Store) CountAuthListeners(ctx context.Context) (int, error) {
	n, err := s.q.CountAuthListeners(ctx, AuthListenerName)
	return int(n), translate(err)
}

// ctxOr is nil when ctx ended (err is then its consequence), else err translated.
func ctxOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return translate(err)
}

// NewAPIToken is the input of CreateAPIToken.
type NewAPIToken struct {
	OrgID      uuid.UUID
	Name       string
	Grants     []string
	ExpiresAt  *time.Time // nil: never expires
	SecretHash []byte
}

// APIToken is a stored API token (never its secret).
type APIToken struct {
	ID        uuid.UUID
	OrgID     uuid.UUID
	Name      string
	Grants    []string
	ExpiresAt *time.Time
	CreatedAt time.Time
}

// CreateAPIToken stores a token (by the hash of its secret) and audits it.
func (s *Store) CreateAPIToken(ctx context.Context, actor Actor, in NewAPIToken) (APIToken, error) {
	var t dbsqlc.CreateAPITokenRow
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		t, err = s.q.WithTx(tx).CreateAPIToken(ctx, dbsqlc.CreateAPITokenParams{ID: uuid.Must(uuid.NewV7()), OrgID: in.OrgID,
			Name: in.Name, SecretHash: in.SecretHash, Grants: in.Grants, ExpiresAt: in.ExpiresAt, CreatedAt: s.now()})
		if err != nil {
			return err
		}
		return writeAudit(ctx, tx, in.OrgID, actor, AuditEvent{
			Action: "created", AuditableType: "ApiToken", AuditableID: t.ID.String(), AuditableDisplayName: t.Name,
		})
	})
	return APIToken(t), err
}

// User is a person who can belong to several organizations.
type User struct {
	ID        uuid.UUID
	Email     string
	FirstName *string
	LastName  *string
	Image     *string
	CreatedAt time.Time
}

// EnsureUser returns the user with this e-mail, creating it when missing.
func (s *Store) EnsureUser(ctx context.Context, email string) (User, error) {
	u, err := s.q.EnsureUser(ctx, dbsqlc.EnsureUserParams{ID: uuid.Must(uuid.NewV7()), Email: email, CreatedAt: s.now()})
	return User(u), translate(err)
}

// AddMembership makes a user a member of an organization (idempotent; the role is updated).
func (s *Store) AddMembership(ctx context.Context, orgID, userID uuid.UUID, role string) error {
	return translate(s.q.UpsertMembership(ctx, dbsqlc.UpsertMembershipParams{OrgID: orgID, UserID: userID, Role: role, CreatedAt: s.now()}))
}

// CreateAccessToken stores an OAuth-style access token for a user, valid in each of the user's
// organizations within its scopes.
func (s *Store) CreateAccessToken(ctx context.Context, userID uuid.UUID, scopes []string, expiresAt *time.Time, secretHash []byte) (uuid.UUID, error) {
	id := uuid.Must(uuid.NewV7())
	err := s.q.CreateAccessToken(ctx, dbsqlc.CreateAccessTokenParams{ID: id, UserID: userID, SecretHash: secretHash,
		Scopes: scopes, ExpiresAt: expiresAt, CreatedAt: s.now()})
	return id, translate(err)
}
