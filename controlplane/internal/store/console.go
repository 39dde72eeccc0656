package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// The web console's sessions and one-time sign-in codes (migration 0020). The console package
// hashes every secret before it gets here; the store never sees a cookie or a code.

// NewConsoleSession is the input of CreateConsoleSession.
type NewConsoleSession struct {
	SecretHash     []byte     // SHA-256 of the session cookie
	CSRFHash       []byte     // SHA-256 of the CSRF cookie
	CredentialHash []byte     // the secret hash of the token the session acts with; unused with MintFor
	OrgID          *uuid.UUID // the organization it acts in; nil: the credential's only one
	ExpiresAt      time.Time
	// MintFor, when set, signs a user in: an access token is minted for the session (and
	// deleted with it), and the session acts with it.
	MintFor *MintedToken
}

// MintedToken is the access token a user's sign-in makes for its session.
type MintedToken struct {
	UserID     uuid.UUID
	Scopes     []string
	SecretHash []byte // the hash of a fresh secret nobody keeps: the token is reachable only through the session
}

// ConsoleSession is a stored session, as each request resolves it.
type ConsoleSession struct {
	ID             uuid.UUID
	CSRFHash       []byte
	CredentialHash []byte
	OrgID          *uuid.UUID
	ExpiresAt      time.Time
}

// CreateConsoleSession stores a session (and, for a user, its access token) in one
// transaction, after sweeping the expired sessions and codes, which keeps both tables as small
// as their live rows without a background job.
func (s *Store) CreateConsoleSession(ctx context.Context, in NewConsoleSession) error {
	now := s.now()
	return s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		if err := sweepConsole(ctx, q, now); err != nil {
			return err
		}
		p := dbsqlc.CreateConsoleSessionParams{ID: uuid.Must(uuid.NewV7()), SecretHash: in.SecretHash, CsrfHash: in.CSRFHash,
			CredentialHash: in.CredentialHash, OrgID: in.OrgID, CreatedAt: now, ExpiresAt: in.ExpiresAt}
		if m := in.MintFor; m != nil {
			id := uuid.Must(uuid.NewV7())
			if err := q.CreateAccessToken(ctx, dbsqlc.CreateAccessTokenParams{ID: id, UserID: m.UserID, SecretHash: m.SecretHash,
				Scopes: m.Scopes, ExpiresAt: &in.ExpiresAt, CreatedAt: now}); err != nil {
				return err
			}
			p.MintedTokenID, p.CredentialHash = &id, m.SecretHash
		}
		return q.CreateConsoleSession(ctx, p)
	})
}

// sweepConsole deletes expired sessions with their minted tokens, and expired codes.
func sweepConsole(ctx context.Context, q *dbsqlc.Queries, now time.Time) error {
	minted, err := q.SweepConsoleSessions(ctx, now)
	if err != nil {
		return err
	}
	for _, id := range minted {
		if id != nil {
			if err := q.DeleteAccessToken(ctx, *id); err != nil {
				return err
			}
		}
	}
	return q.SweepSignInCodes(ctx, now)
}

// ConsoleSessionBySecret finds an unexpired session by the hash of its cookie: ErrNotFound
// when there is none.
func (s *Store) ConsoleSessionBySecret(ctx context.Context, secretHash []byte, now time.Time) (ConsoleSession, error) {
	r, err := s.q.ConsoleSessionBySecret(ctx, dbsqlc.ConsoleSessionBySecretParams{SecretHash: secretHash, Now: now})
	if err != nil {
		return ConsoleSession{}, translate(err)
	}
	return ConsoleSession{ID: r.ID, CSRFHash: r.CsrfHash, CredentialHash: r.CredentialHash, OrgID: r.OrgID, ExpiresAt: r.ExpiresAt}, nil
}

