package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
)

const componentColumns = `c.id, c.name, c.status, c.display_uptime, c.display_metrics, c.created_at, c.updated_at,
	c.group_id, c.sort_order, c.is_external_component, c.override_status, c.heartbeat_id,
	coalesce((SELECT array_agg(l.check_id ORDER BY l.check_id) FROM status_page_component_checks l WHERE l.component_id = c.id), '{}')`

// componentOrder lists ungrouped components first, then each group in its order.
const componentOrder = ` ORDER BY (SELECT g.sort_order FROM status_page_groups g WHERE g.id = c.group_id) NULLS FIRST,
	c.group_id NULLS FIRST, c.sort_order NULLS LAST, c.created_at, c.id`

func scanComponent(row pgx.Row) (statuspage.ComponentDetail, error) {
	var d statuspage.ComponentDetail
	var id uuid.UUID
	var group, hb *uuid.UUID
	var created, updated time.Time
	var checks []uuid.UUID
	err := row.Scan(&id, &d.Name, &d.Status, &d.DisplayUptime, &d.DisplayMetrics, &created, &updated,
		&group, &d.SortOrder, &d.IsExternalComponent, &d.OverrideStatus, &hb, &checks)
	d.ID, d.CreatedAt, d.UpdatedAt = id.String(), spTime(created), spTime(updated)
	if group != nil {
		s := group.String()
		d.GroupID = &s
	}
	if hb != nil {
		s := hb.String()
		d.HeartbeatID = &s
	}
	d.CheckIDs = spStrings(checks)
	return d, err
}

// pageExists is ErrNotFound unless the organization has the page.
func pageExists(ctx context.Context, q spQuerier, orgID, pageID uuid.UUID) error {
	var ok bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM status_pages WHERE org_id = $1 AND id = $2)`, orgID, pageID).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return ErrNotFound
	}
	return nil
}

// ListComponents returns one page of a status page's components in display order; search
// matches the name.
func (s *Store) ListComponents(ctx context.Context, orgID, pageID uuid.UUID, search string, limit, offset int64) ([]statuspage.ComponentDetail, int64, error) {
	if err := pageExists(ctx, s.pool, orgID, pageID); err != nil {
		return nil, 0, translate(err)
	}
	where := `c.org_id = $1 AND c.status_page_id = $2 AND ($3 = '' OR strpos(lower(c.name), lower($3)) > 0)`
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM status_page_components c WHERE `+where, orgID, pageID, search).Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+componentColumns+` FROM status_page_components c WHERE `+where+componentOrder+` LIMIT $4 OFFSET $5`,
		orgID, pageID, search, limit, offset)
	if err != nil {
		return nil, 0, translate(err)
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (statuspage.ComponentDetail, error) { return scanComponent(r) })
	return items, total, translate(err)
}

// pageComponents returns every component of a page in display order.
func pageComponents(ctx context.Context, q spQuerier, orgID, pageID uuid.UUID) ([]statuspage.Component, error) {
	rows, err := q.Query(ctx, `SELECT `+componentColumns+` FROM status_page_components c WHERE c.org_id = $1 AND c.status_page_id = $2`+componentOrder, orgID, pageID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (statuspage.Component, error) {
		d, err := scanComponent(r)
		return d.Component, err
	})
}

func getComponent(ctx context.Context, q spQuerier, orgID, pageID, id uuid.UUID) (statuspage.ComponentDetail, error) {
	return scanComponent(q.QueryRow(ctx, `SELECT `+componentColumns+` FROM status_page_components c
		WHERE c.org_id = $1 AND c.status_page_id = $2 AND c.id = $3`, orgID, pageID, id))
}

// GetComponent returns one component of a page.
func (s *Store) GetComponent(ctx context.Context, orgID, pageID, id uuid.UUID) (statuspage.ComponentDetail, error) {
	d, err := getComponent(ctx, s.pool, orgID, pageID, id)
	return d, translate(err)
}

