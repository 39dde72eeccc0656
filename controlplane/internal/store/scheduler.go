package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
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
	// Env is a browser script's process.env: the variables of the check's scope the script
	// reads (check.Spec.EnvRefs); the values of secret ones are in Redact too. A name without
	// a variable is left out.
	Env map[string]string
}

// SchedulableChecksPage returns up to limit active checks of every organization with ids
// greater than after (uuid.Nil for the first page), in id order, resolved: the scheduler reads
// every check page by page so that a reload of many checks never holds one long query, nor all
// rows at once.
func (s *Store) SchedulableChecksPage(ctx context.Context, after uuid.UUID, limit int) ([]SchedCheck, error) {
	rows, err := s.q.SchedulableChecksPage(ctx, dbsqlc.SchedulableChecksPageParams{After: after, PageLimit: int64(limit)})
	if err != nil {
		return nil, translate(err)
	}
	checks := make([]dbsqlc.Check, len(rows))
	for i, r := range rows {
		checks[i] = r.Check
	}
	return s.schedChecks(ctx, checks)
}

// SchedulableChecksByID returns those of ids that exist and are active, resolved. An id that
// is missing from the result is deleted or paused.
func (s *Store) SchedulableChecksByID(ctx context.Context, ids []uuid.UUID) ([]SchedCheck, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.q.SchedulableChecksByID(ctx, ids)
	if err != nil {
		return nil, translate(err)
	}
	checks := make([]dbsqlc.Check, len(rows))
	for i, r := range rows {
		checks[i] = r.Check
	}
	return s.schedChecks(ctx, checks)
}

func (s *Store) schedChecks(ctx context.Context, rows []dbsqlc.Check) ([]SchedCheck, error) {
	out := make([]SchedCheck, len(rows))
	for i, r := range rows {
		c, err := s.checkOfRow(r)
		if err != nil {
			return nil, err
		}
		out[i] = SchedCheck{Check: c, StateChangedAt: r.StateChangedAt}
	}
	if err := s.resolveSchedVars(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

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
		for _, name := range c.Spec.EnvRefs() {
			want[schedVarKey(c, name)] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	var p dbsqlc.VariablesInScopesParams
	for k := range want {
		p.OrgIds = append(p.OrgIds, k.org)
		p.ProjectIds = append(p.ProjectIds, k.project) // uuid.Nil: the organization pool
		p.Names = append(p.Names, k.name)
	}
	rows, err := s.q.VariablesInScopes(ctx, p)
	if err != nil {
		return translate(err)
	}
	vals := make(map[varKey]ResolvedVar, len(rows))
	for _, r := range rows {
		pt, err := s.sealer.Open(r.ValueEnc)
		if err != nil {
			return fmt.Errorf("open value of environment variable %s: %w", r.Name, err)
		}
		k := varKey{org: r.OrgID, name: r.Name}
		if r.ProjectID != nil {
			k.project = *r.ProjectID
		}
		vals[k] = ResolvedVar{Value: string(pt), Secret: r.Type == EnvVarSecret}
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

// resolveCheckVars rewrites the fields check.Spec.VarRefs names, fills Env with the variables
// the script reads, records the secret values it used in Redact and unknown references in
// MissingVars.
func resolveCheckVars(c *SchedCheck, vals map[varKey]ResolvedVar) {
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
	c.Spec.MapVarRefFields(func(v string) string { return check.ReplaceVarRefs(v, lookup) })
	for _, name := range c.Spec.EnvRefs() {
		v, ok := vals[schedVarKey(c, name)]
		if !ok {
			continue
		}
		if c.Env == nil {
			c.Env = map[string]string{}
		}
		c.Env[name] = v.Value
		if v.Secret && v.Value != "" && !slices.Contains(c.Redact, v.Value) {
			c.Redact = append(c.Redact, v.Value)
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
	p := dbsqlc.SetLastQueuedParams{
		OrgIds: make([]uuid.UUID, len(marks)), Ids: make([]uuid.UUID, len(marks)), Ats: make([]time.Time, len(marks))}
	for i, m := range marks {
		p.OrgIds[i], p.Ids[i], p.Ats[i] = m.OrgID, m.CheckID, m.At
	}
	return translate(s.q.SetLastQueued(ctx, p))
}
