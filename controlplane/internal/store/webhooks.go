package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Webhook is a webhook subscription (api.md "Webhook"). The signing secret is sealed at rest and
// leaves the store only through NewWebhook's caller (once, at creation) and WebhookSecret.
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

// associated resource kinds: the table holding the resources and the association table.
type assocKind struct {
	field, resource, table, link, column string
}

var (
	assocChecks      = assocKind{"check_ids", "check", "checks", "webhook_checks", "check_id"}
	assocStatusPages = assocKind{"status_page_ids", "status page", "status_pages", "webhook_status_pages", "status_page_id"}
	assocHeartbeats  = assocKind{"heartbeat_ids", "heartbeat", "heartbeats", "webhook_heartbeats", "heartbeat_id"}
)

func (a WebhookAssociations) lists() []struct {
	kind assocKind
	ids  []uuid.UUID
} {
	return []struct {
		kind assocKind
		ids  []uuid.UUID
	}{{assocChecks, a.CheckIDs}, {assocStatusPages, a.StatusPageIDs}, {assocHeartbeats, a.HeartbeatIDs}}
}

// tableExists reports whether a table of another migration is present (status pages and
// heartbeats arrive in their own migrations).
func tableExists(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, table string) (bool, error) {
	var ok bool
	err := q.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, "public."+table).Scan(&ok)
	return ok, err
}

