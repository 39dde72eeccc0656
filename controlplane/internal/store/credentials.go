package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
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
	var c Credential
	var orgID uuid.UUID
	err := s.pool.QueryRow(ctx, `SELECT id, org_id, name, grants, expires_at FROM api_tokens WHERE secret_hash = $1`, secretHash).
		Scan(&c.TokenID, &orgID, &c.Display, &c.Grants, &c.ExpiresAt)
	if err == nil {
		c.Kind, c.OrgIDs = CredentialAPIToken, []uuid.UUID{orgID}
		return c, nil
	}
	if err != pgx.ErrNoRows {
		return c, translate(err)
	}
	err = s.pool.QueryRow(ctx, `
		SELECT t.id, t.user_id, u.email, t.scopes, t.expires_at,
		       coalesce(array_agg(m.org_id ORDER BY m.org_id) FILTER (WHERE m.org_id IS NOT NULL), '{}')
		FROM access_tokens t JOIN users u ON u.id = t.user_id
		LEFT JOIN memberships m ON m.user_id = t.user_id
		WHERE t.secret_hash = $1
		GROUP BY t.id, u.email`, secretHash).
		Scan(&c.TokenID, &c.UserID, &c.Display, &c.Grants, &c.ExpiresAt, &c.OrgIDs)
	if err != nil {
		return c, translate(err)
	}
	c.Kind = CredentialAccessToken
	return c, nil
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
	t := APIToken{ID: uuid.Must(uuid.NewV7()), OrgID: in.OrgID, Name: in.Name, Grants: in.Grants, ExpiresAt: in.ExpiresAt}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO api_tokens (id, org_id, name, secret_hash, grants, expires_at, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING created_at`,
			t.ID, in.OrgID, in.Name, in.SecretHash, in.Grants, in.ExpiresAt, s.now()).Scan(&t.CreatedAt)
		if err != nil {
			return err
		}
		return writeAudit(ctx, tx, in.OrgID, actor, AuditEvent{
			Action: "created", AuditableType: "ApiToken", AuditableID: t.ID.String(), AuditableDisplayName: t.Name,
		})
	})
	return t, err
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
	u := User{ID: uuid.Must(uuid.NewV7())}
	err := s.pool.QueryRow(ctx, `
		INSERT INTO users (id, email, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (email) DO UPDATE SET email = EXCLUDED.email
		RETURNING id, email, first_name, last_name, image, created_at`, u.ID, email, s.now()).
		Scan(&u.ID, &u.Email, &u.FirstName, &u.LastName, &u.Image, &u.CreatedAt)
	return u, translate(err)
}

// AddMembership makes a user a member of an organization (idempotent; the role is updated).
func (s *Store) AddMembership(ctx context.Context, orgID, userID uuid.UUID, role string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO memberships (org_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (org_id, user_id) DO UPDATE SET role = EXCLUDED.role`, orgID, userID, role, s.now())
	return translate(err)
}

// CreateAccessToken stores an OAuth-style access token for a user, valid in each of the user's
// organizations within its scopes.
func (s *Store) CreateAccessToken(ctx context.Context, userID uuid.UUID, scopes []string, expiresAt *time.Time, secretHash []byte) (uuid.UUID, error) {
	id := uuid.Must(uuid.NewV7())
	_, err := s.pool.Exec(ctx, `INSERT INTO access_tokens (id, user_id, secret_hash, scopes, expires_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, id, userID, secretHash, scopes, expiresAt, s.now())
	return id, translate(err)
}