// NewComponent is the input of CreateComponent.
type NewComponent struct {
	Name           string
	Status         string
	DisplayUptime  bool
	DisplayMetrics bool
}

// CreateComponent appends an ungrouped component to a page, and audits it.
func (s *Store) CreateComponent(ctx context.Context, actor Actor, orgID, pageID uuid.UUID, in NewComponent) (statuspage.ComponentDetail, error) {
	var d statuspage.ComponentDetail
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := lockPage(ctx, tx, orgID, pageID); err != nil {
			return err
		}
		id := uuid.Must(uuid.NewV7())
		_, err := tx.Exec(ctx, `INSERT INTO status_page_components (id, org_id, status_page_id, name, status, display_uptime,
				display_metrics, sort_order, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7,
				(SELECT count(*) FROM status_page_components WHERE status_page_id = $3 AND group_id IS NULL), $8, $8)`,
			id, orgID, pageID, in.Name, in.Status, in.DisplayUptime, in.DisplayMetrics, s.now())
		if err != nil {
			return err
		}
		if d, err = getComponent(ctx, tx, orgID, pageID, id); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "created", AuditableType: "StatusPageComponent",
			AuditableID: d.ID, AuditableDisplayName: d.Name, Metadata: map[string]any{"status_page_id": pageID.String(), "status": d.Status}})
	})
	return d, err
}

// ComponentPatch changes a component; nil fields stay as they are.
type ComponentPatch struct {
	Name           *string
	Status         *string
	DisplayUptime  *bool
	DisplayMetrics *bool
	GroupSet       bool       // group_id given
	GroupID        *uuid.UUID // nil with GroupSet: ungroup
	CheckIDs       *[]uuid.UUID
	HeartbeatSet   bool       // heartbeat_id given
	HeartbeatID    *uuid.UUID // nil with HeartbeatSet: unlink
	OverrideStatus *bool
}

// UpdateComponent applies p and audits it. A component linked to checks or a heartbeat and not
// overridden follows its monitors: its status is recomputed at once and cannot be set by hand.
func (s *Store) UpdateComponent(ctx context.Context, actor Actor, orgID, pageID, id uuid.UUID, p ComponentPatch) (statuspage.ComponentDetail, error) {
	var d statuspage.ComponentDetail
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := lockPage(ctx, tx, orgID, pageID); err != nil {
			return err
		}
		cur, err := getComponent(ctx, tx, orgID, pageID, id)
		if err != nil {
			return err
		}
		now := s.now()
		if p.GroupSet && !sameGroup(cur.GroupID, p.GroupID) {
			if p.GroupID != nil {
				var ok bool
				if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM status_page_groups WHERE org_id = $1 AND status_page_id = $2 AND id = $3)`,
					orgID, pageID, *p.GroupID).Scan(&ok); err != nil {
					return err
				}
				if !ok {
					return spValidation("group_id", "no such group on this status page")
				}
			}
			if _, err := tx.Exec(ctx, `UPDATE status_page_components SET group_id = $4,
					sort_order = (SELECT count(*) FROM status_page_components WHERE status_page_id = $2
						AND group_id IS NOT DISTINCT FROM $4 AND id <> $3)
				WHERE org_id = $1 AND status_page_id = $2 AND id = $3`, orgID, pageID, id, p.GroupID); err != nil {
				return err
			}
		}
		if p.CheckIDs != nil {
			ids := *p.CheckIDs
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM checks WHERE org_id = $1 AND id = ANY($2)`, orgID, ids).Scan(&n); err != nil {
				return err
			}
			if n != len(ids) {
				return spValidation("check_ids", "every id must be a check of this organization")
			}
			if _, err := tx.Exec(ctx, `DELETE FROM status_page_component_checks WHERE org_id = $1 AND component_id = $2`, orgID, id); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO status_page_component_checks (org_id, component_id, check_id)
				SELECT $1, $2, unnest($3::uuid[])`, orgID, id, ids); err != nil {
				return err
			}
		}
		if p.HeartbeatSet {
			if p.HeartbeatID != nil {
				if err := heartbeatExists(ctx, tx, orgID, *p.HeartbeatID); err != nil {
					return err
				}
			}
			if _, err := tx.Exec(ctx, `UPDATE status_page_components SET heartbeat_id = $3 WHERE org_id = $1 AND id = $2`, orgID, id, p.HeartbeatID); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE status_page_components SET name = coalesce($3, name),
				display_uptime = coalesce($4, display_uptime), display_metrics = coalesce($5, display_metrics),
				override_status = coalesce($6, override_status), updated_at = $7
			WHERE org_id = $1 AND id = $2`, orgID, id, p.Name, p.DisplayUptime, p.DisplayMetrics, p.OverrideStatus, now); err != nil {
			return err
		}
		linked, err := linkedComponents(ctx, tx, `c.org_id = $1 AND c.id = $2`, orgID, id)
		if err != nil {
			return err
		}
		switch {
		case len(linked) > 0 && p.Status != nil:
			return spValidation("status", "cannot be set by hand while the component follows its checks or heartbeat; set override_status to true")
		case len(linked) > 0:
			if err := applyMonitorStatus(ctx, tx, linked[0], now); err != nil {
				return err
			}
		case p.Status != nil:
			if _, err := tx.Exec(ctx, `UPDATE status_page_components SET status = $3 WHERE org_id = $1 AND id = $2`, orgID, id, *p.Status); err != nil {
				return err
			}
		}
		if d, err = getComponent(ctx, tx, orgID, pageID, id); err != nil {
			return err
		}
		meta := map[string]any{"status_page_id": pageID.String(), "status": d.Status, "check_ids": d.CheckIDs,
			"heartbeat_id": d.HeartbeatID, "group_id": d.GroupID, "override_status": d.OverrideStatus}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "updated", AuditableType: "StatusPageComponent",
			AuditableID: d.ID, AuditableDisplayName: d.Name, Metadata: meta})
	})
	return d, err
}

