package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// Webhook is a webhook subscription (api/openapi/webhooks.yaml). The signing secret is sealed at rest and
// leaves the store only through NewWebhook's caller (once, at creation) and the deliveries.
type Webhook struct {
	ID          uuid.UUID
	OrgID       uuid.UUID
	URL         string // may hold {{NAME}} references
	Description *string
	Events      []string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	Checks      []NamedRef
	StatusPages []NamedRef
	Heartbeats  []NamedRef
}

// NamedRef is an associated resource as the API shows it: {id, name}.
type NamedRef struct {
	ID   uuid.UUID
	Name string
}

// WebhookAssociations are the id lists of a webhook; nil leaves a list unchanged on update.
type WebhookAssociations struct {
	CheckIDs      []uuid.UUID
	StatusPageIDs []uuid.UUID
	HeartbeatIDs  []uuid.UUID
}

// NewWebhook is the input of CreateWebhook. Secret is the plaintext "whsec_..." to seal.
type NewWebhook struct {
	URL         string
	Description *string
	Events      []string
	Secret      string
	WebhookAssociations
}

// WebhookPatch is the input of UpdateWebhook: nil fields are unchanged. Description set with
// DescriptionNull clears it.
type WebhookPatch struct {
	URL             *string
	Description     *string
	DescriptionNull bool
	Events          []string
	WebhookAssociations
}

// webhookOf converts any of the generated webhook rows (they share their columns).
func webhookOf[R dbsqlc.GetWebhookRow | dbsqlc.CreateWebhookRow | dbsqlc.UpdateWebhookRow | dbsqlc.DeleteWebhookRow | dbsqlc.ListWebhooksRow](r R) Webhook {
	g := dbsqlc.GetWebhookRow(r)
	return Webhook{ID: g.ID, OrgID: g.OrgID, URL: g.Url, Description: g.Description, Events: g.Events,
		CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt}
}

// setAssociations replaces the association lists a gives (nil lists stay), after checking that
// every id is a resource of the organization; an unknown id is a ValidationError.
func setAssociations(ctx context.Context, q *dbsqlc.Queries, orgID, webhookID uuid.UUID, a WebhookAssociations) error {
	if a.CheckIDs != nil {
		ids := dedupeIDs(a.CheckIDs)
		found, err := q.OrgCheckIDs(ctx, dbsqlc.OrgCheckIDsParams{OrgID: orgID, Ids: ids})
		if err := unknownIDs("check_ids", "check", ids, found, err); err != nil {
			return err
		}
		if err := q.ClearWebhookChecks(ctx, dbsqlc.ClearWebhookChecksParams{OrgID: orgID, WebhookID: webhookID}); err != nil {
			return err
		}
		if err := q.AddWebhookChecks(ctx, dbsqlc.AddWebhookChecksParams{OrgID: orgID, WebhookID: webhookID, Ids: ids}); err != nil {
			return err
		}
	}
	if a.StatusPageIDs != nil {
		ids := dedupeIDs(a.StatusPageIDs)
		found, err := q.OrgStatusPageIDs(ctx, dbsqlc.OrgStatusPageIDsParams{OrgID: orgID, Ids: ids})
		if err := unknownIDs("status_page_ids", "status page", ids, found, err); err != nil {
			return err
		}
		if err := q.ClearWebhookStatusPages(ctx, dbsqlc.ClearWebhookStatusPagesParams{OrgID: orgID, WebhookID: webhookID}); err != nil {
			return err
		}
		if err := q.AddWebhookStatusPages(ctx, dbsqlc.AddWebhookStatusPagesParams{OrgID: orgID, WebhookID: webhookID, Ids: ids}); err != nil {
			return err
		}
	}
	if a.HeartbeatIDs != nil {
		ids := dedupeIDs(a.HeartbeatIDs)
		found, err := q.OrgHeartbeatIDs(ctx, dbsqlc.OrgHeartbeatIDsParams{OrgID: orgID, Ids: ids})
		if err := unknownIDs("heartbeat_ids", "heartbeat", ids, found, err); err != nil {
			return err
		}
		if err := q.ClearWebhookHeartbeats(ctx, dbsqlc.ClearWebhookHeartbeatsParams{OrgID: orgID, WebhookID: webhookID}); err != nil {
			return err
		}
		if err := q.AddWebhookHeartbeats(ctx, dbsqlc.AddWebhookHeartbeatsParams{OrgID: orgID, WebhookID: webhookID, Ids: ids}); err != nil {
			return err
		}
	}
	return nil
}

