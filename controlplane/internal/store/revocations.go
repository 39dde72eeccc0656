package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

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
	// AuthChangeAgentToken + the id of a revoked agent token: every replica ends the
	// streams of its agents.
	AuthChangeAgentToken = "agent_token:"
	// AuthChangeBadge + the id of a check whose public badge was disabled: every replica
	// drops the badges it cached, so that the old URLs answer 404 everywhere at once.
	AuthChangeBadge = "badge:"
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
