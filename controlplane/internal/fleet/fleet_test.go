package fleet

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	"github.com/vantagehq/vantage/pkg/check"
)

// clock is the injected clock: tests step it instead of sleeping.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// replica is one control plane's fleet with the agents connected to it.
type replica struct {
	*Fleet
	reg   *prometheus.Registry
	mu    sync.Mutex
	local []LocalAgent
}

func (r *replica) set(agents ...LocalAgent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.local = agents
}

func newReplica(t *testing.T, st *store.Store, clk *clock, name string) *replica {
	t.Helper()
	r := &replica{reg: prometheus.NewRegistry()}
	f, err := New(Config{ReplicaName: name, UnservedGrace: 2 * time.Minute}, Deps{Store: st, Now: clk.Now, Registerer: r.reg,
		Local: func() []LocalAgent {
			r.mu.Lock()
			defer r.mu.Unlock()
			return slices.Clone(r.local)
		}})
	if err != nil {
		t.Fatal(err)
	}
	r.Fleet = f
	return r
}

func (r *replica) tick(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if err := r.publish(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.watch(ctx); err != nil {
		t.Fatal(err)
	}
}

func agent(id string, results uint64, regions ...string) LocalAgent {
	return LocalAgent{SessionID: uuid.New(), AgentID: id, Regions: regions, Version: "1.2.3", Hostname: id + ".host",
		Capabilities: []string{"browser"}, ConnectedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Results: results, ProbesRunning: 2}
}

func TestOverviewAcrossReplicas(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	a, b := newReplica(t, st, clk, "cp-a"), newReplica(t, st, clk, "cp-b")
	eu, us := agent("eu-1", 100, "cloud:eu-west-2"), agent("us-1", 0, "cloud:us-east-1")
	a.set(eu)
	b.set(us)
	a.tick(t)
	b.tick(t)
	clk.Add(5 * time.Second)
	eu.Results = 150
	a.set(eu)
	a.tick(t)

	for _, r := range []*replica{a, b} {
		o, err := r.Overview(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Agents) != 2 {
			t.Fatalf("%s sees %d agents, want both replicas' 2", r.cfg.ReplicaName, len(o.Agents))
		}
		for _, v := range o.Agents {
			switch v.AgentID {
			case "eu-1":
				if v.Replica != "cp-a" || v.ResultsPerSecond != 10 || v.ProbesRunning != 2 || !slices.Equal(v.Regions, eu.Regions) {
					t.Errorf("eu-1 as %s sees it: %+v, want replica cp-a, 10 results/s", r.cfg.ReplicaName, v)
				}
			case "us-1":
				if v.Replica != "cp-b" {
					t.Errorf("us-1 on %s, want cp-b", v.Replica)
				}
			}
		}
	}
	if got := testutil.ToFloat64(a.agents.WithLabelValues("cloud:eu-west-2")); got != 1 {
		t.Errorf("vantage_region_agents{eu-west-2} = %v", got)
	}
	if got := testutil.ToFloat64(a.agents.WithLabelValues("cloud:ap-south-1")); got != 0 {
		t.Errorf("vantage_region_agents{ap-south-1} = %v, want a 0 series", got)
	}

	// b dies without a word: its agents leave the overview once they expire.
	clk.Add(31 * time.Second)
	a.tick(t)
	o, err := a.Overview(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Agents) != 1 || o.Agents[0].AgentID != "eu-1" {
		t.Fatalf("after cp-b died: %+v, want only eu-1", o.Agents)
	}
	if got := testutil.ToFloat64(a.agents.WithLabelValues("cloud:us-east-1")); got != 0 {
		t.Errorf("vantage_region_agents{us-east-1} = %v after its only agent's replica died", got)
	}
	// A replica that stops removes its own rows at once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if o, _ := b.Overview(context.Background()); len(o.Agents) != 0 {
		t.Errorf("a stopped replica's agents are still listed: %+v", o.Agents)
	}
}

