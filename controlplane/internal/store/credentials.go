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
