package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// testClock is a clock a test moves by hand.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// clientFromHeader is the client address a test sets per request.
func clientFromHeader(r *http.Request) string { return r.Header.Get("X-Test-Client") }

// TestPasswordAttemptsLimited guesses a page's password: past the burst, one address gets 429
// with Retry-After (the right password included) while another address still may try; the
// bucket refills with time, and another page is not affected.
func TestPasswordAttemptsLimited(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	hash := hashPassword(t, "correct horse")
	f := newFixture(t, st, store.StatusPageInput{Name: "Guarded", Subdomain: "guarded", PasswordHash: &hash})
	newFixture(t, st, store.StatusPageInput{Name: "Other", Subdomain: "other-guarded", PasswordHash: &hash})
	clk := &testClock{t: time.Now()}
	h := f.handlerWith(Config{PasswordAttemptsPerAddress: 3, PasswordAddressRefill: 10 * time.Second},
		Deps{Now: clk.Now, ClientIP: clientFromHeader})
	srv := serve(t, h)
	try := func(page, client, pw string) *http.Response {
		resp, _ := get(t, http.MethodPost, srv.URL+"/status/"+page+"/login", "", url.Values{"password": {pw}}, map[string]string{"X-Test-Client": client})
		return resp
	}
	for i := range 3 {
		if resp := try("guarded", "198.51.100.1", "wrong"); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d", i+1, resp.StatusCode)
		}
	}
	resp := try("guarded", "198.51.100.1", "correct horse")
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("4th attempt: %d, want 429", resp.StatusCode)
	}
	if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 10 {
		t.Fatalf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	if resp := try("guarded", "198.51.100.2", "wrong"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("another address: %d", resp.StatusCode)
	}
	if resp := try("other-guarded", "198.51.100.1", "correct horse"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("another page: %d", resp.StatusCode)
	}
	clk.Add(10 * time.Second)
	if resp := try("guarded", "198.51.100.1", "correct horse"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("after the refill: %d", resp.StatusCode)
	}
}

// TestPasswordAttemptsLimitedAcrossReplicas guesses a page's password through two replicas
// (two handlers on one database) in turn: one address gets the burst once in all, not once
// per replica, and so does the page from every address.
func TestPasswordAttemptsLimitedAcrossReplicas(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	hash := hashPassword(t, "correct horse")
	f := newFixture(t, st, store.StatusPageInput{Name: "Guarded", Subdomain: "guarded-replicas", PasswordHash: &hash})
	clk := &testClock{t: time.Now()}
	cfg := Config{PasswordAttemptsPerAddress: 3, PasswordAddressRefill: time.Minute,
		PasswordAttemptsPerPage: 5, PasswordPageRefill: time.Minute}
	replicas := []string{serve(t, f.handlerWith(cfg, Deps{Now: clk.Now, ClientIP: clientFromHeader})).URL,
		serve(t, f.handlerWith(cfg, Deps{Now: clk.Now, ClientIP: clientFromHeader})).URL}
	try := func(i int, client string) int {
		resp, _ := get(t, http.MethodPost, replicas[i%2]+"/status/guarded-replicas/login", "",
			url.Values{"password": {"wrong"}}, map[string]string{"X-Test-Client": client})
		return resp.StatusCode
	}
	counts := map[int]int{}
	for i := range 8 {
		counts[try(i, "198.51.100.1")]++
	}
	if counts[http.StatusUnauthorized] != 3 || counts[http.StatusTooManyRequests] != 5 {
		t.Fatalf("one address through two replicas: %v, want 3 tried (401) and 5 refused (429)", counts)
	}
	counts = map[int]int{}
	for i := range 6 {
		counts[try(i, fmt.Sprintf("198.51.100.%d", 10+i))]++
	}
	if counts[http.StatusUnauthorized] != 2 || counts[http.StatusTooManyRequests] != 4 {
		t.Fatalf("the page from many addresses through two replicas: %v, want the page's last 2 tried, 4 refused", counts)
	}
}

