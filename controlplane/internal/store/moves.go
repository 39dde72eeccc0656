package store

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// MoveResult is where a check is after MoveCheck.
type MoveResult struct {
	ID        uuid.UUID
	ProjectID *uuid.UUID // nil: Unassigned
	Moved     bool       // false when the check already was there (nothing was written)
}

// MoveCheck moves a check to the project dest, or to Unassigned when dest is nil, and audits it
// ("moved", with the source and destination projects).
//
// A missing check is ErrNotFound; a missing destination is ErrProjectNotFound. A move to where
// the check already is changes nothing, timestamps included. Otherwise the check's variable
// references are rebound by name to the destination scope's variables, atomically: every
// variable the check references must exist there under the same name and with the same type,
// else the move is a *ConflictError project_move_variable_conflict (code 10010) and nothing
// changes. Variables are never copied, and there is no fallback to the source scope.
func (s *Store) MoveCheck(ctx context.Context, actor Actor, orgID, checkID uuid.UUID, dest *uuid.UUID) (MoveResult, error) {
	var res MoveResult
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		res, err = s.moveCheckTx(ctx, tx, actor, orgID, checkID, dest)
		return err
	})
	return res, err
}

// moveCheckTx is MoveCheck inside the caller's transaction, for store code that changes a
// check's project as part of a larger write (PATCH with project_id). It reads the check's
// current references from check_env_refs, so call it before re-binding references of a changed
// configuration (or bind them in the destination scope afterwards).
func (s *Store) moveCheckTx(ctx context.Context, tx pgx.Tx, actor Actor, orgID, checkID uuid.UUID, dest *uuid.UUID) (MoveResult, error) {
	res := MoveResult{ID: checkID, ProjectID: dest}
	var source *uuid.UUID
	var name string
	err := tx.QueryRow(ctx, `SELECT project_id, name FROM checks WHERE org_id = $1 AND id = $2 FOR NO KEY UPDATE`, orgID, checkID).
		Scan(&source, &name)
	if err != nil {
		return res, err
	}
	if err := lockProjectForReference(ctx, tx, orgID, dest); err != nil {
		return res, err
	}
	if sameScope(source, dest) {
		return res, nil
	}

	refs, err := scopedVars(ctx, tx, `SELECT v.id, v.name, v.type FROM check_env_refs r
		JOIN env_vars v ON v.org_id = r.org_id AND v.id = r.env_var_id
		WHERE r.org_id = $1 AND r.check_id = $2`, orgID, checkID)
	if err != nil {
		return res, fmt.Errorf("read variable references: %w", err)
	}
	var rebound []uuid.UUID
	if len(refs) > 0 {
		names := make([]string, 0, len(refs))
		for n := range refs {
			names = append(names, n)
		}
		sort.Strings(names)
		// FOR SHARE keeps the destination variables from being renamed or deleted before the
		// new references are recorded.
		found, err := scopedVars(ctx, tx, `SELECT id, name, type FROM env_vars
			WHERE org_id = $1 AND project_id IS NOT DISTINCT FROM $2 AND name = ANY($3)
			ORDER BY id FOR SHARE`, orgID, dest, names)
		if err != nil {
			return res, fmt.Errorf("resolve destination variables: %w", err)
		}
		var problems []string
		for _, n := range names {
			d, ok := found[n]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("%s does not exist there", n))
			case d.typ != refs[n].typ:
				problems = append(problems, fmt.Sprintf("%s is %s there but %s here", n, d.typ, refs[n].typ))
			default:
				rebound = append(rebound, d.id)
			}
		}
		if len(problems) > 0 {
			return res, &ConflictError{Type: "project_move_variable_conflict", Code: ProjectConflictCode,
				Message: fmt.Sprintf("the check references environment variables that the destination %s does not provide with the same type: %s",
					scopeName(dest), strings.Join(problems, "; "))}
		}
	}

	if _, err := tx.Exec(ctx, `UPDATE checks SET project_id = $3, updated_at = $4 WHERE org_id = $1 AND id = $2`,
		orgID, checkID, dest, s.now()); err != nil {
		return res, fmt.Errorf("move check: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM check_env_refs WHERE org_id = $1 AND check_id = $2`, orgID, checkID); err != nil {
		return res, fmt.Errorf("clear variable references: %w", err)
	}
	for _, id := range rebound {
		if _, err := tx.Exec(ctx, `INSERT INTO check_env_refs (org_id, check_id, env_var_id) VALUES ($1, $2, $3)`, orgID, checkID, id); err != nil {
			return res, fmt.Errorf("rebind variable reference: %w", err)
		}
	}
	res.Moved = true
	return res, writeAudit(ctx, tx, orgID, actor, AuditEvent{
		Action: "moved", AuditableType: "Check", AuditableID: checkID.String(), AuditableDisplayName: name,
		Metadata: map[string]any{"from_project_id": uuidOrNil(source), "to_project_id": uuidOrNil(dest), "variables_rebound": len(rebound)},
	})
}

type scopedVar struct {
	id  uuid.UUID
	typ string
}

// scopedVars runs a query of (id, name, type) rows into a map by name.
func scopedVars(ctx context.Context, tx pgx.Tx, sql string, args ...any) (map[string]scopedVar, error) {
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]scopedVar{}
	for rows.Next() {
		var v scopedVar
		var name string
		if err := rows.Scan(&v.id, &name, &v.typ); err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, rows.Err()
}

func sameScope(a, b *uuid.UUID) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func scopeName(projectID *uuid.UUID) string {
	if projectID == nil {
		return "Unassigned scope (the organization-level variables)"
	}
	return "project " + projectID.String()
}
