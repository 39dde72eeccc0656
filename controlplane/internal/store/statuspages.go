package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// The persistence of status pages (api/openapi/status-page*.yaml): pages, groups, components, incidents
// and their timelines, scheduled maintenance, subscribers. Package statuspage owns what they
// mean — status derivation, the incident and maintenance lifecycles, components that follow
// their monitors — and reads and writes through StatusPageReader (on the pool) and
// StatusPageTx (in a transaction).

// StatusPageReader reads status pages; Store.StatusPages reads on the pool, and StatusPageTx
// reads inside its transaction. Every read is scoped to an organization, except the public
// lookups by host and the lifecycle's scans across organizations, which say so.
type StatusPageReader struct {
	q *dbsqlc.Queries
}

// StatusPages reads status pages on the pool.
func (s *Store) StatusPages() StatusPageReader { return StatusPageReader{q: s.q} }

// StatusPageTx is one transaction over status pages (InStatusPageTx). Besides reading and
// writing the pages' tables, it queues outbox events and writes audit entries, so that a change
// and what it announces commit together.
type StatusPageTx struct {
	StatusPageReader
	s  *Store
	tx pgx.Tx
}

// Writes take the time to record as now: the workflow's clock.

// InStatusPageTx runs fn in a transaction, committing when it returns nil. A transaction that
// loses a deadlock or a serialization conflict is run again, so fn must only talk to tx.
func (s *Store) InStatusPageTx(ctx context.Context, fn func(tx *StatusPageTx) error) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		return fn(&StatusPageTx{StatusPageReader: StatusPageReader{q: s.q.WithTx(tx)}, s: s, tx: tx})
	})
}

// QueueEvents adds events to the outbox.
func (t *StatusPageTx) QueueEvents(ctx context.Context, events ...OutboxEvent) error {
	return insertOutbox(ctx, t.tx, events)
}

// Audit writes an audit entry.
func (t *StatusPageTx) Audit(ctx context.Context, orgID uuid.UUID, actor Actor, ev AuditEvent) error {
	return writeAudit(ctx, t.tx, orgID, actor, ev)
}

// StatusPage is a status page with what its overall status is derived from and its
// organization's plan.
type StatusPage struct {
	ID                    uuid.UUID
	OrgID                 uuid.UUID
	Name                  string
	Subdomain             string
	CustomDomain          *string
	PasswordHash          []byte // salt(16) || PBKDF2-HMAC-SHA512 key(32); nil: no password
	Description           *string
	HideFromSearchEngines bool
	AllowedIPs            []string // nil: anyone
	FaviconURL            *string
	LogoURL               *string
	DarkLogoURL           *string
	// ComponentStatuses are the statuses of its components; ActiveImpacts the impacts of its
	// unresolved incidents that are not maintenance; MaintenanceInProgress whether a scheduled
	// maintenance of the page is in progress.
	ComponentStatuses     []string
	ActiveImpacts         []string
	MaintenanceInProgress bool
	Plan                  string // the organization's plan: "free" or "paid"
}

func statusPageOf[R dbsqlc.GetStatusPageRow | dbsqlc.ListStatusPagesRow](r R) StatusPage {
	g := dbsqlc.GetStatusPageRow(r)
	return StatusPage{ID: g.ID, OrgID: g.OrgID, Name: g.Name, Subdomain: g.Subdomain, CustomDomain: g.CustomDomain,
		PasswordHash: g.PasswordHash, Description: g.Description, HideFromSearchEngines: g.HideFromSearchEngines,
		AllowedIPs: g.AllowedIps, FaviconURL: g.FaviconUrl, LogoURL: g.LogoUrl, DarkLogoURL: g.DarkLogoUrl,
		ComponentStatuses: g.ComponentStatuses, ActiveImpacts: g.ActiveImpacts,
		MaintenanceInProgress: g.MaintenanceInProgress, Plan: g.Plan}
}

