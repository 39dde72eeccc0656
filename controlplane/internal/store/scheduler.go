package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/pkg/check"
)

// The scheduler's queries are the one place where the store reads across organizations: the
// scheduler serves every tenant at once. They never return a row to a tenant; each row carries
// its org_id, and SetLastQueued matches on (org_id, id).

// SchedCheck is an active (not paused) check as the scheduler needs it to build jobs: the
// stored check with its Basic-auth password opened and its {{NAME}} references resolved in
// the check's variable scope.
type SchedCheck struct {
	// Check is the stored check. In Spec, the fields that take references (uptime header
	// values, the Basic-auth user-id and password: check.Spec.VarRefs) hold resolved values.
	Check
	// StateChangedAt is when the status machine last changed State (nil before its first
	// change); the scheduler anchors confirmation runs on it.
	StateChangedAt *time.Time
	// Redact lists the values of the secret variables the resolved fields use, once each;
	// agents redact them from everything they report.
	Redact []string
	// MissingVars names references with no variable in the check's scope (the API refuses to
	// save such a check, so this only happens to rows written around it); their {{NAME}} text is
	// left in place and the scheduler must not run the check.
	MissingVars []string
}

// SchedulableChecksPage returns up to limit active checks of every organization with ids
// greater than after (uuid.Nil for the first page), in id order, resolved: the scheduler reads
// every check page by page so that a reload of many checks never holds one long query, nor all
// rows at once.
func (s *Store) SchedulableChecksPage(ctx context.Context, after uuid.UUID, limit int) ([]SchedCheck, error) {
	return s.schedChecks(ctx, ` AND id > $1 ORDER BY id LIMIT $2`, after, limit)
}

// SchedulableChecksByID returns those of ids that exist and are active, resolved. An id that
// is missing from the result is deleted or paused.
func (s *Store) SchedulableChecksByID(ctx context.Context, ids []uuid.UUID) ([]SchedCheck, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return s.schedChecks(ctx, ` AND id = ANY($1)`, ids)
}

