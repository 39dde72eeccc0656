package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
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
	org := Organization{ID: uuid.Must(uuid.NewV7()), Name: name, Plan: plan}
	err := s.pool.QueryRow(ctx,
		`INSERT INTO organizations (id, name, plan, created_at) VALUES ($1, $2, $3, $4) RETURNING created_at`,
		org.ID, name, plan, s.now()).Scan(&org.CreatedAt)
	return org, translate(err)
}

// GetOrganization returns one organization.
func (s *Store) GetOrganization(ctx context.Context, id uuid.UUID) (Organization, error) {
	var o Organization
	err := s.pool.QueryRow(ctx, `SELECT id, name, plan, created_at FROM organizations WHERE id = $1`, id).
		Scan(&o.ID, &o.Name, &o.Plan, &o.CreatedAt)
	return o, translate(err)
}

// ListOrganizations returns every organization, oldest first. It is for operators (the admin
// command), never for API callers, who only ever see their own organization.
func (s *Store) ListOrganizations(ctx context.Context) ([]Organization, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, name, plan, created_at FROM organizations ORDER BY created_at, id`)
	if err != nil {
		return nil, translate(err)
	}
	orgs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Organization, error) {
		var o Organization
		err := r.Scan(&o.ID, &o.Name, &o.Plan, &o.CreatedAt)
		return o, err
	})
	return orgs, translate(err)
}

// BootstrapOrgName names the organization that EnsureBootstrap creates.
const BootstrapOrgName = "Default organization"

// EnsureBootstrap makes sure an API token whose secret hashes to secretHash exists, with every
// grant, in a paid organization, creating both on first start. It is idempotent, and safe when
// several replicas start at once (the unique secret hash decides).
func (s *Store) EnsureBootstrap(ctx context.Context, secretHash []byte, grants []string) (orgID, tokenID uuid.UUID, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLockKey+1); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `SELECT org_id, id FROM api_tokens WHERE secret_hash = $1`, secretHash).Scan(&orgID, &tokenID)
		if err == nil {
			// Keep the bootstrap token all-powerful as new areas are added.
			_, err = tx.Exec(ctx, `UPDATE api_tokens SET grants = $2 WHERE id = $1`, tokenID, grants)
			return err
		}
		if err != pgx.ErrNoRows {
			return err
		}
		orgID, tokenID = uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
		now := s.now()
		if _, err := tx.Exec(ctx, `INSERT INTO organizations (id, name, plan, created_at) VALUES ($1, $2, 'paid', $3)`,
			orgID, BootstrapOrgName, now); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO api_tokens (id, org_id, name, secret_hash, grants, expires_at, created_at)
			VALUES ($1, $2, 'bootstrap', $3, $4, NULL, $5)`, tokenID, orgID, secretHash, grants, now); err != nil {
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
