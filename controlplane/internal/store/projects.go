package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrProjectNotFound is the ErrNotFound of a project named by another resource's input (a
// check's or variable's project_id, a move's destination), so that the API can say which
// resource is missing. errors.Is(err, ErrNotFound) holds for it too.
var ErrProjectNotFound = fmt.Errorf("project %w", ErrNotFound)

// ProjectConflictCode is the errors[].code the contract pins for the typed project conflicts
// (project_is_default, project_not_empty, project_move_variable_conflict).
const ProjectConflictCode = 10010

// Project groups resources of an organization.
//
// Vantage keeps api.md's "Unassigned" model (supplement §3.1): a resource without a project is
// Unassigned, and there is no Default project. IsDefault exists because the project record of
// the contract carries is_default; every project Vantage creates has it false, and the rules
// that protect a Default project (it cannot be deleted) are still honoured should a row ever
// carry true.
type Project struct {
	ID        uuid.UUID
	OrgID     uuid.UUID
	Name      string
	IsDefault bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

const projectColumns = `id, org_id, name, is_default, created_at, updated_at`

func scanProject(row pgx.Row) (Project, error) {
	var p Project
	err := row.Scan(&p.ID, &p.OrgID, &p.Name, &p.IsDefault, &p.CreatedAt, &p.UpdatedAt)
	return p, err
}

// ListProjects returns one page of the organization's projects, newest first, and the total.
func (s *Store) ListProjects(ctx context.Context, orgID uuid.UUID, limit, offset int64) ([]Project, int64, error) {
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM projects WHERE org_id = $1`, orgID).Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+projectColumns+` FROM projects WHERE org_id = $1
		ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`, orgID, limit, offset)
	if err != nil {
		return nil, 0, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Project, error) { return scanProject(r) })
	if err != nil {
		return nil, 0, translate(err)
	}
	return out, total, nil
}

// GetProject returns one project of the organization (ErrNotFound when missing).
func (s *Store) GetProject(ctx context.Context, orgID, id uuid.UUID) (Project, error) {
	p, err := scanProject(s.pool.QueryRow(ctx, `SELECT `+projectColumns+` FROM projects WHERE org_id = $1 AND id = $2`, orgID, id))
	return p, translate(err)
}

// CreateProject creates a project (never a Default one) and audits it.
func (s *Store) CreateProject(ctx context.Context, actor Actor, orgID uuid.UUID, name string) (Project, error) {
	var p Project
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		now := s.now()
		var err error
		p, err = scanProject(tx.QueryRow(ctx, `INSERT INTO projects (id, org_id, name, is_default, created_at, updated_at)
			VALUES ($1, $2, $3, false, $4, $4) RETURNING `+projectColumns, uuid.Must(uuid.NewV7()), orgID, name, now))
		if err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{
			Action: "created", AuditableType: "Project", AuditableID: p.ID.String(), AuditableDisplayName: p.Name,
		})
	})
	return p, err
}

// RenameProject changes a project's name (its id never changes) and audits it.
func (s *Store) RenameProject(ctx context.Context, actor Actor, orgID, id uuid.UUID, name string) (Project, error) {
	var p Project
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var old string
		if err := tx.QueryRow(ctx, `SELECT name FROM projects WHERE org_id = $1 AND id = $2 FOR NO KEY UPDATE`, orgID, id).Scan(&old); err != nil {
			return err
		}
		var err error
		p, err = scanProject(tx.QueryRow(ctx, `UPDATE projects SET name = $3, updated_at = $4
			WHERE org_id = $1 AND id = $2 RETURNING `+projectColumns, orgID, id, name, s.now()))
		if err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{
			Action: "updated", AuditableType: "Project", AuditableID: p.ID.String(), AuditableDisplayName: p.Name,
			Metadata: map[string]any{"previous_name": old},
		})
	})
	return p, err
}

// DeleteProject deletes an empty, non-Default project and audits it. A project that holds a
// check or a variable is a *ConflictError project_not_empty.
//
// The emptiness check and the delete share one transaction that first locks the project row
// FOR UPDATE. Inserting a row that references the project takes a FOR KEY SHARE lock on it
// (foreign key), which conflicts: a concurrent create either commits before the lock is granted
// and is then seen by the check, or waits and fails its foreign key after the delete. The
// foreign keys of checks and variables (and of any resource added later) are the last line: a
// delete they refuse is reported as project_not_empty as well.
func (s *Store) DeleteProject(ctx context.Context, actor Actor, orgID, id uuid.UUID) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var name string
		var isDefault bool
		err := tx.QueryRow(ctx, `SELECT name, is_default FROM projects WHERE org_id = $1 AND id = $2 FOR UPDATE`, orgID, id).
			Scan(&name, &isDefault)
		if err != nil {
			return err
		}
		if isDefault {
			return &ConflictError{Type: "project_is_default", Code: ProjectConflictCode,
				Message: "the Default project cannot be deleted"}
		}
		var checks, vars int64
		err = tx.QueryRow(ctx, `SELECT
				(SELECT count(*) FROM checks WHERE org_id = $1 AND project_id = $2),
				(SELECT count(*) FROM env_vars WHERE org_id = $1 AND project_id = $2)`, orgID, id).Scan(&checks, &vars)
		if err != nil {
			return err
		}
		if checks > 0 || vars > 0 {
			return projectNotEmpty(fmt.Sprintf("the project still holds %d check(s) and %d environment variable(s); move or delete them first", checks, vars))
		}
		if _, err := tx.Exec(ctx, `DELETE FROM projects WHERE org_id = $1 AND id = $2`, orgID, id); err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "23503" {
				return projectNotEmpty("the project still holds resources; move or delete them first")
			}
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{
			Action: "deleted", AuditableType: "Project", AuditableID: id.String(), AuditableDisplayName: name,
		})
	})
}

func projectNotEmpty(msg string) *ConflictError {
	return &ConflictError{Type: "project_not_empty", Code: ProjectConflictCode, Message: "only empty projects can be deleted: " + msg}
}

// lockProjectForReference makes sure a project of the organization exists and keeps it from
// being deleted until tx ends (ErrProjectNotFound otherwise). projectID nil is the organization
// pool (Unassigned) and always exists.
func lockProjectForReference(ctx context.Context, tx pgx.Tx, orgID uuid.UUID, projectID *uuid.UUID) error {
	if projectID == nil {
		return nil
	}
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM projects WHERE org_id = $1 AND id = $2 FOR KEY SHARE`, orgID, *projectID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrProjectNotFound
	}
	return err
}

// ProjectExists reports ErrProjectNotFound unless the organization has this project; nil
// projectID (Unassigned) always exists.
func (s *Store) ProjectExists(ctx context.Context, orgID uuid.UUID, projectID *uuid.UUID) error {
	if projectID == nil {
		return nil
	}
	var one int
	err := s.pool.QueryRow(ctx, `SELECT 1 FROM projects WHERE org_id = $1 AND id = $2`, orgID, *projectID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrProjectNotFound
	}
	return translate(err)
}