func sameGroup(cur *string, next *uuid.UUID) bool {
	if cur == nil || next == nil {
		return cur == nil && next == nil
	}
	return *cur == next.String()
}

// heartbeatExists is a 400 unless the organization has the heartbeat. The heartbeats table is
// created by its own migration; until it exists no heartbeat can be linked.
func heartbeatExists(ctx context.Context, tx pgx.Tx, orgID, id uuid.UUID) error {
	var ok bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass('public.heartbeats') IS NOT NULL`).Scan(&ok); err != nil {
		return err
	}
	if ok {
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM heartbeats WHERE org_id = $1 AND id = $2)`, orgID, id).Scan(&ok); err != nil {
			return err
		}
	}
	if !ok {
		return spValidation("heartbeat_id", "no such heartbeat in this organization")
	}
	return nil
}

// DeleteComponent deletes a component (its links, incident references and subscriptions go
// with it), and audits it.
func (s *Store) DeleteComponent(ctx context.Context, actor Actor, orgID, pageID, id uuid.UUID) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := lockPage(ctx, tx, orgID, pageID); err != nil {
			return err
		}
		var name string
		if err := tx.QueryRow(ctx, `DELETE FROM status_page_components WHERE org_id = $1 AND status_page_id = $2 AND id = $3 RETURNING name`,
			orgID, pageID, id).Scan(&name); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "deleted", AuditableType: "StatusPageComponent",
			AuditableID: id.String(), AuditableDisplayName: name, Metadata: map[string]any{"status_page_id": pageID.String()}})
	})
}

