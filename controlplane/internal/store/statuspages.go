package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
)

// spQuerier is a pool or a transaction.
type spQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// StatusPageListItem is a page as the list shows it, with what the organization's plan allows.
type StatusPageListItem struct {
	statuspage.Page
	CustomDomainEntitled      bool `json:"custom_domain_entitled"`
	PrivateStatusPageEntitled bool `json:"private_status_page_entitled"`
}

// StatusPageInput is the body shared by page create and update (supplement §2.6). On update,
// nil optional fields keep their value.
type StatusPageInput struct {
	Name      string
	Subdomain string
	// CustomDomain: nil keeps; a pointer to "" clears; otherwise the host name to store.
	CustomDomain *string
	// PasswordHash: nil keeps; a pointer to nil removes the password; otherwise the new hash.
	PasswordHash *[]byte
	// Description: nil keeps; a pointer to "" clears.
	Description           *string
	HideFromSearchEngines *bool
	AllowedIPs            *[]string
}

// pageColumns select a page with what its overall status is derived from and its plan.
const pageColumns = `p.id, p.name, p.subdomain, p.custom_domain, p.password_hash IS NOT NULL, p.description,
	p.hide_from_search_engines, p.allowed_ips, p.favicon_url, p.logo_url, p.dark_logo_url,
	coalesce((SELECT array_agg(c.status) FROM status_page_components c WHERE c.status_page_id = p.id), '{}'),
	coalesce((SELECT array_agg(i.impact) FROM status_page_incidents i WHERE i.status_page_id = p.id
		AND i.ended IS NULL AND i.maintenance_state IS NULL), '{}'),
	EXISTS (SELECT 1 FROM status_page_incidents i WHERE i.status_page_id = p.id AND i.maintenance_state = 'IN_PROGRESS'),
	o.plan`

const pageFrom = ` FROM status_pages p JOIN organizations o ON o.id = p.org_id `

func scanPage(row pgx.Row) (StatusPageListItem, error) {
	var it StatusPageListItem
	var id uuid.UUID
	var comps, impacts []string
	var maint bool
	var plan string
	p := &it.Page
	err := row.Scan(&id, &p.Name, &p.Subdomain, &p.CustomDomain, &p.HasPassword, &p.Description,
		&p.HideFromSearchEngines, &p.AllowedIPs, &p.FaviconURL, &p.LogoURL, &p.DarkLogoURL, &comps, &impacts, &maint, &plan)
	if err != nil {
		return it, err
	}
	p.ID = id.String()
	p.Status = statuspage.Overall(comps, impacts, maint)
	p.Private = p.HasPassword || len(p.AllowedIPs) > 0
	it.CustomDomainEntitled = plan == "paid"
	it.PrivateStatusPageEntitled = plan == "paid"
	return it, nil
}

// ListStatusPages returns one page of the organization's status pages, newest first; search
// matches the name or subdomain, case-insensitively.
func (s *Store) ListStatusPages(ctx context.Context, orgID uuid.UUID, search string, limit, offset int64) ([]StatusPageListItem, int64, error) {
	where := `p.org_id = $1 AND ($2 = '' OR strpos(lower(p.name), lower($2)) > 0 OR strpos(lower(p.subdomain), lower($2)) > 0)`
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM status_pages p WHERE `+where, orgID, search).Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+pageColumns+pageFrom+`WHERE `+where+`
		ORDER BY p.created_at DESC, p.id DESC LIMIT $3 OFFSET $4`, orgID, search, limit, offset)
	if err != nil {
		return nil, 0, translate(err)
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (StatusPageListItem, error) { return scanPage(r) })
	return items, total, translate(err)
}

// GetStatusPage returns one page of the organization.
func (s *Store) GetStatusPage(ctx context.Context, orgID, id uuid.UUID) (statuspage.Page, error) {
	it, err := scanPage(s.pool.QueryRow(ctx, `SELECT `+pageColumns+pageFrom+`WHERE p.org_id = $1 AND p.id = $2`, orgID, id))
	return it.Page, translate(err)
}

// GetStatusPageBySubdomain returns the page served at subdomain (case-insensitive), whichever
// organization owns it: the public summary's lookup.
func (s *Store) GetStatusPageBySubdomain(ctx context.Context, subdomain string) (orgID uuid.UUID, p statuspage.Page, err error) {
	if err := s.pool.QueryRow(ctx, `SELECT org_id FROM status_pages WHERE lower(subdomain) = lower($1)`, subdomain).Scan(&orgID); err != nil {
		return orgID, p, translate(err)
	}
	it, err := scanPage(s.pool.QueryRow(ctx, `SELECT `+pageColumns+pageFrom+`WHERE p.org_id = $1 AND lower(p.subdomain) = lower($2)`, orgID, subdomain))
	return orgID, it.Page, translate(err)
}

// StatusPageInOtherOrg reports whether a page with this id exists in another organization than
// orgID. It is the one status page query that looks across organizations: the subscriber routes
// answer 403 rather than 404 for such a page (api.md).
func (s *Store) StatusPageInOtherOrg(ctx context.Context, orgID, id uuid.UUID) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM status_pages WHERE id = $2 AND org_id <> $1)`, orgID, id).Scan(&ok)
	return ok, translate(err)
}