// unknownIDs is a ValidationError naming the ids that are not among found (or err).
func unknownIDs(field, resource string, ids, found []uuid.UUID, err error) error {
	if err != nil {
		return err
	}
	known := make(map[uuid.UUID]bool, len(found))
	for _, id := range found {
		known[id] = true
	}
	var unknown []string
	for _, id := range ids {
		if !known[id] {
			unknown = append(unknown, id.String())
		}
	}
	if len(unknown) > 0 {
		return &ValidationError{Field: field, Message: "unknown " + resource + " " + strings.Join(unknown, ", ")}
	}
	return nil
}

func dedupeIDs(ids []uuid.UUID) []uuid.UUID {
	seen := map[uuid.UUID]bool{}
	out := make([]uuid.UUID, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// loadAssociations fills the {id, name} lists of the webhooks, in name order. Associations
// whose resource no longer exists (status pages and heartbeats have no foreign key) are left out.
func loadAssociations(ctx context.Context, q *dbsqlc.Queries, orgID uuid.UUID, hooks []Webhook) error {
	if len(hooks) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(hooks))
	index := map[uuid.UUID]*Webhook{}
	for i := range hooks {
		ids[i] = hooks[i].ID
		index[hooks[i].ID] = &hooks[i]
		hooks[i].Checks, hooks[i].StatusPages, hooks[i].Heartbeats = []NamedRef{}, []NamedRef{}, []NamedRef{}
	}
	p := dbsqlc.WebhookCheckRefsParams{OrgID: orgID, WebhookIds: ids}
	checks, err := q.WebhookCheckRefs(ctx, p)
	if err != nil {
		return err
	}
	for _, r := range checks {
		w := index[r.WebhookID]
		w.Checks = append(w.Checks, NamedRef{ID: r.ID, Name: r.Name})
	}
	pages, err := q.WebhookStatusPageRefs(ctx, dbsqlc.WebhookStatusPageRefsParams(p))
	if err != nil {
		return err
	}
	for _, r := range pages {
		w := index[r.WebhookID]
		w.StatusPages = append(w.StatusPages, NamedRef{ID: r.ID, Name: r.Name})
	}
	hbs, err := q.WebhookHeartbeatRefs(ctx, dbsqlc.WebhookHeartbeatRefsParams(p))
	if err != nil {
		return err
	}
	for _, r := range hbs {
		w := index[r.WebhookID]
		w.Heartbeats = append(w.Heartbeats, NamedRef{ID: r.ID, Name: r.Name})
	}
	return nil
}

// CreateWebhook stores a webhook with its sealed secret and associations, and audits it.
func (s *Store) CreateWebhook(ctx context.Context, actor Actor, orgID uuid.UUID, in NewWebhook) (Webhook, error) {
	sealed, err := s.sealer.Seal([]byte(in.Secret))
	if err != nil {
		return Webhook{}, fmt.Errorf("seal webhook secret: %w", err)
	}
	var w Webhook
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		r, err := q.CreateWebhook(ctx, dbsqlc.CreateWebhookParams{ID: uuid.Must(uuid.NewV7()), OrgID: orgID, Url: in.URL,
			Description: in.Description, Events: in.Events, SecretEnc: sealed, Now: s.now()})
		if err != nil {
			return err
		}
		w = webhookOf(r)
		assoc := in.WebhookAssociations
		for _, l := range []*[]uuid.UUID{&assoc.CheckIDs, &assoc.StatusPageIDs, &assoc.HeartbeatIDs} {
			if *l == nil {
				*l = []uuid.UUID{}
			}
		}
		if err := setAssociations(ctx, q, orgID, w.ID, assoc); err != nil {
			return err
		}
		hooks := []Webhook{w}
		if err := loadAssociations(ctx, q, orgID, hooks); err != nil {
			return err
		}
		w = hooks[0]
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "created", AuditableType: "Webhook",
			AuditableID: w.ID.String(), AuditableDisplayName: webhookDisplayName(w),
			Metadata: map[string]any{"events": w.Events}})
	})
	return w, err
}

