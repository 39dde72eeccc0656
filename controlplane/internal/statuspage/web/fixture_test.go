package web

import (
	"context"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha512"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/ratelimit"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	chk "github.com/vantagehq/vantage/pkg/check"
)

// testKey signs cookies in tests.
var testKey = []byte("0123456789abcdef0123456789abcdef")

// fixture is a status page seeded through the status pages' domain (statuspage.Service), with check
// history inserted as SQL.
type fixture struct {
	t      testing.TB
	st     *store.Store
	sp     *statuspage.Service
	org    uuid.UUID
	page   uuid.UUID
	sub    string
	groups []uuid.UUID
	comps  map[string]uuid.UUID
	checks []uuid.UUID
}

func newFixture(t testing.TB, st *store.Store, in store.StatusPageInput) *fixture {
	t.Helper()
	ctx := context.Background()
	org, err := st.CreateOrganization(ctx, "Org "+in.Subdomain, "paid")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := statuspage.New(statuspage.Config{}, statuspage.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	p, err := sp.CreateStatusPage(ctx, store.SystemActor, org.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, st: st, sp: sp, org: org.ID, page: uuid.MustParse(p.ID), sub: in.Subdomain, comps: map[string]uuid.UUID{}}
}

func (f *fixture) exec(sql string, args ...any) {
	f.t.Helper()
	if _, err := f.st.Pool().Exec(context.Background(), sql, args...); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
}

func (f *fixture) group(name, description string) uuid.UUID {
	f.t.Helper()
	g, err := f.sp.CreateGroup(context.Background(), store.SystemActor, f.org, f.page, name, &description)
	if err != nil {
		f.t.Fatal(err)
	}
	id := uuid.MustParse(g.ID)
	f.groups = append(f.groups, id)
	return id
}

// component creates a component in group (uuid.Nil: ungrouped), linked to a new check when
// withCheck, and returns the check's id (or uuid.Nil).
func (f *fixture) component(name string, group uuid.UUID, withCheck bool) uuid.UUID {
	f.t.Helper()
	ctx := context.Background()
	c, err := f.sp.CreateComponent(ctx, store.SystemActor, f.org, f.page, store.NewComponent{Name: name,
		Status: statuspage.Operational, DisplayUptime: true, DisplayMetrics: true})
	if err != nil {
		f.t.Fatal(err)
	}
	id := uuid.MustParse(c.ID)
	f.comps[name] = id
	var patch statuspage.ComponentPatch
	if group != uuid.Nil {
		patch.GroupSet, patch.GroupID = true, &group
	}
	check := uuid.Nil
	if withCheck {
		check = storetest.Check(f.t, f.st, &storetest.CheckOpts{OrgID: f.org, Name: name + " check", Spec: func(sp *chk.Spec) {
			sp.TimeoutMs, sp.TestRegions, sp.ReminderAlertIntervalMinutes = new(5000), []string{"cloud:us-east-1"}, new(-1)
			sp.ConfirmationPeriodSeconds, sp.RecoveryPeriodSeconds = 0, 0
		}}).ID
		f.checks = append(f.checks, check)
		patch.CheckIDs = &[]uuid.UUID{check}
	}
	if patch.GroupSet || patch.CheckIDs != nil {
		if _, err := f.sp.UpdateComponent(ctx, store.SystemActor, f.org, f.page, id, patch); err != nil {
			f.t.Fatal(err)
		}
	}
	return check
}

// history inserts days of daily counters for check ending today (UTC): 1440 runs a day, with
// failed(i) failures on the i-th day back (0 = today).
func (f *fixture) history(check uuid.UUID, days int, failed func(daysBack int) int) {
	f.t.Helper()
	today := time.Now().UTC().Truncate(24 * time.Hour)
	for i := range days {
		f.exec(`INSERT INTO check_daily_stats (org_id, check_id, day, runs, failed_runs) VALUES ($1, $2, $3, 1440, $4)`,
			f.org, check, today.AddDate(0, 0, -i).Format(time.DateOnly), failed(i))
	}
}

// handler serves the fixture's pages with cfg (the test cookie key filled in).
func (f *fixture) handler(cfg Config) http.Handler {
	return f.handlerWith(cfg, Deps{})
}

// handlerWith is handler with deps; the fixture's pages and a test logger are filled in, and a
// rate limiter of the handler's own on the fixture's database (as each replica has) unless
// deps has one.
func (f *fixture) handlerWith(cfg Config, deps Deps) http.Handler {
	f.t.Helper()
	cfg.CookieKey = testKey
	deps.Store, deps.Logger = f.sp, slog.New(slog.NewTextHandler(testWriter{f.t}, nil))
	if deps.Limiter == nil {
		lim, err := ratelimit.New(ratelimit.Config{}, ratelimit.Deps{Store: f.st})
		if err != nil {
			f.t.Fatal(err)
		}
		deps.Limiter = lim
	}
	h, err := NewHandler(cfg, deps)
	if err != nil {
		f.t.Fatal(err)
	}
	return h
}

// testWriter logs through t.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// hashPassword hashes like the API does (api.hashPassword): salt(16) || PBKDF2-HMAC-SHA512
// (210,000 iterations, 32 bytes).
func hashPassword(t testing.TB, pw string) []byte {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	key, err := pbkdf2.Key(sha512.New, pw, salt, 210_000, 32)
	if err != nil {
		t.Fatal(err)
	}
	return append(salt, key...)
}

// richFixture is the page the handler and browser tests look at: two groups, an ungrouped
// component, an active incident with two updates, a scheduled maintenance, a resolved incident
// and 90 days of history.
func richFixture(t testing.TB, st *store.Store, sub string) *fixture {
	t.Helper()
	desc := "Live status of Acme's services"
	f := newFixture(t, st, store.StatusPageInput{Name: "Acme Cloud", Subdomain: sub, Description: &desc})
	core := f.group("Core platform", "The API and the dashboard")
	edge := f.group("Edge", "")
	api := f.component("Public API", core, true)
	f.component("Dashboard", core, true)
	f.component("CDN", edge, false)
	f.component("Status webhooks", uuid.Nil, false)
	f.history(api, 90, func(i int) int {
		switch i {
		case 3:
			return 288 // 80%
		case 10:
			return 1 // 99.93%
		}
		return 0
	})
	ctx := context.Background()
	inc, err := f.sp.CreateIncident(ctx, store.SystemActor, f.org, f.page, statuspage.NewIncident{Title: "Elevated CDN errors",
		Description: "We are investigating errors on the CDN.", Status: statuspage.Investigating,
		Components: []store.ComponentChange{{ID: f.comps["CDN"], Status: statuspage.PartialOutage}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.sp.CreateIncidentUpdate(ctx, store.SystemActor, f.org, f.page, uuid.MustParse(inc.ID), statuspage.NewIncidentUpdate{
		Status: statuspage.Identified, Description: "A faulty edge node was found and removed."}); err != nil {
		t.Fatal(err)
	}
	old, err := f.sp.CreateIncident(ctx, store.SystemActor, f.org, f.page, statuspage.NewIncident{Title: "Dashboard login delays",
		Description: "Logins are slow.", Status: statuspage.Investigating})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.sp.CreateIncidentUpdate(ctx, store.SystemActor, f.org, f.page, uuid.MustParse(old.ID), statuspage.NewIncidentUpdate{
		Status: statuspage.Resolved, Description: "Logins are fast again."}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.sp.CreateMaintenance(ctx, store.SystemActor, f.org, f.page, statuspage.NewMaintenance{Title: "Database upgrade",
		Description: "The primary database moves to a new version.", StartDate: time.Now().Add(48 * time.Hour).Truncate(time.Minute),
		DurationMinutes: 90, ComponentIDs: []uuid.UUID{f.comps["Dashboard"]},
		Notifications: statuspage.Notifications{AtStart: true, AtEnd: true}}); err != nil {
		t.Fatal(err)
	}
	return f
}

// bigFixture is the benchmark page: components in groups of 10, each fed by its own check
// with days of history.
func bigFixture(t testing.TB, st *store.Store, sub string, components, days int) *fixture {
	t.Helper()
	f := newFixture(t, st, store.StatusPageInput{Name: "Big Co", Subdomain: sub})
	var group uuid.UUID
	for i := range components {
		if i%10 == 0 {
			group = f.group(fmt.Sprintf("Region %d", i/10+1), "")
		}
		check := f.component(fmt.Sprintf("Service %02d", i+1), group, true)
		f.exec(`INSERT INTO check_daily_stats (org_id, check_id, day, runs, failed_runs)
			SELECT $1, $2, (now() AT TIME ZONE 'UTC')::date - d, 1440, CASE WHEN d % 17 = 0 THEN 3 ELSE 0 END
			FROM generate_series(0, $3 - 1) AS d`, f.org, check, days)
	}
	return f
}

// serve starts h on a real listener.
func serve(t testing.TB, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func newStore(t testing.TB) *store.Store { return storetest.New(t) }