// pageConflict turns unique violations of the subdomain or custom domain into typed conflicts.
func pageConflict(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		switch pgErr.ConstraintName {
		case "status_pages_subdomain":
			return &ConflictError{Type: "subdomain_taken", Code: 409, Message: "subdomain: another status page already uses this subdomain"}
		case "status_pages_custom_domain":
			return &ConflictError{Type: "custom_domain_taken", Code: 409, Message: "custom_domain: another status page already uses this domain"}
		}
	}
	return err
}

// CreateStatusPage creates a page and audits it.
func (s *Store) CreateStatusPage(ctx context.Context, actor Actor, orgID uuid.UUID, in StatusPageInput) (statuspage.Page, error) {
	id := uuid.Must(uuid.NewV7())
	var page statuspage.Page
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		now := s.now()
		var hash []byte
		if in.PasswordHash != nil {
			hash = *in.PasswordHash
		}
		var ips []string
		if in.AllowedIPs != nil {
			ips = *in.AllowedIPs
		}
		hide := in.HideFromSearchEngines != nil && *in.HideFromSearchEngines
		_, err := tx.Exec(ctx, `INSERT INTO status_pages (id, org_id, name, subdomain, custom_domain, password_hash,
				description, hide_from_search_engines, allowed_ips, created_at, updated_at)
			VALUES ($1, $2, $3, $4, nullif($5, ''), $6, nullif($7, ''), $8, $9, $10, $10)`,
			id, orgID, in.Name, in.Subdomain, in.CustomDomain, hash, in.Description, hide, ips, now)
		if err != nil {
			return pageConflict(err)
		}
		it, err := scanPage(tx.QueryRow(ctx, `SELECT `+pageColumns+pageFrom+`WHERE p.org_id = $1 AND p.id = $2`, orgID, id))
		if err != nil {
			return err
		}
		page = it.Page
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "created", AuditableType: "StatusPage",
			AuditableID: page.ID, AuditableDisplayName: page.Name, Metadata: map[string]any{"subdomain": page.Subdomain}})
	})
	return page, err
}

// UpdateStatusPage replaces name and subdomain and the optional fields given, and audits it.
func (s *Store) UpdateStatusPage(ctx context.Context, actor Actor, orgID, id uuid.UUID, in StatusPageInput) (statuspage.Page, error) {
	var page statuspage.Page
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var hashSet bool
		var hash []byte
		if in.PasswordHash != nil {
			hashSet, hash = true, *in.PasswordHash
		}
		var ipsSet bool
		var ips []string
		if in.AllowedIPs != nil {
			ipsSet, ips = true, *in.AllowedIPs
		}
		tag, err := tx.Exec(ctx, `UPDATE status_pages SET name = $3, subdomain = $4,
				custom_domain = CASE WHEN $5::text IS NULL THEN custom_domain ELSE nullif($5, '') END,
				password_hash = CASE WHEN $6 THEN $7 ELSE password_hash END,
				description = CASE WHEN $8::text IS NULL THEN description ELSE nullif($8, '') END,
				hide_from_search_engines = coalesce($9, hide_from_search_engines),
				allowed_ips = CASE WHEN $10 THEN $11 ELSE allowed_ips END,
				updated_at = $12
			WHERE org_id = $1 AND id = $2`,
			orgID, id, in.Name, in.Subdomain, in.CustomDomain, hashSet, hash, in.Description, in.HideFromSearchEngines, ipsSet, ips, s.now())
		if err != nil {
			return pageConflict(err)
		}
		if tag.RowsAffected() == 0 {
			return ErrNotFound
		}
		it, err := scanPage(tx.QueryRow(ctx, `SELECT `+pageColumns+pageFrom+`WHERE p.org_id = $1 AND p.id = $2`, orgID, id))
		if err != nil {
			return err
		}
		page = it.Page
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "updated", AuditableType: "StatusPage",
			AuditableID: page.ID, AuditableDisplayName: page.Name,
			Metadata: map[string]any{"subdomain": page.Subdomain, "password_changed": in.PasswordHash != nil}})
	})
	return page, err
}

// DeleteStatusPage deletes a page with everything on it, and audits it.
func (s *Store) DeleteStatusPage(ctx context.Context, actor Actor, orgID, id uuid.UUID) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var name string
		if err := tx.QueryRow(ctx, `DELETE FROM status_pages WHERE org_id = $1 AND id = $2 RETURNING name`, orgID, id).Scan(&name); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "deleted", AuditableType: "StatusPage",
			AuditableID: id.String(), AuditableDisplayName: name})
	})
}

// lockPage locks a page of the organization for the duration of tx (serializing the writes
// that keep sort orders and incident timelines consistent) and returns its name.
func lockPage(ctx context.Context, tx pgx.Tx, orgID, pageID uuid.UUID) (string, error) {
	var name string
	err := tx.QueryRow(ctx, `SELECT name FROM status_pages WHERE org_id = $1 AND id = $2 FOR NO KEY UPDATE`, orgID, pageID).Scan(&name)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrNotFound
	}
	return name, err
}

// spTime converts a nullable timestamp for the views.
func spTime(t time.Time) statuspage.Time { return statuspage.Time(t) }

func spStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// spValidation is a 400 about one field.
func spValidation(field, format string, args ...any) error {
	return &ValidationError{Field: field, Message: fmt.Sprintf(format, args...)}
}