// reorder sets sort_order = index for ids, which must be exactly the rows current selects.
func reorder(ctx context.Context, tx pgx.Tx, table, field, current string, args []any, ids []uuid.UUID) error {
	rows, err := tx.Query(ctx, current, args...)
	if err != nil {
		return err
	}
	have, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return err
	}
	want := slices.Clone(ids)
	slices.SortFunc(have, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	slices.SortFunc(want, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	if !slices.Equal(have, want) {
		return spValidation(field, "must list each of the %d ids exactly once, in the wanted order", len(have))
	}
	for i, id := range ids {
		if _, err := tx.Exec(ctx, `UPDATE `+table+` SET sort_order = $2 WHERE org_id = $3 AND id = $1`, id, i, args[0]); err != nil {
			return err
		}
	}
	return nil
}

// SortComponents orders a page's ungrouped components; ids must be exactly those components.
func (s *Store) SortComponents(ctx context.Context, actor Actor, orgID, pageID uuid.UUID, ids []uuid.UUID) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		name, err := lockPage(ctx, tx, orgID, pageID)
		if err != nil {
			return err
		}
		if err := reorder(ctx, tx, "status_page_components", "component_ids",
			`SELECT id FROM status_page_components WHERE org_id = $1 AND status_page_id = $2 AND group_id IS NULL`,
			[]any{orgID, pageID}, ids); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "components_sorted", AuditableType: "StatusPage",
			AuditableID: pageID.String(), AuditableDisplayName: name, Metadata: map[string]any{"component_ids": spStrings(ids)}})
	})
}

// SortGroups orders a page's groups; ids must be exactly its groups.
func (s *Store) SortGroups(ctx context.Context, actor Actor, orgID, pageID uuid.UUID, ids []uuid.UUID) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		name, err := lockPage(ctx, tx, orgID, pageID)
		if err != nil {
			return err
		}
		if err := reorder(ctx, tx, "status_page_groups", "group_ids",
			`SELECT id FROM status_page_groups WHERE org_id = $1 AND status_page_id = $2`, []any{orgID, pageID}, ids); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "groups_sorted", AuditableType: "StatusPage",
			AuditableID: pageID.String(), AuditableDisplayName: name, Metadata: map[string]any{"group_ids": spStrings(ids)}})
	})
}

// SortGroupComponents orders the components of one group; ids must be exactly its components.
func (s *Store) SortGroupComponents(ctx context.Context, actor Actor, orgID, pageID, groupID uuid.UUID, ids []uuid.UUID) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := lockPage(ctx, tx, orgID, pageID); err != nil {
			return err
		}
		var name string
		if err := tx.QueryRow(ctx, `SELECT name FROM status_page_groups WHERE org_id = $1 AND status_page_id = $2 AND id = $3`,
			orgID, pageID, groupID).Scan(&name); err != nil {
			return err
		}
		if err := reorder(ctx, tx, "status_page_components", "component_ids",
			`SELECT id FROM status_page_components WHERE org_id = $1 AND group_id = $2`, []any{orgID, groupID}, ids); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "components_sorted", AuditableType: "StatusPageComponentGroup",
			AuditableID: groupID.String(), AuditableDisplayName: name, Metadata: map[string]any{"component_ids": spStrings(ids)}})
	})
}

// linkedComponent is a component that follows its monitors, with their states.
type linkedComponent struct {
	OrgID, ID uuid.UUID
	Name      string
	Status    string
	Monitors  []statuspage.Monitor
}

