package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/rungrid"
	"github.com/vantagehq/vantage/controlplane/internal/shard"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	"github.com/vantagehq/vantage/pkg/check"
)

// schedSetup is a store on a fresh database, its keyring, and an organization.
func schedSetup(t *testing.T) (*store.Store, func(string) []byte, uuid.UUID) {
	t.Helper()
	kr := storetest.NewKeyring(t)
	st, err := store.Open(context.Background(), storetest.NewDatabase(t), kr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	seal := func(s string) []byte {
		b, err := kr.Seal([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	org := uuid.Must(uuid.NewV7())
	schedExec(t, st, `INSERT INTO organizations (id, name) VALUES ($1, 'o')`, org)
	return st, seal, org
}

func schedExec(t *testing.T, st *store.Store, sql string, args ...any) {
	t.Helper()
	if _, err := st.Pool().Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// schedInsertCheck writes a check row with SQL, not storetest.Check: the store refuses some of
// these rows (a reference to a variable its scope lacks), which the scheduler must still serve.
func schedInsertCheck(t *testing.T, st *store.Store, org uuid.UUID, project *uuid.UUID, kind string, paused bool,
	headers string, user *string, pass []byte) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	var h any
	if headers != "" {
		h = headers
	}
	schedExec(t, st, `INSERT INTO checks (id, org_id, project_id, kind, name, paused, test_interval, timeout_ms,
			test_regions, alert_priority, confirmation_period_seconds, recovery_period_seconds, spec,
			auth_password_enc, state, state_changed_at)
		VALUES ($1, $2, $3, $4, 'c', $5, 30, 2000, '{cloud:us-east-1}', 'LOW', 60, 180,
			jsonb_strip_nulls(jsonb_build_object('url', 'https://x.test', 'method', 'GET', 'headers', $6::jsonb, 'auth_username', $7::text)),
			$8, 'VERIFYING', '2026-01-02T03:04:05Z')`,
		id, org, project, kind, paused, h, user, pass)
	return id
}

func TestSchedulableChecksResolveVariablesInTheCheckScope(t *testing.T) {
	t.Parallel()
	st, seal, org := schedSetup(t)
	ctx := context.Background()
	project := uuid.Must(uuid.NewV7())
	schedExec(t, st, `INSERT INTO projects (id, org_id, name) VALUES ($1, $2, 'p')`, project, org)
	addVar := func(project *uuid.UUID, name, typ, value string) {
		schedExec(t, st, `INSERT INTO env_vars (id, org_id, project_id, name, type, value_enc) VALUES ($1, $2, $3, $4, $5, $6)`,
			uuid.Must(uuid.NewV7()), org, project, name, typ, seal(value))
	}
	addVar(&project, "TOKEN", store.EnvVarSecret, "project-secret")
	addVar(&project, "USER", store.EnvVarConfig, "bob")
	addVar(nil, "TOKEN", store.EnvVarSecret, "pool-secret")
	addVar(nil, "EMPTY", store.EnvVarSecret, "")

	user := "{{USER}}"
	inProject := schedInsertCheck(t, st, org, &project, "UPTIME", false,
		`{"Authorization": "Bearer {{TOKEN}}", "X-Again": "{{TOKEN}}"}`, &user, seal("{{TOKEN}}!"))
	inPool := schedInsertCheck(t, st, org, nil, "UPTIME", false, `{"Authorization": "{{TOKEN}}{{EMPTY}}"}`, nil, nil)
	missing := schedInsertCheck(t, st, org, nil, "UPTIME", false, `{"A": "{{USER}}"}`, nil, nil) // USER is only in the project
	browser := schedInsertCheck(t, st, org, &project, "BROWSER", false, `{"A": "{{TOKEN}}"}`, nil, seal("{{TOKEN}}"))
	paused := schedInsertCheck(t, st, org, nil, "UPTIME", true, "", nil, nil)

	var all []store.SchedCheck
	for after := uuid.Nil; ; {
		page, err := st.SchedulableChecksPage(ctx, allShards(), after, 3)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		if len(page) < 3 {
			break
		}
		after = page[len(page)-1].ID
	}
	byID := map[uuid.UUID]store.SchedCheck{}
	for _, c := range all {
		byID[c.ID] = c
	}
	if len(all) != 4 {
		t.Fatalf("got %d checks, want the 4 active ones", len(all))
	}
	if _, ok := byID[paused]; ok {
		t.Error("paused check is schedulable")
	}

	c := byID[inProject]
	h := c.Spec.HTTP
	if h.Headers["Authorization"] != "Bearer project-secret" || h.Headers["X-Again"] != "project-secret" ||
		*h.AuthUsername != "bob" || *h.AuthPassword != "project-secret!" {
		t.Errorf("project check resolved to headers %v, user %q, password %q", h.Headers, *h.AuthUsername, *h.AuthPassword)
	}
	if !slices.Equal(c.Redact, []string{"project-secret"}) || len(c.MissingVars) != 0 {
		t.Errorf("project check redact %q missing %v", c.Redact, c.MissingVars)
	}
	if c.State != "VERIFYING" || c.StateChangedAt == nil || !c.StateChangedAt.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("state %s changed at %v", c.State, c.StateChangedAt)
	}
	if c.Spec.TestInterval != 30 || *c.Spec.TimeoutMs != 2000 || c.Spec.Kind != check.Uptime {
		t.Errorf("spec interval %d timeout %v kind %s", c.Spec.TestInterval, c.Spec.TimeoutMs, c.Spec.Kind)
	}

	if c := byID[inPool]; c.Spec.HTTP.Headers["Authorization"] != "pool-secret" || !slices.Equal(c.Redact, []string{"pool-secret"}) {
		t.Errorf("pool check: headers %v redact %q (empty secrets are not redacted)", c.Spec.HTTP.Headers, c.Redact)
	}
	if c := byID[missing]; !slices.Equal(c.MissingVars, []string{"USER"}) || c.Spec.HTTP.Headers["A"] != "{{USER}}" {
		t.Errorf("check with an unknown reference: missing %v headers %v", c.MissingVars, c.Spec.HTTP.Headers)
	}
	// Browser headers take no references; the Basic-auth password does.
	if c := byID[browser]; c.Spec.HTTP.Headers["A"] != "{{TOKEN}}" || *c.Spec.HTTP.AuthPassword != "project-secret" {
		t.Errorf("browser check: headers %v password %q", c.Spec.HTTP.Headers, *c.Spec.HTTP.AuthPassword)
	}

	some, err := st.SchedulableChecksByID(ctx, []uuid.UUID{inProject, paused, uuid.Must(uuid.NewV7())})
	if err != nil {
		t.Fatal(err)
	}
	if len(some) != 1 || some[0].ID != inProject || some[0].Spec.HTTP.Headers["Authorization"] != "Bearer project-secret" {
		t.Errorf("by id: got %d checks, want only the active one, resolved", len(some))
	}
}

func allShards() []int {
	out := make([]int, shard.Count)
	for k := range out {
		out[k] = k
	}
	return out
}

// A page of some shards holds exactly the checks whose shard.Of is among them: the SQL
// computes the same hash as Go.
func TestSchedulableChecksOfShards(t *testing.T) {
	t.Parallel()
	st, _, org := schedSetup(t)
	ctx := context.Background()
	byShard := map[int][]uuid.UUID{}
	for range 40 {
		id := schedInsertCheck(t, st, org, nil, "UPTIME", false, "", nil, nil)
		byShard[shard.Of(id)] = append(byShard[shard.Of(id)], id)
	}
	var some []int
	want := map[uuid.UUID]bool{}
	for k, ids := range byShard {
		if len(some) < len(byShard)/2 {
			some = append(some, k)
			for _, id := range ids {
				want[id] = true
			}
		}
	}
	page, err := st.SchedulableChecksPage(ctx, some, uuid.Nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != len(want) {
		t.Fatalf("%d checks in shards %v, want %d", len(page), some, len(want))
	}
	for _, c := range page {
		if !want[c.ID] {
			t.Errorf("check %s of shard %d loaded for shards %v", c.ID, shard.Of(c.ID), some)
		}
	}
}

// The shards' progress only moves forward, and last_queued of a check is derived from its
// shard's progress and the check's schedule — without a write per run.
func TestShardProgressDerivesLastQueued(t *testing.T) {
	t.Parallel()
	st, _, org := schedSetup(t)
	ctx := context.Background()
	a := schedInsertCheck(t, st, org, nil, "UPTIME", false, "", nil, nil)
	k := shard.Of(a)
	before, err := st.GetCheck(ctx, org, a, false)
	if err != nil {
		t.Fatal(err)
	}
	if before.LastQueued != nil {
		t.Fatalf("last_queued %v before any progress, want null", before.LastQueued)
	}
	t2 := before.CreatedAt.Add(time.Hour)
	other := (k + 1) % shard.Count
	if err := st.SetShardProgress(ctx, []int{other}, t2.Add(time.Hour)); err != nil { // another shard, further on
		t.Fatal(err)
	}
	if err := st.SetShardProgress(ctx, []int{k, other}, t2); err != nil {
		t.Fatal(err)
	}
	if err := st.SetShardProgress(ctx, []int{k}, t2.Add(-time.Minute)); err != nil { // a former owner, late
		t.Fatal(err)
	}
	got, err := st.ShardProgress(ctx, []int{k, other, (k + 2) % shard.Count})
	if err != nil || len(got) != 2 || !got[k].Equal(t2) || !got[other].Equal(t2.Add(time.Hour)) {
		t.Fatalf("progress %v (%v), want %d at %v and %d at %v, and no third", got, err, k, t2, other, t2.Add(time.Hour))
	}
	c, err := st.GetCheck(ctx, org, a, false)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := rungrid.LastDue(a, time.Duration(c.Spec.TestInterval)*time.Second, c.CreatedAt, t2)
	if c.LastQueued == nil || !c.LastQueued.Equal(want) || want.After(t2) || t2.Sub(want) >= time.Duration(c.Spec.TestInterval)*time.Second {
		t.Fatalf("last_queued %v, want the newest due time %v at or before its shard's progress %v", c.LastQueued, want, t2)
	}
	list, _, err := st.ListChecks(ctx, org, store.CheckFilter{}, 10, 0)
	if err != nil || len(list) != 1 || list[0].LastQueued == nil || !list[0].LastQueued.Equal(want) {
		t.Fatalf("listed last_queued %+v (%v), want %v", list, err, want)
	}
}

// A session sees which locks of a class it holds and which others hold, and counts the
// sessions of a name.
func TestLeaseSessionSeesTheLocksOfAClass(t *testing.T) {
	t.Parallel()
	st, _, _ := schedSetup(t)
	ctx := context.Background()
	const class = 0x7465_7374
	key := func(low int64) int64 { return class<<32 | low }
	a, err := st.OpenLeaseSession(ctx, "test-lease", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	b, err := st.OpenLeaseSession(ctx, "test-lease", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	for _, low := range []int64{7, 3} {
		if ok, err := a.TryLock(ctx, key(low)); !ok || err != nil {
			t.Fatalf("a lock %d: %v %v", low, ok, err)
		}
	}
	if ok, err := b.TryLock(ctx, key(5)); !ok || err != nil {
		t.Fatalf("b lock: %v %v", ok, err)
	}
	if ok, err := b.TryLock(ctx, 99); !ok || err != nil { // another class
		t.Fatalf("b lock: %v %v", ok, err)
	}
	mine, others, err := a.ClassLocks(ctx, class)
	if err != nil || !slices.Equal(mine, []int64{3, 7}) || !slices.Equal(others, []int64{5}) {
		t.Fatalf("a sees mine %v others %v (%v), want [3 7] and [5]", mine, others, err)
	}
	if err := a.Unlock(ctx, key(7)); err != nil {
		t.Fatal(err)
	}
	if mine, _, err := a.ClassLocks(ctx, class); err != nil || !slices.Equal(mine, []int64{3}) {
		t.Fatalf("after unlocking 7, a holds %v (%v)", mine, err)
	}
	if n, err := a.CountSessions(ctx, "test-lease"); n != 2 || err != nil {
		t.Fatalf("sessions named test-lease: %d (%v), want 2", n, err)
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	checkSessions := func() int {
		n, err := a.CountSessions(ctx, "test-lease")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	deadline := time.Now().Add(5 * time.Second)
	for checkSessions() != 1 { // the server ends the backend just after the client leaves
		if time.Now().After(deadline) {
			t.Fatalf("sessions named test-lease after b closed: %d, want 1", checkSessions())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestLeaseSessionIsReleasedWhenItsHolderGoesSilent(t *testing.T) {
	t.Parallel()
	st, _, _ := schedSetup(t)
	ctx := context.Background()
	const key = 42
	a, err := st.OpenLeaseSession(ctx, "test-a", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	b, err := st.OpenLeaseSession(ctx, "test-b", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	if ok, err := a.TryLock(ctx, key); !ok || err != nil {
		t.Fatalf("a: %v %v", ok, err)
	}
	if mine, _, err := a.ClassLocks(ctx, 0); !slices.Equal(mine, []int64{key}) || err != nil {
		t.Fatalf("a holds: %v %v", mine, err)
	}
	if ok, err := b.TryLock(ctx, key); ok || err != nil {
		t.Fatalf("b took a held lock: %v %v", ok, err)
	}
	time.Sleep(2500 * time.Millisecond) // a says nothing for longer than its idle timeout
	if ok, err := b.TryLock(ctx, key); !ok || err != nil {
		t.Fatalf("b could not take the lease of a silent holder: %v %v", ok, err)
	}
	if _, _, err := a.ClassLocks(ctx, 0); err == nil {
		t.Error("the silent holder's session still answers")
	}
}

// The list's total comes from the per-organization counter the triggers keep: inserts and
// deletes of checks, one statement or many rows at a time, in several organizations.
func TestCheckCountsFollowChecks(t *testing.T) {
	t.Parallel()
	st, _, org := schedSetup(t)
	ctx := context.Background()
	other, err := st.CreateOrganization(ctx, "other", "paid")
	if err != nil {
		t.Fatal(err)
	}
	total := func(o uuid.UUID) int64 {
		t.Helper()
		_, n, err := st.ListChecks(ctx, o, store.CheckFilter{}, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := total(org); n != 0 {
		t.Fatalf("total %d before any check", n)
	}
	a := schedInsertCheck(t, st, org, nil, "UPTIME", false, "", nil, nil)
	schedInsertCheck(t, st, org, nil, "UPTIME", false, "", nil, nil)
	schedInsertCheck(t, st, other.ID, nil, "UPTIME", false, "", nil, nil)
	if _, err := st.Pool().Exec(ctx, `DELETE FROM checks WHERE id = $1`, a); err != nil {
		t.Fatal(err)
	}
	if n, m := total(org), total(other.ID); n != 1 || m != 1 {
		t.Fatalf("totals %d and %d, want 1 and 1", n, m)
	}
	var counted, actual int64
	if err := st.Pool().QueryRow(ctx, `SELECT (SELECT sum(checks) FROM org_check_counts), (SELECT count(*) FROM checks)`).Scan(&counted, &actual); err != nil || counted != actual {
		t.Fatalf("counters sum to %d, %d checks (%v)", counted, actual, err)
	}
}