// setAssociations replaces one association list of a webhook, after checking that every id
// is a resource of the organization; an unknown id is a ValidationError.
func setAssociations(ctx context.Context, tx pgx.Tx, orgID, webhookID uuid.UUID, k assocKind, ids []uuid.UUID) error {
	ids = dedupeIDs(ids)
	if len(ids) > 0 {
		exists, err := tableExists(ctx, tx, k.table)
		if err != nil {
			return err
		}
		known := map[uuid.UUID]bool{}
		if exists {
			rows, err := tx.Query(ctx, `SELECT id FROM `+k.table+` WHERE org_id = $1 AND id = ANY($2)`, orgID, ids)
			if err != nil {
				return err
			}
			found, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
			if err != nil {
				return err
			}
			for _, id := range found {
				known[id] = true
			}
		}
		var unknown []string
		for _, id := range ids {
			if !known[id] {
				unknown = append(unknown, id.String())
			}
		}
		if len(unknown) > 0 {
			return &ValidationError{Field: k.field, Message: "unknown " + k.resource + " " + strings.Join(unknown, ", ")}
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM `+k.link+` WHERE org_id = $1 AND webhook_id = $2`, orgID, webhookID); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO `+k.link+` (org_id, webhook_id, `+k.column+`)
		SELECT $1, $2, x FROM unnest($3::uuid[]) AS x`, orgID, webhookID, ids)
	return err
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

const webhookColumns = `id, org_id, url, description, events, created_at, updated_at`

func scanWebhook(row pgx.Row) (Webhook, error) {
	var w Webhook
	err := row.Scan(&w.ID, &w.OrgID, &w.URL, &w.Description, &w.Events, &w.CreatedAt, &w.UpdatedAt)
	return w, err
}

// loadAssociations fills the {id, name} lists of the webhooks, in name order. Associations
// whose resource no longer exists (status pages and heartbeats have no foreign key) are left out.
func loadAssociations(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
	QueryRow(context.Context, string, ...any) pgx.Row
}, orgID uuid.UUID, hooks []Webhook) error {
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
	for _, k := range []assocKind{assocChecks, assocStatusPages, assocHeartbeats} {
		exists, err := tableExists(ctx, q, k.table)
		if err != nil {
			return err
		}
		if !exists {
			continue
		}
		rows, err := q.Query(ctx, `SELECT l.webhook_id, r.id, r.name FROM `+k.link+` l
			JOIN `+k.table+` r ON r.org_id = l.org_id AND r.id = l.`+k.column+`
			WHERE l.org_id = $1 AND l.webhook_id = ANY($2) ORDER BY r.name, r.id`, orgID, ids)
		if err != nil {
			return err
		}
		var hook, id uuid.UUID
		var name string
		_, err = pgx.ForEachRow(rows, []any{&hook, &id, &name}, func() error {
			w := index[hook]
			ref := NamedRef{ID: id, Name: name}
			switch k {
			case assocChecks:
				w.Checks = append(w.Checks, ref)
			case assocStatusPages:
				w.StatusPages = append(w.StatusPages, ref)
			default:
				w.Heartbeats = append(w.Heartbeats, ref)
			}
			return nil
		})
		if err != nil {
			return err
		}
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
		now := s.now()
		w, err = scanWebhook(tx.QueryRow(ctx, `INSERT INTO webhooks (id, org_id, url, description, events, secret_enc, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING `+webhookColumns,
			uuid.Must(uuid.NewV7()), orgID, in.URL, in.Description, in.Events, sealed, now))
		if err != nil {
			return err
		}
		for _, l := range in.lists() {
			if err := setAssociations(ctx, tx, orgID, w.ID, l.kind, l.ids); err != nil {
				return err
			}
		}
		hooks := []Webhook{w}
		if err := loadAssociations(ctx, tx, orgID, hooks); err != nil {
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
	w, err := scanWebhook(s.pool.QueryRow(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE org_id = $1 AND id = $2`, orgID, id))
	if err != nil {
		return w, translate(err)
	}
	hooks := []Webhook{w}
	if err := loadAssociations(ctx, s.pool, orgID, hooks); err != nil {
		return w, translate(err)
	}
	return hooks[0], nil
}

// ListWebhooks returns one page of the organization's webhooks, newest first, and the total.
// search matches the URL template or the description, case-insensitively.
func (s *Store) ListWebhooks(ctx context.Context, orgID uuid.UUID, search string, limit, offset int64) ([]Webhook, int64, error) {
	where := `org_id = $1 AND ($2 = '' OR strpos(lower(url), lower($2)) > 0 OR strpos(lower(coalesce(description, '')), lower($2)) > 0)`
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM webhooks WHERE `+where, orgID, search).Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE `+where+`
		ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`, orgID, search, limit, offset)
	if err != nil {
		return nil, 0, translate(err)
	}
	hooks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Webhook, error) { return scanWebhook(r) })
	if err != nil {
		return nil, 0, translate(err)
	}
	if err := loadAssociations(ctx, s.pool, orgID, hooks); err != nil {
		return nil, 0, translate(err)
	}
	return hooks, total, nil
}

// UpdateWebhook changes a webhook. check presents the result before commit: when it returns an
// error (for example: no association left) nothing is changed.
func (s *Store) UpdateWebhook(ctx context.Context, actor Actor, orgID, id uuid.UUID, p WebhookPatch, check func(Webhook) error) (Webhook, error) {
	var w Webhook
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		w, err = scanWebhook(tx.QueryRow(ctx, `UPDATE webhooks SET
				url = coalesce($3, url),
				description = CASE WHEN $5 THEN NULL ELSE coalesce($4, description) END,
				events = coalesce($6, events),
				updated_at = $7
			WHERE org_id = $1 AND id = $2 RETURNING `+webhookColumns,
			orgID, id, p.URL, p.Description, p.DescriptionNull, p.Events, s.now()))
		if err != nil {
			return err
		}
		for _, l := range p.lists() {
			if l.ids != nil {
				if err := setAssociations(ctx, tx, orgID, w.ID, l.kind, l.ids); err != nil {
					return err
				}
			}
		}
		hooks := []Webhook{w}
		if err := loadAssociations(ctx, tx, orgID, hooks); err != nil {
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
		w, err := scanWebhook(tx.QueryRow(ctx, `DELETE FROM webhooks WHERE org_id = $1 AND id = $2 RETURNING `+webhookColumns, orgID, id))
		if err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "deleted", AuditableType: "Webhook",
			AuditableID: w.ID.String(), AuditableDisplayName: webhookDisplayName(w)})
	})
}

// OrganizationPlan returns the organization's plan ("free" or "paid").
func (s *Store) OrganizationPlan(ctx context.Context, orgID uuid.UUID) (string, error) {
	var plan string
	err := s.pool.QueryRow(ctx, `SELECT plan FROM organizations WHERE id = $1`, orgID).Scan(&plan)
	return plan, translate(err)
}
