package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
)

const groupColumns = `id, name, description, sort_order, created_at, updated_at`

func scanGroup(row pgx.Row) (statuspage.Group, error) {
	var g statuspage.Group
	var id uuid.UUID
	var created, updated time.Time
	err := row.Scan(&id, &g.Name, &g.Description, &g.SortOrder, &created, &updated)
	g.ID, g.CreatedAt, g.UpdatedAt = id.String(), spTime(created), spTime(updated)
	return g, err
}

// ListGroups returns one page of a status page's component groups in order; search matches
// the name.
func (s *Store) ListGroups(ctx context.Context, orgID, pageID uuid.UUID, search string, limit, offset int64) ([]statuspage.Group, int64, error) {
	if err := pageExists(ctx, s.pool, orgID, pageID); err != nil {
		return nil, 0, translate(err)
	}
	where := `org_id = $1 AND status_page_id = $2 AND ($3 = '' OR strpos(lower(name), lower($3)) > 0)`
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM status_page_groups WHERE `+where, orgID, pageID, search).Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+groupColumns+` FROM status_page_groups WHERE `+where+`
		ORDER BY sort_order NULLS LAST, created_at, id LIMIT $4 OFFSET $5`, orgID, pageID, search, limit, offset)
	if err != nil {
		return nil, 0, translate(err)
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (statuspage.Group, error) { return scanGroup(r) })
	return items, total, translate(err)
}

func getGroup(ctx context.Context, q spQuerier, orgID, pageID, id uuid.UUID) (statuspage.Group, error) {
	return scanGroup(q.QueryRow(ctx, `SELECT `+groupColumns+` FROM status_page_groups WHERE org_id = $1 AND status_page_id = $2 AND id = $3`,
		orgID, pageID, id))
}

// GetGroup returns one group of a page.
func (s *Store) GetGroup(ctx context.Context, orgID, pageID, id uuid.UUID) (statuspage.Group, error) {
	g, err := getGroup(ctx, s.pool, orgID, pageID, id)
	return g, translate(err)
}

// CreateGroup appends a group to a page (sort_order = the number of groups before it), and
// audits it.
func (s *Store) CreateGroup(ctx context.Context, actor Actor, orgID, pageID uuid.UUID, name string, description *string) (statuspage.Group, error) {
	var g statuspage.Group
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := lockPage(ctx, tx, orgID, pageID); err != nil {
			return err
		}
		id := uuid.Must(uuid.NewV7())
		if _, err := tx.Exec(ctx, `INSERT INTO status_page_groups (id, org_id, status_page_id, name, description, sort_order, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, (SELECT count(*) FROM status_page_groups WHERE status_page_id = $3), $6, $6)`,
			id, orgID, pageID, name, description, s.now()); err != nil {
			return err
		}
		var err error
		if g, err = getGroup(ctx, tx, orgID, pageID, id); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "created", AuditableType: "StatusPageComponentGroup",
			AuditableID: g.ID, AuditableDisplayName: g.Name, Metadata: map[string]any{"status_page_id": pageID.String()}})
	})
	return g, err
}

// GroupPatch changes a group: nil Name keeps it; DescriptionSet with a nil Description clears it.
type GroupPatch struct {
	Name           *string
	DescriptionSet bool
	Description    *string
}

// UpdateGroup applies p and audits it.
func (s *Store) UpdateGroup(ctx context.Context, actor Actor, orgID, pageID, id uuid.UUID, p GroupPatch) (statuspage.Group, error) {
	var g statuspage.Group
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		g, err = scanGroup(tx.QueryRow(ctx, `UPDATE status_page_groups SET name = coalesce($4, name),
				description = CASE WHEN $5 THEN $6 ELSE description END, updated_at = $7
			WHERE org_id = $1 AND status_page_id = $2 AND id = $3 RETURNING `+groupColumns,
			orgID, pageID, id, p.Name, p.DescriptionSet, p.Description, s.now()))
		if err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "updated", AuditableType: "StatusPageComponentGroup",
			AuditableID: g.ID, AuditableDisplayName: g.Name, Metadata: map[string]any{"status_page_id": pageID.String()}})
	})
	return g, err
}

// DeleteGroup deletes a group; its components become ungrouped, appended after the page's
// ungrouped components in their group order. It is audited.
func (s *Store) DeleteGroup(ctx context.Context, actor Actor, orgID, pageID, id uuid.UUID) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := lockPage(ctx, tx, orgID, pageID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `WITH base AS (
				SELECT count(*) AS n FROM status_page_components WHERE org_id = $1 AND status_page_id = $2 AND group_id IS NULL),
			moved AS (
				SELECT id, row_number() OVER (ORDER BY sort_order NULLS LAST, created_at, id) - 1 AS rn
				FROM status_page_components WHERE org_id = $1 AND group_id = $3)
			UPDATE status_page_components c SET group_id = NULL, sort_order = base.n + moved.rn
			FROM base, moved WHERE c.org_id = $1 AND c.id = moved.id`, orgID, pageID, id); err != nil {
			return err
		}
		var name string
		if err := tx.QueryRow(ctx, `DELETE FROM status_page_groups WHERE org_id = $1 AND status_page_id = $2 AND id = $3 RETURNING name`,
			orgID, pageID, id).Scan(&name); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "deleted", AuditableType: "StatusPageComponentGroup",
			AuditableID: id.String(), AuditableDisplayName: name, Metadata: map[string]any{"status_page_id": pageID.String()}})
	})
}
