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
	"github.com/vantagehq/vantage/pkg/check"
)

// Environment variable types.
const (
	EnvVarConfig = "config" // readable back through the API
	EnvVarSecret = "secret" // write-only; redacted from stored results
)

// Environment variable limits (api/openapi/environment-variables.yaml).
const (
	MaxEnvVarsPerOrg    = 1000
	MaxEnvVarValueBytes = 8192
)

// EnvVar is one {{NAME}} variable. Variables live in a scope: a project, or the organization
// pool (ProjectID nil) that Unassigned resources use; names are unique within a scope.
type EnvVar struct {
	ID        uuid.UUID
	OrgID     uuid.UUID
	ProjectID *uuid.UUID
	Name      string
	Type      string // EnvVarConfig or EnvVarSecret
	// Value is the plaintext of a config variable on single-variable reads and writes. It is
	// never filled for a secret, nor in lists: secrets leave the store only through ResolveVars.
	Value     *string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// envVarOf is the EnvVar of a row, without its value.
func envVarOf(r dbsqlc.EnvVar) EnvVar {
	return EnvVar{ID: r.ID, OrgID: r.OrgID, ProjectID: r.ProjectID, Name: r.Name, Type: r.Type, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// withValue fills v.Value from its sealed value when v is a config variable.
func (s *Store) withValue(v EnvVar, sealed []byte) (EnvVar, error) {
	if v.Type != EnvVarConfig {
		return v, nil
	}
	pt, err := s.sealer.Open(sealed)
	if err != nil {
		return v, fmt.Errorf("open value of environment variable %s: %w", v.ID, err)
	}
	str := string(pt)
	v.Value = &str
	return v, nil
}

// EnvVarFilter narrows ListEnvVars.
type EnvVarFilter struct {
	// Search keeps variables whose name contains it, case-insensitively ("" = all).
	Search string
	// Scoped restricts the list to one scope: ProjectID, or the organization pool when
	// ProjectID is nil. Unscoped lists every scope.
	Scoped    bool
	ProjectID *uuid.UUID
}

// ListEnvVars returns one page of the organization's variables, newest first, without values,
// and the total. A scoped list of a project that does not exist is ErrProjectNotFound.
func (s *Store) ListEnvVars(ctx context.Context, orgID uuid.UUID, f EnvVarFilter, limit, offset int64) ([]EnvVar, int64, error) {
	if f.Scoped {
		if err := s.ProjectExists(ctx, orgID, f.ProjectID); err != nil {
			return nil, 0, err
		}
	}
	total, err := s.q.CountEnvVars(ctx, dbsqlc.CountEnvVarsParams{OrgID: orgID, Search: f.Search, Scoped: f.Scoped, ProjectID: f.ProjectID})
	if err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.q.ListEnvVars(ctx, dbsqlc.ListEnvVarsParams{OrgID: orgID, Search: f.Search, Scoped: f.Scoped, ProjectID: f.ProjectID,
		PageLimit: limit, PageOffset: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	out := make([]EnvVar, len(rows))
	for i, r := range rows {
		out[i] = envVarOf(r)
	}
	return out, total, nil
}

// GetEnvVar returns one variable, with its value when it is a config variable.
func (s *Store) GetEnvVar(ctx context.Context, orgID, id uuid.UUID) (EnvVar, error) {
	r, err := s.q.GetEnvVar(ctx, dbsqlc.GetEnvVarParams{OrgID: orgID, ID: id})
	if err != nil {
		return EnvVar{}, translate(err)
	}
	return s.withValue(envVarOf(r), r.ValueEnc)
}

// NewEnvVar is the input of CreateEnvVar.
type NewEnvVar struct {
	ProjectID *uuid.UUID // nil: the organization pool
	Name      string
	Type      string
	Value     string
}

// CreateEnvVar stores a variable with its value sealed, and audits it (never the value).
// Conflicts: environment_variable_limit_reached when the organization already has
// MaxEnvVarsPerOrg variables, environment_variable_name_conflict when the scope has the name.
// A project that does not exist is ErrProjectNotFound.
func (s *Store) CreateEnvVar(ctx context.Context, actor Actor, orgID uuid.UUID, in NewEnvVar) (EnvVar, error) {
	sealed, err := s.sealer.Seal([]byte(in.Value))
	if err != nil {
		return EnvVar{}, fmt.Errorf("seal environment variable value: %w", err)
	}
	var v EnvVar
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		if err := q.LockOrgForEnvVars(ctx, orgID); err != nil {
			return err
		}
		if err := lockProjectForReference(ctx, tx, orgID, in.ProjectID); err != nil {
			return err
		}
		n, err := q.CountOrgEnvVars(ctx, orgID)
		if err != nil {
			return err
		}
		if n >= MaxEnvVarsPerOrg {
			return &ConflictError{Type: "environment_variable_limit_reached", Code: 409,
				Message: fmt.Sprintf("the organization already has %d environment variables, the most it may have", MaxEnvVarsPerOrg)}
		}
		r, err := q.CreateEnvVar(ctx, dbsqlc.CreateEnvVarParams{ID: uuid.Must(uuid.NewV7()), OrgID: orgID, ProjectID: in.ProjectID,
			Name: in.Name, Type: in.Type, ValueEnc: sealed, CreatedAt: s.now()})
		if err != nil {
			return nameConflict(err, in.Name)
		}
		v = envVarOf(r)
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{
			Action: "created", AuditableType: "EnvironmentVariable", AuditableID: v.ID.String(), AuditableDisplayName: v.Name,
			Metadata: map[string]any{"type": v.Type, "project_id": uuidOrNil(v.ProjectID)},
		})
	})
	if err != nil {
		return EnvVar{}, err
	}
	if v.Type == EnvVarConfig {
		value := in.Value
		v.Value = &value
	}
	return v, nil
}

// nameConflict turns the unique violation of (org_id, project_id, name) into the typed conflict.
func nameConflict(err error, name string) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return &ConflictError{Type: "environment_variable_name_conflict", Code: 409,
			Message: fmt.Sprintf("an environment variable named %s already exists in this scope", name)}
	}
	return err
}

