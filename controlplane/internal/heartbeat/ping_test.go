package heartbeat

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/vantagehq/vantage/controlplane/internal/ratelimit"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// newPingHandler is a replica's ping endpoint on st, with a rate limiter of its own on st (as
// every replica has).
func newPingHandler(t *testing.T, st *store.Store, cfg PingConfig, deps PingDeps) *PingHandler {
	t.Helper()
	lim, err := ratelimit.New(ratelimit.Config{}, ratelimit.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	deps.Store, deps.Limiter = st, lim
	p, err := NewPingHandler(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPingEndpoint(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := f.create(store.Heartbeat{ReportPeriod: intp(60), GracePeriod: 60})
	srv := httptest.NewServer(newPingHandler(t, f.st, PingConfig{}, PingDeps{Now: f.clk.Now}))
	defer srv.Close()

	do := func(method, path, body string) (int, string, http.Header) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b), res.Header
	}
	cases := []struct {
		name, method, path string
		want               int
	}{
		{"GET success", "GET", "/" + h.ID.String(), 200},
		{"POST success with a body and query", "POST", "/" + h.ID.String() + "?x=1", 200},
		{"start", "GET", "/" + h.ID.String() + "/start", 200},
		{"fail", "POST", "/" + h.ID.String() + "/fail", 200},
		{"unknown well-formed uuid", "GET", "/" + uuid.NewString(), 200},
		{"well-formed id that is not ours", "GET", "/abcdefgh_123", 200},
		{"too short", "GET", "/abc1234", 404},
		{"bad characters", "GET", "/abcdefgh%21", 404},
		{"too long", "GET", "/" + strings.Repeat("a", 129), 404},
		{"empty", "GET", "/", 404},
		{"unknown action", "GET", "/" + h.ID.String() + "/stop", 404},
		{"method", "DELETE", "/" + h.ID.String(), 405},
	}
	for _, tc := range cases {
		status, body, hdr := do(tc.method, tc.path, "ignored")
		if status != tc.want {
			t.Errorf("%s: status %d, want %d (%q)", tc.name, status, tc.want, body)
		}
		if status == 200 && body != "" {
			t.Errorf("%s: 200 with body %q", tc.name, body)
		}
		if status != 200 && (!strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") || body == "") {
			t.Errorf("%s: error is not plain text: %q %q", tc.name, hdr.Get("Content-Type"), body)
		}
	}
	got := f.get(h.ID)
	if got.LastSeen == nil || got.FailedAt == nil {
		t.Fatalf("pings not recorded: %+v", got)
	}
}

func TestPingEndpointUnderLoad(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := f.create(store.Heartbeat{ReportPeriod: intp(60), GracePeriod: 60})
	quiet := f.create(store.Heartbeat{Name: "quiet", ReportPeriod: intp(60), GracePeriod: 60})
	ph := newPingHandler(t, f.st, PingConfig{}, PingDeps{Registerer: prometheus.NewRegistry()})
	srv := httptest.NewServer(ph)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}

	const n = 500
	var mu sync.Mutex
	counts := map[int]int{}
	retryAfter := true
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			res, err := client.Get(srv.URL + "/" + h.ID.String())
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			mu.Lock()
			counts[res.StatusCode]++
			if res.StatusCode == http.StatusTooManyRequests && res.Header.Get("Retry-After") == "" {
				retryAfter = false
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if counts[200]+counts[429] != n || counts[200] == 0 || counts[429] == 0 {
		t.Fatalf("statuses %v: want only 200s and 429s, some of each", counts)
	}
	if counts[200] > 10+int(time.Minute.Seconds()) {
		t.Fatalf("%d pings passed the limiter", counts[200])
	}
	if got := testutil.ToFloat64(ph.pings.WithLabelValues("success", "rate_limited")); int(got) != counts[429] {
		t.Fatalf("metric counts %v rate-limited pings, answered %d", got, counts[429])
	}
	if !retryAfter {
		t.Fatal("429 without Retry-After")
	}
	if got := f.get(h.ID); got.LastSeen == nil || got.State != "UP" {
		t.Fatalf("after the load: %+v", got)
	}
	// The limit is per id: another heartbeat is not affected.
	res, err := client.Get(srv.URL + "/" + quiet.ID.String())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("another id got %d", res.StatusCode)
	}
}

func TestPingRateLimitRefills(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p := newPingHandler(t, f.st, PingConfig{Rate: 1, Burst: 2}, PingDeps{Now: f.clk.Now})
	id := "abcdefgh"
	reserve := func(now time.Time) time.Duration {
		t.Helper()
		wait, err := p.reserve(context.Background(), id, now)
		if err != nil {
			t.Fatal(err)
		}
		return wait
	}
	if first, second := reserve(f.clk.Now()), reserve(f.clk.Now()); first != 0 || second != 0 {
		t.Fatal("burst refused")
	}
	if wait := reserve(f.clk.Now()); wait <= 0 || wait > time.Second {
		t.Fatalf("third ping waits %s, want (0, 1s]", wait)
	}
	if reserve(f.clk.Add(time.Second)) != 0 {
		t.Fatal("no refill after a second")
	}
}

// TestPingRateLimitAcrossReplicas pings one heartbeat through two replicas' endpoints (two
// handlers on one database) in turn: together they allow the burst once, not once each, and
// the 429s carry Retry-After.
func TestPingRateLimitAcrossReplicas(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := f.create(store.Heartbeat{ReportPeriod: intp(60), GracePeriod: 60})
	cfg := PingConfig{Rate: 1, Burst: 4}
	replicas := []*PingHandler{newPingHandler(t, f.st, cfg, PingDeps{Now: f.clk.Now}),
		newPingHandler(t, f.st, cfg, PingDeps{Now: f.clk.Now})}
	counts := map[int]int{}
	for i := range 20 {
		rec := httptest.NewRecorder()
		replicas[i%2].ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+h.ID.String(), nil))
		counts[rec.Code]++
		if rec.Code == http.StatusTooManyRequests && rec.Header().Get("Retry-After") != "1" {
			t.Fatalf("429 with Retry-After %q, want 1", rec.Header().Get("Retry-After"))
		}
	}
	if counts[200] != cfg.Burst || counts[429] != 20-cfg.Burst {
		t.Fatalf("statuses %v: want %d 200s in all, the rest 429", counts, cfg.Burst)
	}
}

// TestPingRateLimitIgnoresCase changes the case of a heartbeat id between pings: one
// heartbeat is one bucket, however its id is typed.
func TestPingRateLimitIgnoresCase(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := f.create(store.Heartbeat{ReportPeriod: intp(60), GracePeriod: 60})
	p := newPingHandler(t, f.st, PingConfig{Rate: 1, Burst: 2}, PingDeps{Now: f.clk.Now})
	id := h.ID.String()
	variants := []string{id, strings.ToUpper(id), strings.ToUpper(id[:8]) + id[8:], "ABCDEFGH_1", "abcdefgh_1", "AbCdEfGh_1"}
	want := []int{200, 200, 429, 200, 200, 429}
	for i, v := range variants {
		rec := httptest.NewRecorder()
		p.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+v, nil))
		if rec.Code != want[i] {
			t.Errorf("ping %d (%s): status %d, want %d", i+1, v, rec.Code, want[i])
		}
	}
}
