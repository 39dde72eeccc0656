package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
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
// Vantage keeps the public contract's "Unassigned" model (api/openapi/projects.yaml): a resource without a project is
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

// ListProjects returns one page of the organization's projects, newest first, and the total.
func (s *Store) ListProjects(ctx context.Context, orgID uuid.UUID, limit, offset int64) ([]Project, int64, error) {
	total, err := s.q.CountProjects(ctx, orgID)
	if err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.q.ListProjects(ctx, dbsqlc.ListProjectsParams{OrgID: orgID, MaxRows: limit, SkipRows: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	out := make([]Project, len(rows))
	for i, p := range rows {
		out[i] = Project(p)
	}
	return out, total, nil
}

// GetProject returns one project of the organization (ErrNotFound when missing).
func (s *Store) GetProject(ctx context.Context, orgID, id uuid.UUID) (Project, error) {
	p, err := s.q.GetProject(ctx, dbsqlc.GetProjectParams{OrgID: orgID, ID: id})
	return Project(p), translate(err)
}

// CreateProject creates a project (never a Default one) and audits it.
func (s *Store) CreateProject(ctx context.Context, actor Actor, orgID uuid.UUID, name string) (Project, error) {
	var p dbsqlc.Project
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		p, err = s.q.WithTx(tx).CreateProject(ctx, dbsqlc.CreateProjectParams{
			ID: uuid.Must(uuid.NewV7()), OrgID: orgID, Name: name, CreatedAt: s.now()})
		if err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{
			Action: "created", AuditableType: "Project", AuditableID: p.ID.String(), AuditableDisplayName: p.Name,
		})
	})
	return Project(p), err
}

// RenameProject changes a project's name (its id never changes) and audits it.
func (s *Store) RenameProject(ctx context.Context, actor Actor, orgID, id uuid.UUID, name string) (Project, error) {
	var p dbsqlc.Project
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		old, err := q.LockProjectForRename(ctx, dbsqlc.LockProjectForRenameParams{OrgID: orgID, ID: id})
		if err != nil {
			return err
		}
		p, err = q.RenameProject(ctx, dbsqlc.RenameProjectParams{OrgID: orgID, ID: id, Name: name, UpdatedAt: s.now()})
		if err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{
			Action: "updated", AuditableType: "Project", AuditableID: p.ID.String(), AuditableDisplayName: p.Name,
			Metadata: map[string]any{"previous_name": old},
		})
	})
	return Project(p), err
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
		q := s.q.WithTx(tx)
		p, err := q.LockProjectForUpdate(ctx, dbsqlc.LockProjectForUpdateParams{OrgID: orgID, ID: id})
		if err != nil {
			return err
		}
		if p.IsDefault {
			return &ConflictError{Type: "project_is_default", Code: ProjectConflictCode,
				Message: "the Default project cannot be deleted"}
		}
		held, err := q.ProjectContents(ctx, dbsqlc.ProjectContentsParams{OrgID: orgID, ProjectID: &id})
		if err != nil {
			return err
		}
		if held.Checks > 0 || held.EnvVars > 0 {
			return projectNotEmpty(fmt.Sprintf("the project still holds %d check(s) and %d environment variable(s); move or delete them first", held.Checks, held.EnvVars))
		}
		if err := q.DeleteProject(ctx, dbsqlc.DeleteProjectParams{OrgID: orgID, ID: id}); err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "23503" {
				return projectNotEmpty("the project still holds resources; move or delete them first")
			}
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{
			Action: "deleted", AuditableType: "Project", AuditableID: id.String(), AuditableDisplayName: p.Name,
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
	n, err := dbsqlc.New(tx).LockProjectForReference(ctx, dbsqlc.LockProjectForReferenceParams{OrgID: orgID, ID: *projectID})
	if err == nil && n == 0 {
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
	ok, err := s.q.ProjectExists(ctx, dbsqlc.ProjectExistsParams{OrgID: orgID, ID: *projectID})
	if err == nil && !ok {
		return ErrProjectNotFound
	}
	return translate(err)
}
