package store

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/rungrid"
	"github.com/vantagehq/vantage/controlplane/internal/shard"
	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
	"github.com/vantagehq/vantage/pkg/check"
)

// The scheduler's queries are the one place where the store reads across organizations: the
// scheduler serves every tenant at once. They never return a row to a tenant; each row carries
// its org_id.

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

// SchedulableChecksPage returns up to limit active checks of every organization in the given
// shards (shard.Of) with ids greater than after (uuid.Nil for the first page), in id order,
// resolved: the scheduler reads its shards' checks page by page so that a reload of many checks
// never holds one long query, nor all rows at once.
func (s *Store) SchedulableChecksPage(ctx context.Context, shards []int, after uuid.UUID, limit int) ([]SchedCheck, error) {
	rows, err := s.q.SchedulableChecksPage(ctx, dbsqlc.SchedulableChecksPageParams{
		After: after, Shards: int32s(shards), PageLimit: int64(limit)})
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

// ShardProgress returns how far the runs of each of shards were handled (every run due at or
// before it was published or skipped); a shard never scheduled is absent.
func (s *Store) ShardProgress(ctx context.Context, shards []int) (map[int]time.Time, error) {
	rows, err := s.q.ShardProgress(ctx, int32s(shards))
	if err != nil {
		return nil, translate(err)
	}
	out := make(map[int]time.Time, len(rows))
	for _, r := range rows {
		out[int(r.Shard)] = r.HandledThrough
	}
	return out, nil
}

// SetShardProgress moves the progress of shards forward to through (never back).
func (s *Store) SetShardProgress(ctx context.Context, shards []int, through time.Time) error {
	return translate(s.q.SetShardProgress(ctx, dbsqlc.SetShardProgressParams{Shards: int32s(shards), HandledThrough: through}))
}

func int32s(ks []int) []int32 {
	out := make([]int32, len(ks))
	for i, k := range ks {
		out[i] = int32(k) //nolint:gosec // shard numbers are below shard.Count
	}
	return out
}

// progressTTL is how long the store reuses the shards' progress it read for deriving
// last_queued: one read per second at most, whatever the request rate.
const progressTTL = time.Second

// cachedProgress is the shards' progress as last read.
type cachedProgress struct {
	mu      sync.Mutex
	at      time.Time // when it was read (zero: never)
	through map[int]time.Time
}

// schedulerProgress returns the progress of every shard, read at most once per progressTTL;
// nil when none is recorded or it cannot be read now (last_queued then falls back to the
// column).
func (s *Store) schedulerProgress(ctx context.Context) map[int]time.Time {
	c := &s.progress
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && time.Since(c.at) < progressTTL {
		return c.through
	}
	rows, err := s.q.AllShardProgress(ctx)
	if err != nil || len(rows) == 0 {
		return c.through // none yet is read again next time: the first owners record it soon
	}
	through := make(map[int]time.Time, len(rows))
	for _, r := range rows {
		through[int(r.Shard)] = r.HandledThrough
	}
	c.at, c.through = time.Now(), through
	return c.through
}

// lastQueued is when a check's newest run was queued as far as the database knows: the newest
// due time of its regular schedule that the scheduler has handled (its shard's progress, not
// older than the check), or the last_queued column that versions before migration 0014 wrote
// per run when that is newer or no progress is recorded. Confirmation runs between the regular
// ones are not reflected; a paused check shows the column.
func lastQueued(id uuid.UUID, interval time.Duration, paused bool, createdAt time.Time, column *time.Time, progress map[int]time.Time) *time.Time {
	through, ok := progress[shard.Of(id)]
	if !ok || paused {
		return column
	}
	due, ok := rungrid.LastDue(id, interval, createdAt, through)
	if !ok || column != nil && column.After(due) {
		return column
	}
	return &due
}