// webhookDisplayName names a webhook in the audit log: its description, else its URL template
// (never a resolved URL, so no variable value reaches the log).
func webhookDisplayName(w Webhook) string {
	if w.Description != nil && *w.Description != "" {
		return *w.Description
	}
	return w.URL
}

// GetWebhook returns one webhook of the organization with its associations.
func (s *Store) GetWebhook(ctx context.Context, orgID, id uuid.UUID) (Webhook, error) {
	r, err := s.q.GetWebhook(ctx, dbsqlc.GetWebhookParams{OrgID: orgID, ID: id})
	if err != nil {
		return Webhook{}, translate(err)
	}
	hooks := []Webhook{webhookOf(r)}
	if err := loadAssociations(ctx, s.q, orgID, hooks); err != nil {
		return hooks[0], translate(err)
	}
	return hooks[0], nil
}

// ListWebhooks returns one page of the organization's webhooks, newest first, and the total.
// search matches the URL template or the description, case-insensitively.
func (s *Store) ListWebhooks(ctx context.Context, orgID uuid.UUID, search string, limit, offset int64) ([]Webhook, int64, error) {
	total, err := s.q.CountWebhooks(ctx, dbsqlc.CountWebhooksParams{OrgID: orgID, Search: search})
	if err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.q.ListWebhooks(ctx, dbsqlc.ListWebhooksParams{OrgID: orgID, Search: search, PageLimit: limit, PageOffset: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	hooks := make([]Webhook, len(rows))
	for i, r := range rows {
		hooks[i] = webhookOf(r)
	}
	if err := loadAssociations(ctx, s.q, orgID, hooks); err != nil {
		return nil, 0, translate(err)
	}
	return hooks, total, nil
}

// UpdateWebhook changes a webhook. check presents the result before commit: when it returns an
// error (for example: no association left) nothing is changed.
func (s *Store) UpdateWebhook(ctx context.Context, actor Actor, orgID, id uuid.UUID, p WebhookPatch, check func(Webhook) error) (Webhook, error) {
	var w Webhook
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		r, err := q.UpdateWebhook(ctx, dbsqlc.UpdateWebhookParams{OrgID: orgID, ID: id, Url: p.URL, Description: p.Description,
			ClearDescription: p.DescriptionNull, Events: p.Events, Now: s.now()})
		if err != nil {
			return err
		}
		w = webhookOf(r)
		if err := setAssociations(ctx, q, orgID, w.ID, p.WebhookAssociations); err != nil {
			return err
		}
		hooks := []Webhook{w}
		if err := loadAssociations(ctx, q, orgID, hooks); err != nil {
			return err
		}
		w = hooks[0]
		if check != nil {
			if err := check(w); err != nil {
				return err
			}
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "updated", AuditableType: "Webhook",
			AuditableID: w.ID.String(), AuditableDisplayName: webhookDisplayName(w)})
	})
	return w, err
}

// DeleteWebhook removes a webhook, its associations and its delivery log, and audits it.
func (s *Store) DeleteWebhook(ctx context.Context, actor Actor, orgID, id uuid.UUID) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		r, err := s.q.WithTx(tx).DeleteWebhook(ctx, dbsqlc.DeleteWebhookParams{OrgID: orgID, ID: id})
		if err != nil {
			return err
		}
		w := webhookOf(r)
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "deleted", AuditableType: "Webhook",
			AuditableID: w.ID.String(), AuditableDisplayName: webhookDisplayName(w)})
	})
}

// OrganizationPlan returns the organization's plan ("free" or "paid").
func (s *Store) OrganizationPlan(ctx context.Context, orgID uuid.UUID) (string, error) {
	plan, err := s.q.OrganizationPlan(ctx, orgID)
	return plan, translate(err)
}