// linkedComponents returns the components matching where (with args) that follow their
// monitors: linked to a check or a heartbeat, not overridden, and not in a maintenance in
// progress (the maintenance owns their status until it ends).
func linkedComponents(ctx context.Context, q spQuerier, where string, args ...any) ([]linkedComponent, error) {
	rows, err := q.Query(ctx, `SELECT c.org_id, c.id, c.name, c.status, c.heartbeat_id,
			coalesce((SELECT array_agg(ch.state ORDER BY ch.id) FROM status_page_component_checks l
				JOIN checks ch ON ch.org_id = l.org_id AND ch.id = l.check_id WHERE l.component_id = c.id), '{}'),
			coalesce((SELECT array_agg(ch.paused ORDER BY ch.id) FROM status_page_component_checks l
				JOIN checks ch ON ch.org_id = l.org_id AND ch.id = l.check_id WHERE l.component_id = c.id), '{}')
		FROM status_page_components c
		WHERE `+where+` AND NOT c.override_status
			AND (c.heartbeat_id IS NOT NULL OR EXISTS (SELECT 1 FROM status_page_component_checks l WHERE l.component_id = c.id))
			AND NOT EXISTS (SELECT 1 FROM status_page_incident_components ic JOIN status_page_incidents i ON i.id = ic.incident_id
				WHERE ic.component_id = c.id AND i.maintenance_state = 'IN_PROGRESS')
		ORDER BY c.id`, args...)
	if err != nil {
		return nil, err
	}
	type row struct {
		linkedComponent
		hb *uuid.UUID
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		var states []string
		var paused []bool
		err := r.Scan(&x.OrgID, &x.ID, &x.Name, &x.Status, &x.hb, &states, &paused)
		for i := range states {
			x.Monitors = append(x.Monitors, statuspage.Monitor{State: states[i], Paused: paused[i]})
		}
		return x, err
	})
	if err != nil {
		return nil, err
	}
	var hbs []uuid.UUID
	for _, x := range got {
		if x.hb != nil {
			hbs = append(hbs, *x.hb)
		}
	}
	type hbKey struct{ org, id uuid.UUID }
	hbState := map[hbKey]statuspage.Monitor{}
	if len(hbs) > 0 {
		var exists bool
		if err := q.QueryRow(ctx, `SELECT to_regclass('public.heartbeats') IS NOT NULL`).Scan(&exists); err != nil {
			return nil, err
		}
		if exists {
			rows, err := q.Query(ctx, `SELECT org_id, id, state, paused FROM heartbeats WHERE id = ANY($1)`, hbs)
			if err != nil {
				return nil, err
			}
			var k hbKey
			var m statuspage.Monitor
			if _, err := pgx.ForEachRow(rows, []any{&k.org, &k.id, &m.State, &m.Paused}, func() error {
				hbState[k] = m
				return nil
			}); err != nil {
				return nil, err
			}
		}
	}
	out := make([]linkedComponent, len(got))
	for i, x := range got {
		if x.hb != nil {
			if m, ok := hbState[hbKey{x.OrgID, *x.hb}]; ok {
				x.Monitors = append(x.Monitors, m)
			}
		}
		out[i] = x.linkedComponent
	}
	return out, nil
}

// applyMonitorStatus sets a linked component's status from its monitors when it differs, and
// reports whether it changed.
func applyMonitorStatus(ctx context.Context, tx pgx.Tx, c linkedComponent, now time.Time) error {
	next := statuspage.FromMonitors(c.Monitors)
	if next == c.Status {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE status_page_components SET status = $3, updated_at = $4 WHERE org_id = $1 AND id = $2`,
		c.OrgID, c.ID, next, now)
	return err
}

// SyncLinkedComponents sets every monitor-fed component's status from its monitors' current
// states (statuspage.FromMonitors), across organizations: it is the system's own job, and
// each row is written in its own organization. Changes are audited as the system's.
func (s *Store) SyncLinkedComponents(ctx context.Context, now time.Time) error {
	linked, err := linkedComponents(ctx, s.pool, `true`)
	if err != nil {
		return translate(err)
	}
	for _, c := range linked {
		next := statuspage.FromMonitors(c.Monitors)
		if next == c.Status {
			continue
		}
		err := s.inTx(ctx, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `UPDATE status_page_components SET status = $3, updated_at = $4
				WHERE org_id = $1 AND id = $2 AND status = $5 AND NOT override_status`, c.OrgID, c.ID, next, now, c.Status)
			if err != nil || tag.RowsAffected() == 0 {
				return err
			}
			return writeAudit(ctx, tx, c.OrgID, SystemActor, AuditEvent{Action: "status_changed", AuditableType: "StatusPageComponent",
				AuditableID: c.ID.String(), AuditableDisplayName: c.Name,
				Metadata: map[string]any{"old_status": c.Status, "new_status": next, "source": "monitors"}})
		})
		if err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("sync component %s: %w", c.ID, err)
		}
	}
	return nil
}