// TestPasswordHashingFairBetweenPages floods one page with password attempts from many
// addresses and logs in to another page meanwhile: it is served before most of the flood, not
// behind it (with one global pool of 2 slots it waited for the whole queue). The order of
// service is counted, not timed; how long the login takes is BenchmarkPasswordLoginDuringFlood's.
func TestPasswordHashingFairBetweenPages(t *testing.T) {
	t.Parallel()
	fl := passwordFlood(t)
	// Behind the flood, all attackers' hashes would come first; fair, the login waits for the
	// flooded page's one slot at most, during which about one attempt of the flood ends (and a
	// few more on a machine whose cores the flood shares).
	if fl.floodDoneFirst >= attackers/2 {
		t.Fatalf("%d of %d flood attempts ended before a login to another page; want it served before most of them",
			fl.floodDoneFirst, attackers)
	}
}

// BenchmarkPasswordLoginDuringFlood reports how long a login to one page takes while another
// is flooded, as a multiple of one hash alone measured in the same run.
//
//	go test ./internal/statuspage/web -run '^$' -bench PasswordLoginDuringFlood -benchtime 5x
func BenchmarkPasswordLoginDuringFlood(b *testing.B) {
	var ratio float64
	for range b.N {
		fl := passwordFlood(b)
		ratio += float64(fl.took) / float64(fl.single)
	}
	b.ReportMetric(ratio/float64(b.N), "login/one_hash")
}

const attackers = 32

type flood struct {
	single, took   time.Duration // one hash alone (best of three); the login during the flood
	floodDoneFirst int           // flood attempts that ended before the login did
}

// passwordFlood sends attackers wrong passwords to one page from as many addresses, then logs
// in to another page.
func passwordFlood(tb testing.TB) flood {
	tb.Helper()
	st := newStore(tb)
	hash := hashPassword(tb, "correct horse")
	f := newFixture(tb, st, store.StatusPageInput{Name: "Flooded", Subdomain: "flooded", PasswordHash: &hash})
	newFixture(tb, st, store.StatusPageInput{Name: "Quiet", Subdomain: "quiet", PasswordHash: &hash})
	h := f.handlerWith(Config{HashSlots: 2}, Deps{ClientIP: clientFromHeader})
	srv := serve(tb, h)
	login := func(page, client, pw string) (int, time.Duration) {
		start := time.Now()
		resp, _ := get(tb, http.MethodPost, srv.URL+"/status/"+page+"/login", "", url.Values{"password": {pw}}, map[string]string{"X-Test-Client": client})
		return resp.StatusCode, time.Since(start)
	}
	var fl flood
	fl.single = time.Hour
	for i := range 3 {
		code, d := login("quiet", "203.0.113."+strconv.Itoa(100+i), "correct horse")
		if code != http.StatusSeeOther {
			tb.Fatalf("quiet login: %d", code)
		}
		fl.single = min(fl.single, d)
	}
	var wg sync.WaitGroup
	var done atomic.Int32
	for i := range attackers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			login("flooded", "198.51.100."+strconv.Itoa(i+1), "wrong")
			done.Add(1)
		}()
	}
	time.Sleep(3 * fl.single) // the flood is queued
	code, took := login("quiet", "203.0.113.1", "correct horse")
	fl.took, fl.floodDoneFirst = took, int(done.Load())
	wg.Wait()
	if code != http.StatusSeeOther {
		tb.Fatalf("quiet login during the flood: %d", code)
	}
	tb.Logf("one hash %s; a login to another page during a flood of %d attempts took %s (%.1f×), after %d of them",
		fl.single, attackers, took, float64(took)/float64(fl.single), fl.floodDoneFirst)
	return fl
}