func (s *Store) schedChecks(ctx context.Context, cond string, args ...any) ([]SchedCheck, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+checkColumns(true)+`, state_changed_at FROM checks WHERE NOT paused`+cond, args...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []SchedCheck
	for rows.Next() {
		var sc SchedCheck
		// scanCheck owns the mapping of checkColumns; state_changed_at rides along after them.
		c, err := s.scanCheck(extraScan{row: rows, extra: []any{&sc.StateChangedAt}})
		if err != nil {
			return nil, translate(err)
		}
		sc.Check = c
		out = append(out, sc)
	}
	if err := rows.Err(); err != nil {
		return nil, translate(err)
	}
	if err := s.resolveSchedVars(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// extraScan appends destinations for columns selected after the ones a scan helper knows.
type extraScan struct {
	row   pgx.Row
	extra []any
}

func (e extraScan) Scan(dst ...any) error { return e.row.Scan(append(dst, e.extra...)...) }

// varKey is one variable name in one scope: a project, or the organization pool (project
// uuid.Nil).
type varKey struct {
	org, project uuid.UUID
	name         string
}

// resolveSchedVars fills in the {{NAME}} references of every check with one query for all of
// them, opening each variable once.
func (s *Store) resolveSchedVars(ctx context.Context, checks []SchedCheck) error {
	want := map[varKey]bool{}
	for i := range checks {
		c := &checks[i]
		for _, r := range c.Spec.VarRefs() {
			want[schedVarKey(c, r.Name)] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	orgs := make([]uuid.UUID, 0, len(want))
	projects := make([]*uuid.UUID, 0, len(want))
	names := make([]string, 0, len(want))
	for k := range want {
		orgs = append(orgs, k.org)
		names = append(names, k.name)
		if k.project == uuid.Nil {
			projects = append(projects, nil)
		} else {
			p := k.project
			projects = append(projects, &p)
		}
	}
	rows, err := s.pool.Query(ctx, `SELECT e.org_id, e.project_id, e.name, e.type, e.value_enc
		FROM env_vars e
		JOIN unnest($1::uuid[], $2::uuid[], $3::text[]) AS w(org_id, project_id, name)
		  ON e.org_id = w.org_id AND e.name = w.name AND e.project_id IS NOT DISTINCT FROM w.project_id`,
		orgs, projects, names)
	if err != nil {
		return translate(err)
	}
	vals := make(map[varKey]ResolvedVar, len(want))
	for rows.Next() {
		var org uuid.UUID
		var project *uuid.UUID
		var name, typ string
		var sealed []byte
		if err := rows.Scan(&org, &project, &name, &typ, &sealed); err != nil {
			rows.Close()
			return translate(err)
		}
		pt, err := s.sealer.Open(sealed)
		if err != nil {
			rows.Close()
			return fmt.Errorf("open value of environment variable %s: %w", name, err)
		}
		k := varKey{org: org, name: name}
		if project != nil {
			k.project = *project
		}
		vals[k] = ResolvedVar{Value: string(pt), Secret: typ == EnvVarSecret}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return translate(err)
	}
	for i := range checks {
		resolveCheckVars(&checks[i], vals)
	}
	return nil
}

func schedVarKey(c *SchedCheck, name string) varKey {
	k := varKey{org: c.OrgID, name: name}
	if c.ProjectID != nil {
		k.project = *c.ProjectID
	}
	return k
}

// resolveCheckVars rewrites the fields check.Spec.VarRefs names, records the secret values it
// used in Redact and unknown names in MissingVars.
func resolveCheckVars(c *SchedCheck, vals map[varKey]ResolvedVar) {
	h := c.Spec.HTTP
	if h == nil || len(c.Spec.VarRefs()) == 0 {
		return
	}
	lookup := func(name string) (string, bool) {
		v, ok := vals[schedVarKey(c, name)]
		if !ok {
			if !slices.Contains(c.MissingVars, name) {
				c.MissingVars = append(c.MissingVars, name)
			}
			return "", false
		}
		if v.Secret && v.Value != "" && !slices.Contains(c.Redact, v.Value) {
			c.Redact = append(c.Redact, v.Value)
		}
		return v.Value, true
	}
	if c.Spec.Kind == check.Uptime && len(h.Headers) > 0 {
		resolved := make(map[string]string, len(h.Headers))
		for name, v := range h.Headers {
			resolved[name] = check.ReplaceVarRefs(v, lookup)
		}
		h.Headers = resolved
	}
	for _, f := range []**string{&h.AuthUsername, &h.AuthPassword} {
		if *f != nil {
			v := check.ReplaceVarRefs(**f, lookup)
			*f = &v
		}
	}
}

// QueuedMark records that a check's job was queued at At.
type QueuedMark struct {
	OrgID, CheckID uuid.UUID
	At             time.Time
}

// SetLastQueued moves last_queued of each marked check forward to its mark (never back), in
// one statement. Rows are locked in id order, the order the evaluator locks checks in, so the
// two never deadlock. A mark of a deleted check is ignored.
func (s *Store) SetLastQueued(ctx context.Context, marks []QueuedMark) error {
	if len(marks) == 0 {
		return nil
	}
	orgs := make([]uuid.UUID, len(marks))
	ids := make([]uuid.UUID, len(marks))
	ats := make([]time.Time, len(marks))
	for i, m := range marks {
		orgs[i], ids[i], ats[i] = m.OrgID, m.CheckID, m.At
	}
	_, err := s.pool.Exec(ctx, `WITH m AS (
			SELECT org_id, id, max(at) AS at
			FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[]) AS u(org_id, id, at)
			GROUP BY org_id, id
		), locked AS MATERIALIZED (
			SELECT c.id FROM checks c JOIN m ON c.org_id = m.org_id AND c.id = m.id
			WHERE c.last_queued IS NULL OR c.last_queued < m.at
			ORDER BY c.id
			FOR NO KEY UPDATE OF c
		)
		UPDATE checks c SET last_queued = m.at
		FROM m, locked
		WHERE c.id = locked.id AND c.org_id = m.org_id AND c.id = m.id
		  AND (c.last_queued IS NULL OR c.last_queued < m.at)`, orgs, ids, ats)
	return translate(err)
}
