package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/jobqueue/jobqueuetest"
	"github.com/vantagehq/vantage/controlplane/internal/secrets"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// env is one test's real infrastructure: a fresh PostgreSQL database and an in-process
// nats-server with the job stream declared.
type env struct {
	st    *store.Store
	kr    *secrets.Keyring
	nc    *nats.Conn
	js    jetstream.JetStream
	orgID uuid.UUID
}

func setup(t testing.TB) *env {
	t.Helper()
	kr := storetest.NewKeyring(t)
	st, err := store.Open(context.Background(), storetest.NewDatabase(t), kr)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(st.Close)
	_, nc, js := jobqueuetest.NewStream(t)
	e := &env{st: st, kr: kr, nc: nc, js: js, orgID: uuid.Must(uuid.NewV7())}
	e.exec(t, `INSERT INTO organizations (id, name) VALUES ($1, 'test org')`, e.orgID)
	return e
}

func (e *env) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	if _, err := e.st.Pool().Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func (e *env) seal(t testing.TB, s string) []byte {
	t.Helper()
	b, err := e.kr.Seal([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (e *env) addProject(t testing.TB) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	e.exec(t, `INSERT INTO projects (id, org_id, name) VALUES ($1, $2, 'p')`, id, e.orgID)
	return id
}

func (e *env) addVar(t testing.TB, project *uuid.UUID, name, typ, value string) {
	t.Helper()
	e.exec(t, `INSERT INTO env_vars (id, org_id, project_id, name, type, value_enc) VALUES ($1, $2, $3, $4, $5, $6)`,
		uuid.Must(uuid.NewV7()), e.orgID, project, name, typ, e.seal(t, value))
}

// testCheck is a check created through the store (storetest.Check, which allows 1-second
// intervals); nil fields keep the kind's default.
type testCheck struct {
	Kind                 check.Kind
	Project              *uuid.UUID
	Interval             int // seconds
	TimeoutMs            *int
	Regions              []string
	Paused               bool
	State                string
	ConfirmationPeriod   int
	URL, Method, Body    *string
	Headers              map[string]string
	AuthUser, AuthPass   *string
	Script               *string
	DNSDomain, DNSType   *string
	TCPHost              *string
	TCPPort              *int
	Assertions           []check.Assertion
	FollowRedirects, TLS *bool
}

func ptr[T any](v T) *T { return &v }

func (e *env) addCheck(t testing.TB, c testCheck) uuid.UUID {
	t.Helper()
	if c.State == "" {
		c.State = "UP"
	}
	if c.Interval == 0 {
		c.Interval = 1
	}
	if c.Regions == nil {
		c.Regions = []string{"cloud:us-east-1"}
	}
	return storetest.Check(t, e.st, &storetest.CheckOpts{OrgID: e.orgID, ProjectID: c.Project, Kind: c.Kind, Name: "c",
		Paused: c.Paused, State: c.State, Spec: func(sp *check.Spec) {
			sp.TestInterval, sp.TestRegions, sp.AlertPriority = c.Interval, c.Regions, check.PriorityHigh
			sp.ConfirmationPeriodSeconds, sp.RecoveryPeriodSeconds = c.ConfirmationPeriod, 60
			if c.TimeoutMs != nil || c.Kind == check.Browser { // a browser check may have none: the agent's 60 s
				sp.TimeoutMs = c.TimeoutMs
			}
			if c.Assertions != nil {
				sp.Assertions = c.Assertions
			}
			if h := sp.HTTP; h != nil {
				if c.URL != nil || c.Script != nil {
					h.URL = c.URL
				}
				h.Body, h.Headers, h.AuthUsername, h.AuthPassword, h.Script = c.Body, c.Headers, c.AuthUser, c.AuthPass, c.Script
				setIf(&h.Method, c.Method)
				setIf(&h.FollowRedirects, c.FollowRedirects)
				setIf(&h.VerifySSL, c.TLS)
			}
			if d := sp.DNS; d != nil {
				setIf(&d.Domain, c.DNSDomain)
				setIf(&d.RecordType, c.DNSType)
			}
			if p := sp.TCP; p != nil {
				setIf(&p.Hostname, c.TCPHost)
				setIf(&p.Port, c.TCPPort)
			}
		}}).ID
}

// setIf sets *dst to *v when v is not nil.
func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// startScheduler runs a scheduler until the returned stop is called (or the test ends).
func (e *env) startScheduler(t testing.TB, cfg Config, name string) (s *Scheduler, reg *prometheus.Registry, stop func()) {
	t.Helper()
	return e.startSchedulerWith(t, cfg, name, nil)
}

// startSchedulerWith is startScheduler with a listener of its shards.
func (e *env) startSchedulerWith(t testing.TB, cfg Config, name string, shards ShardListener) (s *Scheduler, reg *prometheus.Registry, stop func()) {
	t.Helper()
	reg = prometheus.NewRegistry()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("scheduler", name)
	s, err := New(cfg, Deps{Store: e.st, NATS: e.nc, Logger: log, Registerer: reg, Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("scheduler %s: Run: %v", name, err)
				}
			case <-time.After(20 * time.Second):
				t.Errorf("scheduler %s did not stop within 20s", name)
			}
		})
	}
	t.Cleanup(stop)
	return s, reg, stop
}

// published is what a scheduler's metrics say it queued.
func published(reg *prometheus.Registry) float64 {
	return counter(reg, "vantage_scheduler_jobs_published_total")
}

// counter sums a counter's series.
func counter(reg *prometheus.Registry, name string) float64 {
	mfs, _ := reg.Gather()
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

// gotJob is a job as an agent of its region received it.
type gotJob struct {
	subject string
	stored  time.Time // when JetStream stored it
	job     *vantagev1.CheckJob
}

// jobs is what consume received.
type jobs struct {
	mu  sync.Mutex
	all []gotJob
}

// consume consumes every region's consumers (its jobs and its browser jobs) like agents do, and
// keeps what arrives.
func (e *env) consume(t testing.TB) *jobs {
	t.Helper()
	got := &jobs{}
	ctx := context.Background()
	var names []string
	for _, r := range check.Regions {
		names = append(names, wire.ConsumerName(r), wire.BrowserConsumerName(r))
	}
	for _, name := range names {
		cons, err := e.js.Consumer(ctx, wire.JobStream, name)
		if err != nil {
			t.Fatalf("consumer %s: %v", name, err)
		}
		cc, err := cons.Consume(func(m jetstream.Msg) {
			j, err := wire.DecodeJob(m.Data())
			if err != nil {
				t.Errorf("decode job on %s: %v", m.Subject(), err)
				return
			}
			md, err := m.Metadata()
			if err != nil {
				t.Errorf("metadata: %v", err)
				return
			}
			got.mu.Lock()
			got.all = append(got.all, gotJob{subject: m.Subject(), stored: md.Timestamp, job: j})
			got.mu.Unlock()
			_ = m.Ack()
		})
		if err != nil {
			t.Fatalf("consume %s: %v", name, err)
		}
		t.Cleanup(cc.Stop)
	}
	return got
}

// of returns the jobs of one check received so far, in arrival order.
func (g *jobs) of(id uuid.UUID) []gotJob {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []gotJob
	for _, j := range g.all {
		if j.job.CheckId == id.String() {
			out = append(out, j)
		}
	}
	return out
}

func (g *jobs) snapshot() []gotJob {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]gotJob(nil), g.all...)
}

func atLeast(n int, what string, got int) error {
	if got < n {
		return fmt.Errorf("%s: %d, want at least %d", what, got, n)
	}
	return nil
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms) }
