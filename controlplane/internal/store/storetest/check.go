package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
)

// CheckOpts are the fields of a test check that differ from the defaults; a zero field keeps
// its default. The defaults are check.Defaults of the kind with a target of the kind's own
// (https://example.com/ for uptime and browser checks, example.com for DNS and TCP, port 443), the name
// "check", Unassigned, in a new organization, not paused, not muted, PENDING.
type CheckOpts struct {
	OrgID     uuid.UUID  // default: a new organization
	ProjectID *uuid.UUID // default: Unassigned
	Kind      check.Kind // default: UPTIME
	Name      string     // default: "check"
	// Spec edits the configuration once the defaults are set, for the fields not listed here.
	Spec func(*check.Spec)

	Paused bool
	Muted  bool
	// State is the status machine's state (PENDING, UP, VERIFYING, DOWN or RECOVERING);
	// default: PENDING, as a check is created.
	State string
	// StateChangedAt is when the check entered State; default: the database's now() when State
	// is set, NULL otherwise (as created).
	StateChangedAt time.Time
}

// Check creates a check as the API does: the spec validated by the API's rules (but for a
// test_interval below the minimum), then store.CreateCheck, which binds its {{NAME}}
// references and audits it; it pauses or mutes it as the API does (store.UpdateCheck) and
// returns it as stored. A configuration the API would refuse fails the test: a test that
// needs a row no API call can make writes that row itself, and says why.
func Check(t testing.TB, st *store.Store, opts *CheckOpts) store.Check {
	t.Helper()
	if opts == nil {
		opts = &CheckOpts{}
	}
	ctx := context.Background()
	org := opts.OrgID
	if org == uuid.Nil {
		o, err := st.CreateOrganization(ctx, "storetest", "paid")
		if err != nil {
			t.Fatalf("storetest: create organization: %v", err)
		}
		org = o.ID
	}
	sp := CheckSpec(opts.Kind)
	if opts.Name != "" {
		sp.Name = opts.Name
	}
	if opts.Spec != nil {
		opts.Spec(&sp)
	}
	// Intervals below the API's minimum are allowed: the scheduler's tests run checks every
	// second. Every other field is held to the API's rules.
	judged := sp
	judged.TestInterval = max(sp.TestInterval, check.MinTestInterval)
	if errs := judged.Validate(); len(errs) > 0 {
		t.Fatalf("storetest: the API would refuse this check: %v", errs)
	}
	c, err := st.CreateCheck(ctx, store.SystemActor, org, opts.ProjectID, sp)
	if err != nil {
		t.Fatalf("storetest: create check: %v", err)
	}
	if opts.Paused || opts.Muted {
		c, err = st.UpdateCheck(ctx, store.SystemActor, org, c.ID, "", func(c *store.Check) error {
			c.Paused, c.Muted = opts.Paused, opts.Muted
			return nil
		})
		if err != nil {
			t.Fatalf("storetest: pause or mute check: %v", err)
		}
	}
	if opts.State != "" {
		setState(t, st, c, opts.State, opts.StateChangedAt)
		c.State = opts.State
	}
	return c
}

// CheckSpec is the configuration Check starts from: check.Defaults(k) (UPTIME when k is empty)
// named "check", with a target. Tests that create checks in ways Check does not (concurrently,
// expecting an error) start from it too.
func CheckSpec(k check.Kind) check.Spec {
	if k == "" {
		k = check.Uptime
	}
	sp := check.Defaults(k)
	sp.Name = "check"
	switch {
	case sp.HTTP != nil:
		u := "https://example.com/"
		sp.HTTP.URL = &u
	case sp.DNS != nil:
		sp.DNS.Domain, sp.DNS.RecordType = "example.com", "A"
	case sp.TCP != nil:
		sp.TCP.Hostname, sp.TCP.Port = "example.com", 443
	}
	return sp
}

// setState writes the status machine's columns of one check, as the evaluator's
// UpdateCheckStates does at the end of a judged run: no API call sets them, and judging a run
// to reach a state would make every test that needs a DOWN check depend on the evaluator.
func setState(t testing.TB, st *store.Store, c store.Check, state string, at time.Time) {
	t.Helper()
	var changed any
	if !at.IsZero() {
		changed = at
	}
	if _, err := st.Pool().Exec(context.Background(), `UPDATE checks SET state = $3,
			state_changed_at = coalesce($4::timestamptz, now()) WHERE org_id = $1 AND id = $2`,
		c.OrgID, c.ID, state, changed); err != nil {
		t.Fatalf("storetest: set state %s: %v", state, err)
	}
}