// TestFairSlotsServeAnotherPageFirst queues a flood on one page's slot and asks for a hash of
// another page: it runs at once, ahead of the flood's queue. The order of service is counted,
// in a bubble where synctest.Wait knows every goroutine is blocked, not timed.
func TestFairSlotsServeAnotherPageFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFairSlots(2)
		release := make(chan struct{})
		var mu sync.Mutex
		var order []string
		record := func(page string) { mu.Lock(); order = append(order, page); mu.Unlock() }
		for range 16 {
			go s.do(t.Context(), "flooded", func() { record("flooded"); <-release })
		}
		synctest.Wait() // one hash of the flood runs, the rest queue on the page's slot
		go s.do(t.Context(), "quiet", func() { record("quiet") })
		synctest.Wait()
		mu.Lock()
		got := slices.Clone(order)
		mu.Unlock()
		if want := []string{"flooded", "quiet"}; !slices.Equal(got, want) {
			t.Fatalf("served %v, want the other page right after the flood's first hash: %v", got, want)
		}
		close(release)
		synctest.Wait()
		if len(order) != 17 {
			t.Fatalf("served %d hashes, want all 17", len(order))
		}
	})
}

func TestFairSlotsForgetIdlePages(t *testing.T) {
	t.Parallel()
	s := newFairSlots(2)
	for _, p := range []string{"a", "b", "a"} {
		if !s.do(t.Context(), p, func() {}) {
			t.Fatal("not run")
		}
	}
	if n := len(s.pages); n != 0 {
		t.Fatalf("%d page slots kept after use", n)
	}
}

var formTokenPattern = regexp.MustCompile(`name="token" value="([^"]+)"`)

// formToken is the subscribe form's token in a rendered page.
func formToken(t *testing.T, page string) string {
	t.Helper()
	m := formTokenPattern.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no subscribe form token in the page:\n%s", page)
	}
	return m[1]
}

// TestSubscribeLimitedAcrossReplicas subscribes through two replicas (two handlers on one
// database) in turn: the limits per page and address, and per page, hold once in all.
func TestSubscribeLimitedAcrossReplicas(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	f := newFixture(t, st, store.StatusPageInput{Name: "Acme", Subdomain: "subguard-replicas"})
	clk := &testClock{t: time.Now()}
	cfg := Config{SubscribesPerAddress: 2, SubscribeAddressRefill: time.Minute,
		SubscribesPerPage: 5, SubscribePageRefill: time.Minute, CacheTTL: -1}
	replicas := []string{serve(t, f.handlerWith(cfg, Deps{Now: clk.Now, ClientIP: clientFromHeader})).URL,
		serve(t, f.handlerWith(cfg, Deps{Now: clk.Now, ClientIP: clientFromHeader})).URL}
	_, page := get(t, http.MethodGet, replicas[0]+"/status/subguard-replicas", "", nil, nil)
	token := formToken(t, page)
	n := 0
	post := func(client string) int {
		n++
		form := url.Values{"email": {fmt.Sprintf("s%d@example.com", n)}, "token": {token}}
		resp, _ := get(t, http.MethodPost, replicas[n%2]+"/status/subguard-replicas/subscribe", "", form,
			map[string]string{"X-Test-Client": client})
		return resp.StatusCode
	}
	counts := map[int]int{}
	for range 6 {
		counts[post("192.0.2.1")]++
	}
	if counts[http.StatusOK] != 2 || counts[http.StatusTooManyRequests] != 4 {
		t.Fatalf("one address through two replicas: %v, want 2 subscribed and 4 refused (429)", counts)
	}
	counts = map[int]int{}
	for i := range 6 {
		counts[post(fmt.Sprintf("192.0.2.%d", 10+i))]++
	}
	if counts[http.StatusOK] != 3 || counts[http.StatusTooManyRequests] != 3 {
		t.Fatalf("the page from many addresses through two replicas: %v, want the page's last 3 subscribed, 3 refused", counts)
	}
	if _, total, err := f.sp.ListSubscribers(context.Background(), f.org, f.page, "", 50, 0); err != nil || total != 5 {
		t.Fatalf("%d subscribers (err %v), want 5", total, err)
	}
}

