package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vantagehq/vantage/pkg/check"
)

// Environment variable types.
const (
	EnvVarConfig = "config" // readable back through the API
	EnvVarSecret = "secret" // write-only; redacted from stored results
)

// Environment variable limits (supplement §2.11).
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

const envVarColumns = `id, org_id, project_id, name, type, created_at, updated_at`

func scanEnvVar(row pgx.Row, sealed *[]byte) (EnvVar, error) {
	var v EnvVar
	dst := []any{&v.ID, &v.OrgID, &v.ProjectID, &v.Name, &v.Type, &v.CreatedAt, &v.UpdatedAt}
	if sealed != nil {
		dst = append(dst, sealed)
	}
	err := row.Scan(dst...)
	return v, err
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
	where := `org_id = $1 AND ($2 = '' OR strpos(lower(name), lower($2)) > 0)
		AND (NOT $3 OR project_id IS NOT DISTINCT FROM $4)`
	args := []any{orgID, f.Search, f.Scoped, f.ProjectID}
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM env_vars WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+envVarColumns+` FROM env_vars WHERE `+where+`
		ORDER BY created_at DESC, id DESC LIMIT $5 OFFSET $6`, append(args, limit, offset)...)
	if err != nil {
		return nil, 0, translate(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (EnvVar, error) { return scanEnvVar(r, nil) })
	if err != nil {
		return nil, 0, translate(err)
	}
	return out, total, nil
}

// GetEnvVar returns one variable, with its value when it is a config variable.
func (s *Store) GetEnvVar(ctx context.Context, orgID, id uuid.UUID) (EnvVar, error) {
	var sealed []byte
	v, err := scanEnvVar(s.pool.QueryRow(ctx, `SELECT `+envVarColumns+`, value_enc FROM env_vars
		WHERE org_id = $1 AND id = $2`, orgID, id), &sealed)
	if err != nil {
		return v, translate(err)
	}
	return s.withValue(v, sealed)
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
		// Serialize variable creation per organization so that the limit holds under
		// concurrency. NO KEY UPDATE does not block inserts that merely reference the
		// organization (those take KEY SHARE).
		if _, err := tx.Exec(ctx, `SELECT 1 FROM organizations WHERE id = $1 FOR NO KEY UPDATE`, orgID); err != nil {
			return err
		}
		if err := lockProjectForReference(ctx, tx, orgID, in.ProjectID); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM env_vars WHERE org_id = $1`, orgID).Scan(&n); err != nil {
			return err
		}
		if n >= MaxEnvVarsPerOrg {
			return &ConflictError{Type: "environment_variable_limit_reached", Code: 409,
				Message: fmt.Sprintf("the organization already has %d environment variables, the most it may have", MaxEnvVarsPerOrg)}
		}
		now := s.now()
		v, err = scanEnvVar(tx.QueryRow(ctx, `INSERT INTO env_vars (id, org_id, project_id, name, type, value_enc, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING `+envVarColumns,
			uuid.Must(uuid.NewV7()), orgID, in.ProjectID, in.Name, in.Type, sealed, now), nil)
		if err != nil {
			return nameConflict(err, in.Name)
		}
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
// references the variable — header values, auth_username and the sealed auth_password — in the
// same transaction, so no check is ever left referencing a name that does not exist.
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
		if p.Name != nil {
			// Lock the referencing checks before the variable: check writes lock the check and
			// then (binding references) the variables, so taking the same order here keeps a
			// rename and a concurrent check update from deadlocking. renameVarRefs locks again,
			// which also covers a check bound between this statement and the variable lock.
			if _, err := tx.Exec(ctx, `SELECT 1 FROM checks c JOIN check_env_refs r ON r.org_id = c.org_id AND r.check_id = c.id
				WHERE r.org_id = $1 AND r.env_var_id = $2 ORDER BY c.id FOR NO KEY UPDATE OF c`, orgID, id); err != nil {
				return fmt.Errorf("lock checks referencing the variable: %w", err)
			}
		}
		var current []byte
		old, err := scanEnvVar(tx.QueryRow(ctx, `SELECT `+envVarColumns+`, value_enc FROM env_vars
			WHERE org_id = $1 AND id = $2 FOR UPDATE`, orgID, id), &current)
		if err != nil {
			return err
		}
		name := old.Name
		if p.Name != nil {
			name = *p.Name
		}
		if sealed == nil {
			sealed = current
		}
		v, err = scanEnvVar(tx.QueryRow(ctx, `UPDATE env_vars SET name = $3, value_enc = $4, updated_at = $5
			WHERE org_id = $1 AND id = $2 RETURNING `+envVarColumns+`, value_enc`, orgID, id, name, sealed, s.now()), &sealed)
		if err != nil {
			return nameConflict(err, name)
		}
		meta := map[string]any{"value_changed": p.Value != nil}
		if name != old.Name {
			n, err := s.renameVarRefs(ctx, tx, orgID, id, old.Name, name)
			if err != nil {
				return err
			}
			meta["previous_name"] = old.Name
			meta["checks_rewritten"] = n
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

// renameVarRefs rewrites {{oldName}} into {{newName}} in every check bound to the variable and
// reports how many checks it rewrote.
func (s *Store) renameVarRefs(ctx context.Context, tx pgx.Tx, orgID, varID uuid.UUID, oldName, newName string) (int, error) {
	rows, err := tx.Query(ctx, `SELECT c.id, c.headers, c.auth_username, c.auth_password_enc
		FROM checks c JOIN check_env_refs r ON r.org_id = c.org_id AND r.check_id = c.id
		WHERE r.org_id = $1 AND r.env_var_id = $2
		ORDER BY c.id FOR NO KEY UPDATE OF c`, orgID, varID)
	if err != nil {
		return 0, fmt.Errorf("find checks referencing %s: %w", oldName, err)
	}
	type saved struct {
		id       uuid.UUID
		headers  []byte
		username *string
		password []byte
	}
	var checks []saved
	for rows.Next() {
		var c saved
		if err := rows.Scan(&c.id, &c.headers, &c.username, &c.password); err != nil {
			rows.Close()
			return 0, err
		}
		checks = append(checks, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	rewrite := func(s string) string {
		return check.ReplaceVarRefs(s, func(name string) (string, bool) {
			if name == oldName {
				return "{{" + newName + "}}", true
			}
			return "", false
		})
	}
	now := s.now()
	for _, c := range checks {
		headers, err := rewriteJSONStrings(c.headers, rewrite)
		if err != nil {
			return 0, fmt.Errorf("rewrite headers of check %s: %w", c.id, err)
		}
		if c.username != nil {
			u := rewrite(*c.username)
			c.username = &u
		}
		password := c.password
		if password != nil {
			pt, err := s.sealer.Open(password)
			if err != nil {
				return 0, fmt.Errorf("open password of check %s: %w", c.id, err)
			}
			if rewritten := rewrite(string(pt)); rewritten != string(pt) {
				if password, err = s.sealer.Seal([]byte(rewritten)); err != nil {
					return 0, fmt.Errorf("seal password of check %s: %w", c.id, err)
				}
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE checks SET headers = $3, auth_username = $4, auth_password_enc = $5, updated_at = $6
			WHERE org_id = $1 AND id = $2`, orgID, c.id, headers, c.username, password, now); err != nil {
			return 0, fmt.Errorf("rewrite check %s: %w", c.id, err)
		}
	}
	return len(checks), nil
}

