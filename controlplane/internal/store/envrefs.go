package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// VarRef is one {{NAME}} reference in a check's saved configuration, and the field it is in.
type VarRef struct {
	Field string // e.g. "headers.Authorization", "auth_password"
	Name  string
}

// bindCheckVars resolves refs in the check's variable scope (its project, or the organization
// pool when the check is Unassigned) and makes them the check's recorded references, replacing
// earlier ones. A name with no variable in that scope is a *ValidationError on its field, so
// the whole write is refused and nothing is half-written.
func bindCheckVars(ctx context.Context, tx pgx.Tx, orgID, checkID uuid.UUID, projectID *uuid.UUID, refs []VarRef) error {
	if _, err := tx.Exec(ctx, `DELETE FROM check_env_refs WHERE org_id = $1 AND check_id = $2`, orgID, checkID); err != nil {
		return fmt.Errorf("clear variable references: %w", err)
	}
	if len(refs) == 0 {
		return nil
	}
	names := make([]string, 0, len(refs))
	for _, r := range refs {
		names = append(names, r.Name)
	}
	rows, err := tx.Query(ctx, `SELECT name, id FROM env_vars
		WHERE org_id = $1 AND project_id IS NOT DISTINCT FROM $2 AND name = ANY($3)`, orgID, projectID, names)
	if err != nil {
		return fmt.Errorf("resolve variable references: %w", err)
	}
	ids := map[string]uuid.UUID{}
	for rows.Next() {
		var name string
		var id uuid.UUID
		if err := rows.Scan(&name, &id); err != nil {
			rows.Close()
			return err
		}
		ids[name] = id
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	seen := map[uuid.UUID]bool{}
	for _, r := range refs {
		id, ok := ids[r.Name]
		if !ok {
			scope := "this organization's Unassigned scope"
			if projectID != nil {
				scope = "the check's project"
			}
			return &ValidationError{Field: r.Field, Message: fmt.Sprintf("references {{%s}}, but no environment variable %s exists in %s", r.Name, r.Name, scope)}
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		if _, err := tx.Exec(ctx, `INSERT INTO check_env_refs (org_id, check_id, env_var_id) VALUES ($1, $2, $3)`, orgID, checkID, id); err != nil {
			return fmt.Errorf("record variable reference: %w", err)
		}
	}
	return nil
}