// EnvVarPatch changes a variable; nil fields stay as they are. The type and the scope of a
// variable never change.
type EnvVarPatch struct {
	Name  *string
	Value *string
}

// UpdateEnvVar renames a variable and/or replaces its value, and audits it (never the value).
//
// A rename rewrites {{OLD}} into {{NEW}} in the saved configuration of every check that
// references the variable — the fields check.Spec.VarRefs names: uptime header values,
// auth_username and the sealed auth_password — in the same transaction, so no check is ever
// left referencing a name that does not exist.
func (s *Store) UpdateEnvVar(ctx context.Context, actor Actor, orgID, id uuid.UUID, p EnvVarPatch) (EnvVar, error) {
	var sealed []byte
	if p.Value != nil {
		var err error
		if sealed, err = s.sealer.Seal([]byte(*p.Value)); err != nil {
			return EnvVar{}, fmt.Errorf("seal environment variable value: %w", err)
		}
	}
	var v EnvVar
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		using := dbsqlc.LockChecksUsingEnvVarParams{OrgID: orgID, EnvVarID: id}
		if p.Name != nil {
			// Lock the referencing checks before the variable: check writes lock the check and
			// then (binding references) the variables, so taking the same order here keeps a
			// rename and a concurrent check update from deadlocking. renameVarRefs locks again,
			// which also covers a check bound between this statement and the variable lock.
			if _, err := q.LockChecksUsingEnvVar(ctx, using); err != nil {
				return fmt.Errorf("lock checks referencing the variable: %w", err)
			}
		}
		old, err := q.LockEnvVar(ctx, dbsqlc.LockEnvVarParams{OrgID: orgID, ID: id})
		if err != nil {
			return err
		}
		name := old.Name
		if p.Name != nil {
			name = *p.Name
		}
		if sealed == nil {
			sealed = old.ValueEnc
		}
		r, err := q.UpdateEnvVar(ctx, dbsqlc.UpdateEnvVarParams{OrgID: orgID, ID: id, Name: name, ValueEnc: sealed, UpdatedAt: s.now()})
		if err != nil {
			return nameConflict(err, name)
		}
		v = envVarOf(r)
		meta := map[string]any{"value_changed": p.Value != nil}
		if name != old.Name {
			checks, err := q.LockChecksUsingEnvVar(ctx, using)
			if err != nil {
				return fmt.Errorf("find checks referencing %s: %w", old.Name, err)
			}
			if err := s.renameVarRefs(ctx, q, checks, old.Name, name); err != nil {
				return err
			}
			meta["previous_name"] = old.Name
			meta["checks_rewritten"] = len(checks)
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{
			Action: "updated", AuditableType: "EnvironmentVariable", AuditableID: v.ID.String(), AuditableDisplayName: v.Name,
			Metadata: meta,
		})
	})
	if err != nil {
		return EnvVar{}, err
	}
	return s.withValue(v, sealed)
}