func TestUnservedRegionEvents(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	clk := &clock{t: time.Now().UTC().Add(-10 * time.Minute)} // the events it queues are due at once
	orgs := make([]uuid.UUID, 3)
	for i := range orgs {
		o, err := st.CreateOrganization(ctx, "org", "paid")
		if err != nil {
			t.Fatal(err)
		}
		orgs[i] = o.ID
	}
	addCheck := func(org uuid.UUID, paused bool, regions ...string) {
		storetest.Check(t, st, &storetest.CheckOpts{OrgID: org, Paused: paused,
			Spec: func(sp *check.Spec) { sp.TestRegions = regions }})
	}
	addCheck(orgs[0], false, "cloud:eu-west-2", "cloud:us-east-1")
	addCheck(orgs[0], false, "cloud:eu-west-2")
	addCheck(orgs[1], false, "cloud:eu-west-2")
	addCheck(orgs[2], false, "cloud:us-east-1")
	addCheck(orgs[2], true, "cloud:eu-west-2") // paused: org 2 does not use eu-west-2

	// Webhooks: org 0 subscribes to both region events, org 1 only to uptime events.
	rcv := newReceiver(t)
	for _, w := range []struct {
		org    uuid.UUID
		events []string
	}{{orgs[0], []string{"agent.region_unserved", "agent.region_served"}}, {orgs[1], []string{"uptime.down"}}} {
		if _, err := st.CreateWebhook(ctx, store.SystemActor, w.org, store.NewWebhook{URL: rcv.URL, Events: w.events,
			Secret: "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3"}); err != nil {
			t.Fatal(err)
		}
	}

	a, b := newReplica(t, st, clk, "cp-a"), newReplica(t, st, clk, "cp-b")
	a.set(agent("us-1", 0, "cloud:us-east-1"))
	a.tick(t)
	b.tick(t)
	if n := countOutbox(t, st, "agent.region_unserved"); n != 0 {
		t.Fatalf("%d events within the grace period", n)
	}
	o, err := a.Overview(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range o.Regions {
		switch r.Region {
		case "cloud:eu-west-2":
			if r.Agents != 0 || r.Checks != 3 || r.UnservedSince == nil || r.Alerted {
				t.Errorf("eu-west-2: %+v, want unserved, 3 checks, not alerted yet", r)
			}
		case "cloud:us-east-1":
			if r.Agents != 1 || r.BrowserAgents != 1 || r.Checks != 2 || r.UnservedSince != nil {
				t.Errorf("us-east-1: %+v", r)
			}
		}
	}

	// Past the grace period both replicas watch; each organization hears it once.
	clk.Add(2*time.Minute + time.Second)
	var wg sync.WaitGroup
	for _, r := range []*replica{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); _ = r.watch(ctx) }()
	}
	wg.Wait()
	a.tick(t)
	if got := outboxOrgs(t, st, "agent.region_unserved"); !slices.Equal(got, sortedIDs(orgs[0], orgs[1])) {
		t.Fatalf("agent.region_unserved queued for %v, want once for each of the two organizations that use eu-west-2", got)
	}
	if got := testutil.ToFloat64(a.agents.WithLabelValues("cloud:eu-west-2")); got != 0 {
		t.Errorf("vantage_region_agents{eu-west-2} = %v", got)
	}

	// An agent comes back: agent.region_served once per organization.
	clk.Add(time.Minute)
	b.set(agent("eu-1", 0, "cloud:eu-west-2"))
	b.tick(t)
	a.tick(t)
	if got := outboxOrgs(t, st, "agent.region_served"); !slices.Equal(got, sortedIDs(orgs[0], orgs[1])) {
		t.Fatalf("agent.region_served queued for %v", got)
	}
	if o, _ := a.Overview(ctx); regionOf(o, "cloud:eu-west-2").UnservedSince != nil {
		t.Error("eu-west-2 is still unserved")
	}

	// Only org 0's webhook subscribed: it receives both documents, org 1's nothing.
	n, err := notifier.New(notifier.Config{}, notifier.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	nctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = n.Run(nctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(10 * time.Second)
	for len(rcv.bodies()) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // nothing more arrives
	bodies := rcv.bodies()
	if len(bodies) != 2 {
		t.Fatalf("the webhook received %d documents, want 2", len(bodies))
	}
	types := []string{}
	for _, b := range bodies {
		var doc struct {
			Type string `json:"type"`
			Data struct {
				Region        string `json:"region"`
				UnservedSince string `json:"unserved_since"`
				Checks        int    `json:"checks"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Data.Region != "cloud:eu-west-2" || doc.Data.Checks != 2 || doc.Data.UnservedSince == "" {
			t.Errorf("document %s", b)
		}
		types = append(types, doc.Type)
	}
	slices.Sort(types)
	if !slices.Equal(types, []string{"agent.region_served", "agent.region_unserved"}) {
		t.Errorf("received %v", types)
	}
}

func regionOf(o Overview, region string) RegionView {
	for _, r := range o.Regions {
		if r.Region == region {
			return r
		}
	}
	return RegionView{}
}

func countOutbox(t *testing.T, st *store.Store, typ string) int {
	return len(outboxOrgs(t, st, typ))
}

func outboxOrgs(t *testing.T, st *store.Store, typ string) []uuid.UUID {
	t.Helper()
	rows, err := st.Pool().Query(context.Background(), `SELECT org_id FROM outbox WHERE event_type = $1 ORDER BY org_id`, typ)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}

func sortedIDs(ids ...uuid.UUID) []uuid.UUID {
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	return ids
}

// receiver records the bodies a webhook receives.
type receiver struct {
	*httptest.Server
	mu  sync.Mutex
	got [][]byte
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, b)
		r.mu.Unlock()
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) bodies() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}