// TestSubscribeFormProtected submits the public subscribe form without its token, with a
// forged or another page's token, from another site (Origin, Sec-Fetch-Site), and in bulk: each
// is refused (403, then 429 with Retry-After per page and address), and nothing is created.
func TestSubscribeFormProtected(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	f := newFixture(t, st, store.StatusPageInput{Name: "Acme", Subdomain: "subguard"})
	other := newFixture(t, st, store.StatusPageInput{Name: "Other", Subdomain: "subguard-other"})
	clk := &testClock{t: time.Now()}
	srv := serve(t, f.handlerWith(Config{SubscribesPerAddress: 2, SubscribeAddressRefill: time.Minute,
		SubscribesPerPage: 4, SubscribePageRefill: time.Minute, CacheTTL: -1}, Deps{Now: clk.Now, ClientIP: clientFromHeader}))
	_, page := get(t, http.MethodGet, srv.URL+"/status/subguard", "", nil, nil)
	token := formToken(t, page)
	_, otherPage := get(t, http.MethodGet, srv.URL+"/status/subguard-other", "", nil, nil)
	otherToken := formToken(t, otherPage)
	post := func(email, tok, client string, hdr map[string]string) *http.Response {
		h := map[string]string{"X-Test-Client": client}
		for k, v := range hdr {
			h[k] = v
		}
		form := url.Values{"email": {email}}
		if tok != "" {
			form.Set("token", tok)
		}
		resp, _ := get(t, http.MethodPost, srv.URL+"/status/subguard/subscribe", "", form, h)
		return resp
	}
	for name, resp := range map[string]*http.Response{
		"no token":              post("a@example.com", "", "192.0.2.1", nil),
		"forged token":          post("a@example.com", "1700000000.AAAA", "192.0.2.1", nil),
		"another page's token":  post("a@example.com", otherToken, "192.0.2.1", nil),
		"another site (Origin)": post("a@example.com", token, "192.0.2.1", map[string]string{"Origin": "https://evil.example"}),
		"cross-site fetch":      post("a@example.com", token, "192.0.2.1", map[string]string{"Sec-Fetch-Site": "cross-site"}),
	} {
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, resp.StatusCode)
		}
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	if resp := post("a@example.com", token, "192.0.2.1", map[string]string{"Origin": "http://" + host, "Sec-Fetch-Site": "same-origin"}); resp.StatusCode != 200 {
		t.Fatalf("the page's own form: %d", resp.StatusCode)
	}
	if resp := post("b@example.com", token, "192.0.2.1", nil); resp.StatusCode != 200 {
		t.Fatalf("second subscription: %d", resp.StatusCode)
	}
	resp := post("c@example.com", token, "192.0.2.1", nil)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("third from one address: %d %q, want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// Per page: other addresses share the page's budget (4).
	post("d@example.com", token, "192.0.2.2", nil)
	post("e@example.com", token, "192.0.2.3", nil)
	if resp := post("f@example.com", token, "192.0.2.4", nil); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("past the page's budget: %d", resp.StatusCode)
	}
	clk.Add(2 * time.Minute)
	if resp := post("g@example.com", token, "192.0.2.1", nil); resp.StatusCode != 200 {
		t.Fatalf("after the refill: %d", resp.StatusCode)
	}
	// An expired form.
	clk.Add(25 * time.Hour)
	if resp := post("h@example.com", token, "192.0.2.9", nil); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a day-old form: %d", resp.StatusCode)
	}
	if _, total, err := f.sp.ListSubscribers(context.Background(), f.org, f.page, "", 50, 0); err != nil || total != 5 {
		t.Fatalf("%d subscribers (err %v), want 5", total, err)
	}
	// An error would read as "no subscribers": it must be nil for the zero to mean anything.
	if _, total, err := other.sp.ListSubscribers(context.Background(), other.org, other.page, "", 50, 0); err != nil || total != 0 {
		t.Fatalf("other page: %d subscribers (err %v), want 0", total, err)
	}
}