// rewriteJSONStrings applies fn to every string value (not object keys) of a JSON document;
// nil stays nil. It does not assume one layout of the saved headers.
func rewriteJSONStrings(doc []byte, fn func(string) string) ([]byte, error) {
	if doc == nil {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var walk func(any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case string:
			return fn(t)
		case map[string]any:
			for k, e := range t {
				t[k] = walk(e)
			}
		case []any:
			for i, e := range t {
				t[i] = walk(e)
			}
		}
		return x
	}
	return json.Marshal(walk(v))
}

// DeleteEnvVar deletes a variable that no check references and audits it; a referenced one is a
// *ConflictError environment_variable_in_use (paused checks count).
func (s *Store) DeleteEnvVar(ctx context.Context, actor Actor, orgID, id uuid.UUID) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		// FOR UPDATE conflicts with the KEY SHARE lock a new reference takes, so no check can
		// start referencing the variable between the count and the delete.
		var name string
		if err := tx.QueryRow(ctx, `SELECT name FROM env_vars WHERE org_id = $1 AND id = $2 FOR UPDATE`, orgID, id).Scan(&name); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM check_env_refs WHERE org_id = $1 AND env_var_id = $2`, orgID, id).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return envVarInUse(name, n)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM env_vars WHERE org_id = $1 AND id = $2`, orgID, id); err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "23503" { // check_env_refs ON DELETE RESTRICT
				return envVarInUse(name, 0)
			}
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{
			Action: "deleted", AuditableType: "EnvironmentVariable", AuditableID: id.String(), AuditableDisplayName: name,
		})
	})
}

func envVarInUse(name string, checks int) *ConflictError {
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
	rows, err := s.pool.Query(ctx, `SELECT name, type, value_enc FROM env_vars
		WHERE org_id = $1 AND project_id IS NOT DISTINCT FROM $2 AND name = ANY($3)`, orgID, projectID, names)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, typ string
		var sealed []byte
		if err := rows.Scan(&name, &typ, &sealed); err != nil {
			return nil, translate(err)
		}
		pt, err := s.sealer.Open(sealed)
		if err != nil {
			return nil, fmt.Errorf("open value of environment variable %s: %w", name, err)
		}
		out[name] = ResolvedVar{Value: string(pt), Secret: typ == EnvVarSecret}
	}
	if err := rows.Err(); err != nil {
		return nil, translate(err)
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
	rows, err := s.pool.Query(ctx, `SELECT check_id FROM check_env_refs WHERE org_id = $1 AND env_var_id = $2`, orgID, varID)
	if err != nil {
		return nil, translate(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	return ids, translate(err)
}
