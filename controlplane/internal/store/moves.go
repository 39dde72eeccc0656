package store

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
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
	q := s.q.WithTx(tx)
	cur, err := q.LockCheckForMove(ctx, dbsqlc.LockCheckForMoveParams{OrgID: orgID, ID: checkID})
	if err != nil {
		return res, err
	}
	source := cur.ProjectID
	if err := lockProjectForReference(ctx, tx, orgID, dest); err != nil {
		return res, err
	}
	if sameScope(source, dest) {
		return res, nil
	}

	refs, err := q.CheckVarRefs(ctx, dbsqlc.CheckVarRefsParams{OrgID: orgID, CheckID: checkID})
	if err != nil {
		return res, fmt.Errorf("read variable references: %w", err)
	}
	var rebound []uuid.UUID
	if len(refs) > 0 {
		typeOf := make(map[string]string, len(refs))
		names := make([]string, 0, len(refs))
		for _, r := range refs {
			typeOf[r.Name] = r.Type
			names = append(names, r.Name)
		}
		sort.Strings(names)
		// FOR SHARE keeps the destination variables from being renamed or deleted before the
		// new references are recorded.
		rows, err := q.ShareScopeVarsByName(ctx, dbsqlc.ShareScopeVarsByNameParams{OrgID: orgID, ProjectID: dest, Names: names})
		if err != nil {
			return res, fmt.Errorf("resolve destination variables: %w", err)
		}
		found := make(map[string]dbsqlc.ShareScopeVarsByNameRow, len(rows))
		for _, r := range rows {
			found[r.Name] = r
		}
		var problems []string
		for _, n := range names {
			d, ok := found[n]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("%s does not exist there", n))
			case d.Type != typeOf[n]:
				problems = append(problems, fmt.Sprintf("%s is %s there but %s here", n, d.Type, typeOf[n]))
			default:
				rebound = append(rebound, d.ID)
			}
		}
		if len(problems) > 0 {
			return res, &ConflictError{Type: "project_move_variable_conflict", Code: ProjectConflictCode,
				Message: fmt.Sprintf("the check references environment variables that the destination %s does not provide with the same type: %s",
					scopeName(dest), strings.Join(problems, "; "))}
		}
	}

	if err := q.SetCheckProject(ctx, dbsqlc.SetCheckProjectParams{OrgID: orgID, ID: checkID, ProjectID: dest, UpdatedAt: s.now()}); err != nil {
		return res, fmt.Errorf("move check: %w", err)
	}
	if err := q.ClearCheckVarRefs(ctx, dbsqlc.ClearCheckVarRefsParams{OrgID: orgID, CheckID: checkID}); err != nil {
		return res, fmt.Errorf("clear variable references: %w", err)
	}
	if len(rebound) > 0 {
		if err := q.AddCheckVarRefs(ctx, dbsqlc.AddCheckVarRefsParams{OrgID: orgID, CheckID: checkID, EnvVarIds: rebound}); err != nil {
			return res, fmt.Errorf("rebind variable references: %w", err)
		}
	}
	res.Moved = true
	return res, writeAudit(ctx, tx, orgID, actor, AuditEvent{
		Action: "moved", AuditableType: "Check", AuditableID: checkID.String(), AuditableDisplayName: cur.Name,
		Metadata: map[string]any{"from_project_id": uuidOrNil(source), "to_project_id": uuidOrNil(dest), "variables_rebound": len(rebound)},
	})
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
