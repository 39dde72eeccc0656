package api

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vantagehq/vantage/controlplane/internal/integration"
	"github.com/vantagehq/vantage/controlplane/internal/jobqueue/jobqueuetest"
	"github.com/vantagehq/vantage/controlplane/internal/scheduler"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/check/checktest"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// TestEveryFieldThroughEveryForm carries every field of every kind of the check model through
// every form of a check, on the real router, database, scheduler and NATS: the REST body
// (POST), the stored check (store and GET), and the job the scheduler publishes, decoded as
// the agent decodes it (the probers' input), and back into the model. The fields are found by
// reflection (checktest.Fields), so a field added to the model and forgotten in one form fails
// here, named, with the form that lost it.
//
// Each kind runs twice: check.Example (every field other than its default) catches a form that
// falls back to the default; checktest.Minimal (defaults) catches one that falls back to the
// zero value.
func TestEveryFieldThroughEveryForm(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// The dependency of check.Example's checks (depends_on must name a check or heartbeat).
	if _, err := h.st.Pool().Exec(context.Background(), `INSERT INTO heartbeats (id, org_id, name, grace_period, report_period)
		VALUES ($1, $2, 'example dependency', 60, 60)`, check.ExampleDependency, h.orgA); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	type walked struct {
		name string // e.g. "UPTIME Example"
		spec check.Spec
		id   uuid.UUID
	}
	var checks []walked
	// The integration lists must name integrations of the organization (of their types).
	named := map[string]string{}
	for _, typ := range integration.Types() {
		named[integration.AlertsField(typ)] = h.newIntegration(h.orgA, typ)
	}
	withIntegrations := func(s check.Spec) check.Spec {
		for _, l := range s.Alerts.Lists() {
			if id, ok := named[l.Field]; ok && len(*l.IDs) > 0 {
				*l.IDs = []string{id}
			}
		}
		return s
	}
	for _, k := range check.Kinds {
		for _, v := range []struct {
			name string
			spec check.Spec
		}{{"Example", withIntegrations(check.Example(k))}, {"Minimal", checktest.Minimal(k)}} {
			w := walked{name: string(k) + " " + v.name, spec: v.spec}
			path := "/v1/checks/" + k.PathSegment()
			created := h.do(http.MethodPost, path, h.tokenA, restBody(v.spec))
			if created.Status != http.StatusCreated {
				t.Errorf("%s: POST %s refused the model's body: %d %s", w.name, path, created.Status, created.Raw)
				continue
			}
			w.id = uuid.MustParse(created.Result()["id"].(string))
			checks = append(checks, w)

			// The create response renders the decoded check (a mutation response shows no
			// script; GET below does).
			for _, f := range checktest.Fields(v.spec) {
				if f.Name != "script" {
					compareRendered(t, w.name, "the REST body (decode in checks_decode.go or render in checks_render.go): POST "+path, created.Result(), f)
				}
			}
			stored, err := h.st.GetCheck(ctx, h.orgA, w.id, true)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range checktest.Diff(v.spec, stored.Spec, nil, false) {
				t.Errorf("%s: lost in the store (check.Document, queries/checks.sql, store/checks.go): %s", w.name, d)
			}
			got := h.do(http.MethodGet, path+"/"+w.id.String(), h.tokenA, nil)
			for _, f := range checktest.Fields(v.spec) {
				compareRendered(t, w.name, "the stored check as GET renders it", got.Result(), f)
			}
		}
	}

	// Confirming checks whose state changed almost an interval ago: with a confirmation cadence
	// floor above every interval, each check's first confirmation run is due two seconds from
	// now, instead of somewhere within its interval.
	if _, err := h.st.Pool().Exec(ctx, `UPDATE checks SET state = 'VERIFYING',
		state_changed_at = now() - test_interval * interval '1 second' + interval '2 seconds' WHERE org_id = $1`, h.orgA); err != nil {
		t.Fatal(err)
	}
	_, nc, js := jobqueuetest.NewStream(t)
	jobs := consumeJobs(t, js)
	sched, err := scheduler.New(scheduler.Config{MinConfirmationCadence: 24 * time.Hour}, scheduler.Deps{Store: h.st, NATS: nc, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- sched.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("scheduler: %v", err)
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for _, w := range checks {
		var job *vantagev1.CheckJob
		for job == nil && time.Now().Before(deadline) {
			if job = jobs.first(w.id); job == nil {
				time.Sleep(50 * time.Millisecond)
			}
		}
		if job == nil {
			t.Errorf("%s: no job published within 30s", w.name)
			continue
		}
		back, err := check.FromJob(job)
		if err != nil {
			t.Errorf("%s: %v", w.name, err)
			continue
		}
		if back.Kind != w.spec.Kind {
			t.Errorf("%s: the job's kind reads back as %q", w.name, back.Kind)
		}
		for _, d := range checktest.Diff(w.spec, back, checktest.JobFields, true) {
			t.Errorf("%s: lost on the way to the agent (the scheduler's job, check.Job / FromJob, check.proto): %s", w.name, d)
		}
	}
}

// restBody is the create body of spec: every field that differs from its kind's default, under
// its API name.
func restBody(spec check.Spec) map[string]any {
	def := map[string]checktest.Field{}
	for _, f := range checktest.Fields(check.Defaults(spec.Kind)) {
		def[f.Path] = f
	}
	body := map[string]any{}
	for _, f := range checktest.Fields(spec) {
		if d, ok := def[f.Path]; ok && reflect.DeepEqual(d.Value(), f.Value()) {
			continue
		}
		body[f.Name] = f.Value()
	}
	return body
}

// compareRendered reports field f of the model missing or different in a rendered check.
func compareRendered(t *testing.T, check, form string, rendered map[string]any, f checktest.Field) {
	t.Helper()
	got, ok := rendered[f.Name]
	if !ok {
		t.Errorf("%s: %s does not show %s", check, form, f)
		return
	}
	b, err := json.Marshal(f.Value())
	if err != nil {
		t.Fatal(err)
	}
	var want any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: lost in %s: %s = %s, want %s", check, form, f, show(got), b)
	}
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// receivedJobs are the jobs agents of every region would receive, decoded as the agent does.
type receivedJobs struct {
	mu   sync.Mutex
	byID map[string]*vantagev1.CheckJob // first job per check
}

func (r *receivedJobs) first(id uuid.UUID) *vantagev1.CheckJob {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byID[id.String()]
}

func consumeJobs(t *testing.T, js jetstream.JetStream) *receivedJobs {
	t.Helper()
	got := &receivedJobs{byID: map[string]*vantagev1.CheckJob{}}
	var consumers []string // every region's, and its browser jobs' (they travel apart)
	for _, region := range check.Regions {
		consumers = append(consumers, wire.ConsumerName(region), wire.BrowserConsumerName(region))
	}
	for _, name := range consumers {
		cons, err := js.Consumer(context.Background(), wire.JobStream, name)
		if err != nil {
			t.Fatalf("consumer %s: %v", name, err)
		}
		cc, err := cons.Consume(func(m jetstream.Msg) {
			job, err := wire.DecodeJob(m.Data())
			if err != nil {
				t.Errorf("decode job: %v", err)
				return
			}
			got.mu.Lock()
			if _, seen := got.byID[job.GetCheckId()]; !seen {
				got.byID[job.GetCheckId()] = job
			}
			got.mu.Unlock()
			_ = m.Ack()
		})
		if err != nil {
			t.Fatal(fmt.Errorf("consume %s: %w", name, err))
		}
		t.Cleanup(cc.Stop)
	}
	return got
}