// SetConsoleSessionOrg selects the organization an unexpired session acts in: ErrNotFound when
// the session is gone. Whether the credential covers it is the caller's judgement.
func (s *Store) SetConsoleSessionOrg(ctx context.Context, secretHash []byte, orgID uuid.UUID, now time.Time) error {
	n, err := s.q.SetConsoleSessionOrg(ctx, dbsqlc.SetConsoleSessionOrgParams{OrgID: &orgID, SecretHash: secretHash, Now: now})
	if err != nil {
		return translate(err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// DeleteConsoleSession signs a session out: its row goes, with the access token minted for it.
// A session that is gone already is not an error (signing out twice is signing out).
func (s *Store) DeleteConsoleSession(ctx context.Context, secretHash []byte) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		minted, err := q.DeleteConsoleSession(ctx, secretHash)
		if err != nil {
			return ignoreNoRows(err)
		}
		if minted == nil {
			return nil
		}
		if err := q.DeleteAccessToken(ctx, *minted); err != nil {
			return err
		}
		return notifyAuthChange(ctx, q, AuthChangeToken, *minted)
	})
}

// ignoreNoRows makes "nothing matched" a success.
func ignoreNoRows(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	return err
}

// NewSignInCode is the input of CreateSignInCode: a code signs in with a token's credential or
// as a user, exactly one of the two.
type NewSignInCode struct {
	CodeHash       []byte
	CredentialHash []byte
	UserID         *uuid.UUID
	ExpiresAt      time.Time
}

// CreateSignInCode stores a one-time sign-in code.
func (s *Store) CreateSignInCode(ctx context.Context, in NewSignInCode) error {
	return translate(s.q.CreateSignInCode(ctx, dbsqlc.CreateSignInCodeParams{CodeHash: in.CodeHash,
		CredentialHash: in.CredentialHash, UserID: in.UserID, CreatedAt: s.now(), ExpiresAt: in.ExpiresAt}))
}

// SignInCode is what a taken code signs in with: a credential's hash or a user.
type SignInCode struct {
	CredentialHash []byte
	UserID         *uuid.UUID
}

// TakeSignInCode uses up an unexpired code: ErrNotFound when there is none (made up, used, or
// expired). Two requests with one code cannot both take it.
func (s *Store) TakeSignInCode(ctx context.Context, codeHash []byte, now time.Time) (SignInCode, error) {
	r, err := s.q.TakeSignInCode(ctx, dbsqlc.TakeSignInCodeParams{CodeHash: codeHash, Now: now})
	if err != nil {
		return SignInCode{}, translate(err)
	}
	return SignInCode(r), nil
}

// SignInUser is a user who may sign in: a member of at least one organization. Admin: every
// membership is ADMIN.
type SignInUser struct {
	ID     uuid.UUID
	Email  string
	Admin  bool
	OrgIDs []uuid.UUID
}

// SignInUserByEmail finds the member with this address (case-insensitive): ErrNotFound when no
// member has it.
func (s *Store) SignInUserByEmail(ctx context.Context, email string) (SignInUser, error) {
	r, err := s.q.SignInUserByEmail(ctx, email)
	return SignInUser{ID: r.ID, Email: r.Email, Admin: r.Admin, OrgIDs: r.OrgIds}, translate(err)
}

// SignInUserByID finds a member by id: ErrNotFound when the user belongs to no organization.
func (s *Store) SignInUserByID(ctx context.Context, id uuid.UUID) (SignInUser, error) {
	r, err := s.q.SignInUserByID(ctx, id)
	return SignInUser{ID: r.ID, Email: r.Email, Admin: r.Admin, OrgIDs: r.OrgIds}, translate(err)
}

// OrganizationName is an organization's id and name.
type OrganizationName struct {
	ID   uuid.UUID
	Name string
}

// OrganizationNames names the organizations of ids (those a credential covers), by name.
func (s *Store) OrganizationNames(ctx context.Context, ids []uuid.UUID) ([]OrganizationName, error) {
	rows, err := s.q.OrganizationNames(ctx, ids)
	if err != nil {
		return nil, translate(err)
	}
	out := make([]OrganizationName, len(rows))
	for i, r := range rows {
		out[i] = OrganizationName(r)
	}
	return out, nil
}