// ListStatusPages returns one page of the organization's status pages, newest first, and the
// total; search matches the name or subdomain, case-insensitively.
func (r StatusPageReader) ListStatusPages(ctx context.Context, orgID uuid.UUID, search string, limit, offset int64) ([]StatusPage, int64, error) {
	total, err := r.q.CountStatusPages(ctx, dbsqlc.CountStatusPagesParams{OrgID: orgID, Search: search})
	if err != nil {
		return nil, 0, translate(err)
	}
	rows, err := r.q.ListStatusPages(ctx, dbsqlc.ListStatusPagesParams{OrgID: orgID, Search: search, PageLimit: limit, PageOffset: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	out := make([]StatusPage, len(rows))
	for i, row := range rows {
		out[i] = statusPageOf(row)
	}
	return out, total, nil
}

// GetStatusPage returns one page of the organization.
func (r StatusPageReader) GetStatusPage(ctx context.Context, orgID, id uuid.UUID) (StatusPage, error) {
	row, err := r.q.GetStatusPage(ctx, dbsqlc.GetStatusPageParams{OrgID: orgID, ID: id})
	if err != nil {
		return StatusPage{}, translate(err)
	}
	return statusPageOf(row), nil
}

// StatusPageByHost returns the page served at a subdomain (case-insensitive) or, when subdomain
// is empty, at a custom domain (a host name), whichever organization owns it: the public
// lookup. ErrNotFound when none is.
func (r StatusPageReader) StatusPageByHost(ctx context.Context, subdomain, customDomain string) (StatusPage, error) {
	var key dbsqlc.StatusPageBySubdomainRow
	var err error
	switch {
	case subdomain != "":
		key, err = r.q.StatusPageBySubdomain(ctx, subdomain)
	case customDomain != "":
		var k dbsqlc.StatusPageByCustomDomainRow
		k, err = r.q.StatusPageByCustomDomain(ctx, customDomain)
		key = dbsqlc.StatusPageBySubdomainRow(k)
	default:
		return StatusPage{}, ErrNotFound
	}
	if err != nil {
		return StatusPage{}, translate(err)
	}
	return r.GetStatusPage(ctx, key.OrgID, key.ID)
}

// StatusPageInOtherOrg reports whether a page with this id exists in another organization than
// orgID. It is the one status page query that looks across organizations: the subscriber routes
// answer 403 rather than 404 for such a page (api/openapi).
func (r StatusPageReader) StatusPageInOtherOrg(ctx context.Context, orgID, id uuid.UUID) (bool, error) {
	ok, err := r.q.StatusPageInOtherOrg(ctx, dbsqlc.StatusPageInOtherOrgParams{OrgID: orgID, ID: id})
	return ok, translate(err)
}

// StatusPageExists is ErrNotFound unless the organization has the page.
func (r StatusPageReader) StatusPageExists(ctx context.Context, orgID, id uuid.UUID) error {
	ok, err := r.q.StatusPageExists(ctx, dbsqlc.StatusPageExistsParams{OrgID: orgID, ID: id})
	if err != nil {
		return translate(err)
	}
	if !ok {
		return ErrNotFound
	}
	return nil
}

// StatusPageInput is the body shared by page create and update (api/openapi/status-pages.yaml). On update,
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

// pageConflict turns unique violations of the subdomain or of a verified custom domain into
// typed conflicts.
func pageConflict(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		switch pgErr.ConstraintName {
		case "status_pages_subdomain":
			return &ConflictError{Type: "subdomain_taken", Code: 409, Message: "subdomain: another status page already uses this subdomain"}
		case "status_pages_custom_domain_verified":
			return customDomainTaken()
		}
	}
	return translate(err)
}

// PageName is how events and e-mails name a status page.
type PageName struct {
	Name      string
	Subdomain string
}

// StatusPageName returns the name and subdomain of a page of the organization, without
// locking it.
func (r StatusPageReader) StatusPageName(ctx context.Context, orgID, id uuid.UUID) (PageName, error) {
	row, err := r.q.StatusPageName(ctx, dbsqlc.StatusPageNameParams{OrgID: orgID, ID: id})
	return PageName(row), translate(err)
}

// LockStatusPage locks a page of the organization for the rest of the transaction (serializing
// the writes that keep sort orders and incident timelines consistent) and returns its name.
func (t *StatusPageTx) LockStatusPage(ctx context.Context, orgID, id uuid.UUID) (PageName, error) {
	row, err := t.q.LockStatusPage(ctx, dbsqlc.LockStatusPageParams{OrgID: orgID, ID: id})
	return PageName(row), translate(err)
}

// CreateStatusPage stores a new page.
func (t *StatusPageTx) CreateStatusPage(ctx context.Context, orgID, id uuid.UUID, in StatusPageInput, now time.Time) error {
	p := dbsqlc.CreateStatusPageParams{ID: id, OrgID: orgID, Name: in.Name, Subdomain: in.Subdomain, CustomDomain: in.CustomDomain,
		DomainToken: newDomainToken(), Description: in.Description, HideFromSearchEngines: in.HideFromSearchEngines != nil && *in.HideFromSearchEngines, Now: now}
	if in.PasswordHash != nil {
		p.PasswordHash = *in.PasswordHash
	}
	if in.AllowedIPs != nil {
		p.AllowedIps = *in.AllowedIPs
	}
	if err := t.claimCustomDomain(ctx, id, in.CustomDomain); err != nil {
		return err
	}
	return pageConflict(t.q.CreateStatusPage(ctx, p))
}

// UpdateStatusPage replaces name and subdomain and the optional fields given.
func (t *StatusPageTx) UpdateStatusPage(ctx context.Context, orgID, id uuid.UUID, in StatusPageInput, now time.Time) error {
	p := dbsqlc.UpdateStatusPageParams{OrgID: orgID, ID: id, Name: in.Name, Subdomain: in.Subdomain, CustomDomain: in.CustomDomain,
		DomainToken: newDomainToken(), Description: in.Description, HideFromSearchEngines: in.HideFromSearchEngines, Now: now}
	if in.PasswordHash != nil {
		p.SetPassword, p.PasswordHash = true, *in.PasswordHash
	}
	if in.AllowedIPs != nil {
		p.SetAllowedIps, p.AllowedIps = true, *in.AllowedIPs
	}
	n, err := t.q.UpdateStatusPage(ctx, p)
	if err != nil {
		return pageConflict(err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return t.claimCustomDomain(ctx, id, in.CustomDomain)
}

// DeleteStatusPage deletes a page with everything on it and returns its name.
func (t *StatusPageTx) DeleteStatusPage(ctx context.Context, orgID, id uuid.UUID) (string, error) {
	name, err := t.q.DeleteStatusPage(ctx, dbsqlc.DeleteStatusPageParams{OrgID: orgID, ID: id})
	return name, translate(err)
}
