package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// VarRef is one {{NAME}} reference in a check's saved configuration, and the field it is in.
type VarRef struct {
	Field string // e.g. "headers.Authorization", "auth_password"
	Name  string
}

// bindCheckVars resolves refs in the check's variable scope (its project, or the organization
// pool when the check is Unassigned) and makes them the check's recorded references, replacing
// earlier ones. A name with no variable in that scope is a *ValidationError on its field, so
// the whole write is refused and nothing is half-written. q runs in the write's transaction.
func bindCheckVars(ctx context.Context, q *dbsqlc.Queries, orgID, checkID uuid.UUID, projectID *uuid.UUID, refs []VarRef) error {
	if err := q.ClearCheckVarRefs(ctx, dbsqlc.ClearCheckVarRefsParams{OrgID: orgID, CheckID: checkID}); err != nil {
		return fmt.Errorf("clear variable references: %w", err)
	}
	if len(refs) == 0 {
		return nil
	}
	names := make([]string, 0, len(refs))
	for _, r := range refs {
		names = append(names, r.Name)
	}
	vars, err := q.ScopeVarsByName(ctx, dbsqlc.ScopeVarsByNameParams{OrgID: orgID, ProjectID: projectID, Names: names})
	if err != nil {
		return fmt.Errorf("resolve variable references: %w", err)
	}
	ids := make(map[string]uuid.UUID, len(vars))
	for _, v := range vars {
		ids[v.Name] = v.ID
	}
	seen := map[uuid.UUID]bool{}
	var bound []uuid.UUID
	for _, r := range refs {
		id, ok := ids[r.Name]
		if !ok {
			scope := "this organization's Unassigned scope"
			if projectID != nil {
				scope = "the check's project"
			}
			return &ValidationError{Field: r.Field, Message: fmt.Sprintf("references {{%s}}, but no environment variable %s exists in %s", r.Name, r.Name, scope)}
		}
		if !seen[id] {
			seen[id] = true
			bound = append(bound, id)
		}
	}
	if err := q.AddCheckVarRefs(ctx, dbsqlc.AddCheckVarRefsParams{OrgID: orgID, CheckID: checkID, EnvVarIds: bound}); err != nil {
		return fmt.Errorf("record variable references: %w", err)
	}
	return nil
}

// keepVarRefs drops the check's recorded references to variables whose names refs no longer use.
func keepVarRefs(ctx context.Context, q *dbsqlc.Queries, orgID, checkID uuid.UUID, refs []VarRef) error {
	names := make([]string, 0, len(refs))
	for _, r := range refs {
		names = append(names, r.Name)
	}
	if err := q.KeepCheckVarRefs(ctx, dbsqlc.KeepCheckVarRefsParams{OrgID: orgID, CheckID: checkID, Names: names}); err != nil {
		return fmt.Errorf("drop unused variable references: %w", err)
	}
	return nil
}
