package statuspage

import (
	"context"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// ListItem is a page as the list shows it, with what the organization's plan allows.
type ListItem struct {
	Page
	CustomDomainEntitled      bool `json:"custom_domain_entitled"`
	PrivateStatusPageEntitled bool `json:"private_status_page_entitled"`
}

// PageOf is the page record of a stored page, its overall status derived.
func PageOf(p store.StatusPage) Page {
	out := Page{ID: p.ID.String(), Name: p.Name, Subdomain: p.Subdomain, CustomDomain: p.CustomDomain,
		Status: Overall(p.ComponentStatuses, p.ActiveImpacts, p.MaintenanceInProgress), FaviconURL: p.FaviconURL,
		LogoURL: p.LogoURL, DarkLogoURL: p.DarkLogoURL, Description: p.Description,
		HideFromSearchEngines: p.HideFromSearchEngines, HasPassword: p.PasswordHash != nil, AllowedIPs: p.AllowedIPs}
	out.Private = out.HasPassword || len(out.AllowedIPs) > 0
	return out
}

// ListStatusPages returns one page of the organization's status pages, newest first; search
// matches the name or subdomain, case-insensitively.
func (s *Service) ListStatusPages(ctx context.Context, orgID uuid.UUID, search string, limit, offset int64) ([]ListItem, int64, error) {
	rows, total, err := s.st.StatusPages().ListStatusPages(ctx, orgID, search, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	out := make([]ListItem, len(rows))
	for i, p := range rows {
		paid := entitled(p.Plan)
		out[i] = ListItem{Page: PageOf(p), CustomDomainEntitled: paid, PrivateStatusPageEntitled: paid}
	}
	return out, total, nil
}

// GetStatusPage returns one page of the organization.
func (s *Service) GetStatusPage(ctx context.Context, orgID, id uuid.UUID) (Page, error) {
	p, err := s.st.StatusPages().GetStatusPage(ctx, orgID, id)
	return PageOf(p), err
}

// StatusPageInOtherOrg reports whether a page with this id exists in another organization
// (the subscriber routes answer 403 rather than 404 for it).
func (s *Service) StatusPageInOtherOrg(ctx context.Context, orgID, id uuid.UUID) (bool, error) {
	return s.st.StatusPages().StatusPageInOtherOrg(ctx, orgID, id)
}

// CreateStatusPage creates a page and audits it.
func (s *Service) CreateStatusPage(ctx context.Context, actor store.Actor, orgID uuid.UUID, in store.StatusPageInput) (Page, error) {
	id := uuid.Must(uuid.NewV7())
	var page Page
	err := s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		if err := checkPagePlan(ctx, tx.StatusPageReader, orgID, in); err != nil {
			return err
		}
		if err := tx.CreateStatusPage(ctx, orgID, id, in, s.now()); err != nil {
			return err
		}
		p, err := tx.GetStatusPage(ctx, orgID, id)
		if err != nil {
			return err
		}
		page = PageOf(p)
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "created", AuditableType: "StatusPage",
			AuditableID: page.ID, AuditableDisplayName: page.Name, Metadata: map[string]any{"subdomain": page.Subdomain}})
	})
	return page, err
}

// UpdateStatusPage replaces name and subdomain and the optional fields given, and audits it.
func (s *Service) UpdateStatusPage(ctx context.Context, actor store.Actor, orgID, id uuid.UUID, in store.StatusPageInput) (Page, error) {
	var page Page
	err := s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		if err := checkPagePlan(ctx, tx.StatusPageReader, orgID, in); err != nil {
			return err
		}
		if err := tx.UpdateStatusPage(ctx, orgID, id, in, s.now()); err != nil {
			return err
		}
		p, err := tx.GetStatusPage(ctx, orgID, id)
		if err != nil {
			return err
		}
		page = PageOf(p)
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "updated", AuditableType: "StatusPage",
			AuditableID: page.ID, AuditableDisplayName: page.Name,
			Metadata: map[string]any{"subdomain": page.Subdomain, "password_changed": in.PasswordHash != nil}})
	})
	return page, err
}

// DeleteStatusPage deletes a page with everything on it, and audits it.
func (s *Service) DeleteStatusPage(ctx context.Context, actor store.Actor, orgID, id uuid.UUID) error {
	return s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		name, err := tx.DeleteStatusPage(ctx, orgID, id)
		if err != nil {
			return err
		}
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "deleted", AuditableType: "StatusPage",
			AuditableID: id.String(), AuditableDisplayName: name})
	})
}
