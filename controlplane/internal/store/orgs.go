package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// Organization is the tenant.
type Organization struct {
	ID        uuid.UUID
	Name      string
	Plan      string // "free" or "paid"
	CreatedAt time.Time
}

// CreateOrganization creates an organization on the given plan.
func (s *Store) CreateOrganization(ctx context.Context, name, plan string) (Organization, error) {
	o, err := s.q.CreateOrganization(ctx, dbsqlc.CreateOrganizationParams{
		ID: uuid.Must(uuid.NewV7()), Name: name, Plan: plan, CreatedAt: s.now(),
	})
	return Organization(o), translate(err)
}

// GetOrganization returns one organization.
func (s *Store) GetOrganization(ctx context.Context, id uuid.UUID) (Organization, error) {
	o, err := s.q.GetOrganization(ctx, id)
	return Organization(o), translate(err)
}

// ListOrganizations returns every organization, oldest first. It is for operators (the admin
// command), never for API callers, who only ever see their own organization.
func (s *Store) ListOrganizations(ctx context.Context) ([]Organization, error) {
	rows, err := s.q.ListOrganizations(ctx)
	if err != nil {
		return nil, translate(err)
	}
	orgs := make([]Organization, len(rows))
	for i, o := range rows {
		orgs[i] = Organization(o)
	}
	return orgs, nil
}

// BootstrapOrgName names the organization that EnsureBootstrap creates.
const BootstrapOrgName = "Default organization"

// EnsureBootstrap makes sure an API token whose secret hashes to secretHash exists, with every
// grant, in a paid organization, creating both on first start. It is idempotent, and safe when
// several replicas start at once (the unique secret hash decides).
func (s *Store) EnsureBootstrap(ctx context.Context, secretHash []byte, grants []string) (orgID, tokenID uuid.UUID, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		if err := q.LockBootstrap(ctx, migrationLockKey+1); err != nil {
			return err
		}
		existing, err := q.BootstrapTokenBySecret(ctx, secretHash)
		if err == nil {
			orgID, tokenID = existing.OrgID, existing.ID
			// Keep the bootstrap token all-powerful as new areas are added.
			if err := q.SetTokenGrants(ctx, dbsqlc.SetTokenGrantsParams{ID: tokenID, Grants: grants}); err != nil {
				return err
			}
			return notifyAuthChange(ctx, q, AuthChangeToken, tokenID)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		orgID, tokenID = uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
		now := s.now()
		if _, err := q.CreateOrganization(ctx, dbsqlc.CreateOrganizationParams{
			ID: orgID, Name: BootstrapOrgName, Plan: "paid", CreatedAt: now,
		}); err != nil {
			return err
		}
		if err := q.CreateBootstrapToken(ctx, dbsqlc.CreateBootstrapTokenParams{
			ID: tokenID, OrgID: orgID, SecretHash: secretHash, Grants: grants, CreatedAt: now,
		}); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, SystemActor, AuditEvent{
			Action: "created", AuditableType: "ApiToken", AuditableID: tokenID.String(), AuditableDisplayName: "bootstrap",
		})
	})
	if err != nil {
		return uuid.Nil, uuid.Nil, fmt.Errorf("bootstrap: %w", err)
	}
	return orgID, tokenID, nil
}