// renameVarRefs rewrites {{oldName}} into {{newName}} in the fields of checks that take
// references, and writes them back; the password is sealed again only when it changed.
func (s *Store) renameVarRefs(ctx context.Context, q *dbsqlc.Queries, checks []dbsqlc.LockChecksUsingEnvVarRow, oldName, newName string) error {
	rewrite := func(v string) string {
		return check.ReplaceVarRefs(v, func(name string) (string, bool) {
			if name == oldName {
				return "{{" + newName + "}}", true
			}
			return "", false
		})
	}
	now := s.now()
	for _, row := range checks {
		c, err := s.checkOfRow(row.Check)
		if err != nil {
			return err
		}
		var before *string
		if c.Spec.HTTP != nil {
			before = c.Spec.HTTP.AuthPassword
		}
		c.Spec.MapVarRefFields(rewrite)
		doc, err := c.Spec.Document()
		if err != nil {
			return fmt.Errorf("rewrite check %s: %w", c.ID, err)
		}
		password := row.Check.AuthPasswordEnc
		if before != nil && *c.Spec.HTTP.AuthPassword != *before {
			if password, err = s.sealer.Seal([]byte(*c.Spec.HTTP.AuthPassword)); err != nil {
				return fmt.Errorf("seal password of check %s: %w", c.ID, err)
			}
		}
		if err := q.SetCheckVarFields(ctx, dbsqlc.SetCheckVarFieldsParams{OrgID: c.OrgID, ID: c.ID, Spec: doc,
			AuthPasswordEnc: password, UpdatedAt: now}); err != nil {
			return fmt.Errorf("rewrite check %s: %w", c.ID, err)
		}
	}
	return nil
}

// DeleteEnvVar deletes a variable that no check references and audits it; a referenced one is a
// *ConflictError environment_variable_in_use (paused checks count).
func (s *Store) DeleteEnvVar(ctx context.Context, actor Actor, orgID, id uuid.UUID) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		// FOR UPDATE conflicts with the KEY SHARE lock a new reference takes, so no check can
		// start referencing the variable between the count and the delete.
		v, err := q.LockEnvVar(ctx, dbsqlc.LockEnvVarParams{OrgID: orgID, ID: id})
		if err != nil {
			return err
		}
		n, err := q.CountEnvVarRefs(ctx, dbsqlc.CountEnvVarRefsParams{OrgID: orgID, EnvVarID: id})
		if err != nil {
			return err
		}
		if n > 0 {
			return envVarInUse(v.Name, n)
		}
		if err := q.DeleteEnvVar(ctx, dbsqlc.DeleteEnvVarParams{OrgID: orgID, ID: id}); err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "23503" { // check_env_refs ON DELETE RESTRICT
				return envVarInUse(v.Name, 0)
			}
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{
			Action: "deleted", AuditableType: "EnvironmentVariable", AuditableID: id.String(), AuditableDisplayName: v.Name,
		})
	})
}

func envVarInUse(name string, checks int64) *ConflictError {
	msg := fmt.Sprintf("environment variable %s is referenced by saved checks; remove the references first", name)
	if checks > 0 {
		msg = fmt.Sprintf("environment variable %s is referenced by %d saved check(s); remove the references first", name, checks)
	}
	return &ConflictError{Type: "environment_variable_in_use", Code: 409, Message: msg}
}

// ResolvedVar is a variable's plaintext value for building a job.
type ResolvedVar struct {
	Value  string
	Secret bool // redact Value from stored results
}

// ResolveVars returns the values of the named variables in one scope: the project projectID, or
// the organization pool when it is nil (the scope of Unassigned checks). There is no fallback
// between scopes. Names without a variable are absent from the map; the caller decides.
func (s *Store) ResolveVars(ctx context.Context, orgID uuid.UUID, projectID *uuid.UUID, names []string) (map[string]ResolvedVar, error) {
	out := make(map[string]ResolvedVar, len(names))
	if len(names) == 0 {
		return out, nil
	}
	rows, err := s.q.ResolveEnvVars(ctx, dbsqlc.ResolveEnvVarsParams{OrgID: orgID, ProjectID: projectID, Names: names})
	if err != nil {
		return nil, translate(err)
	}
	for _, r := range rows {
		pt, err := s.sealer.Open(r.ValueEnc)
		if err != nil {
			return nil, fmt.Errorf("open value of environment variable %s: %w", r.Name, err)
		}
		out[r.Name] = ResolvedVar{Value: string(pt), Secret: r.Type == EnvVarSecret}
	}
	return out, nil
}

// uuidOrNil renders an optional id for audit metadata (null for the organization pool).
func uuidOrNil(id *uuid.UUID) any {
	if id == nil {
		return nil
	}
	return id.String()
}

// ChecksUsingEnvVar lists the checks whose saved configuration references a variable, so that
// a changed value or name reaches their jobs at once rather than at the next resync.
func (s *Store) ChecksUsingEnvVar(ctx context.Context, orgID, varID uuid.UUID) ([]uuid.UUID, error) {
	ids, err := s.q.ChecksUsingEnvVar(ctx, dbsqlc.ChecksUsingEnvVarParams{OrgID: orgID, EnvVarID: varID})
	return ids, translate(err)
}
