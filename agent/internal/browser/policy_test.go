package browser

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// publicAddr stands for a public server in TestPrivateTargetPolicy: a globally routable
// address (the documentation ranges are special-purpose, so pkg/netpolicy refuses them), put on
// the loopback interface of a network namespace of the test's own, so that no packet leaves the
// machine and no real server is reached.
const publicAddr = "100.0.0.10"

// TestPrivateTargetPolicy runs real Chromium with BlockPrivateTargets in a network namespace
// where a "public" server (publicAddr) and a private one (127.0.0.1) both run, and checks that
// everything the browser loads goes through the policy: the public page loads, while its
// sub-resources, its script's fetch and WebSocket, and a redirect to the private server are
// refused after name resolution, and the private server sees no request at all.
//
// The test re-runs itself inside `unshare --net` (root, as on CI), where it may add publicAddr
// to the namespace's loopback interface.
func TestPrivateTargetPolicy(t *testing.T) {
	if os.Getenv("VANTAGE_TEST_NETNS") == "" {
		unshare, err := exec.LookPath("unshare")
		if err != nil {
			t.Fatalf("unshare (util-linux) is required to run the policy test in its own network namespace: %v", err)
		}
		cmd := exec.Command(unshare, "--net", "sh", "-ec", `ip link set lo up; ip addr add `+publicAddr+`/32 dev lo; exec "$0" "$@"`,
			os.Args[0], "-test.run=^TestPrivateTargetPolicy$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "VANTAGE_TEST_NETNS=1")
		out, err := cmd.CombinedOutput()
		t.Logf("in a network namespace:\n%s", out)
		if err != nil || !strings.Contains(string(out), "--- PASS: TestPrivateTargetPolicy") {
			t.Fatalf("the policy test failed in its network namespace: %v", err)
		}
		return
	}

	var privateHits atomic.Int64
	private := serve(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		privateHits.Add(1)
		fmt.Fprint(w, "internal data")
	}))
	mux := http.NewServeMux()
	public := serve(t, publicAddr+":0", mux)
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>public</title><h1>Public page</h1>
			<img src="http://%[1]s/pixel.png">
			<script>
			fetch('http://%[1]s/api').then(() => document.title = 'fetched', () => document.title = 'fetch refused');
			const ws = new WebSocket('ws://%[1]s/ws'); ws.onerror = () => document.body.dataset.ws = 'refused';
			</script>`, private)
	})
	mux.HandleFunc("/to-private", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+private+"/", http.StatusFound)
	})

	b := startBrowser(t, Config{BlockPrivateTargets: true})
	visit := func(url string) *Page {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		p, err := b.Visit(ctx, VisitRequest{URL: url}, nil)
		if err != nil {
			t.Fatalf("visit %s: %v", url, err)
		}
		return p
	}

	p := visit("http://" + public + "/page")
	if p.Status != 200 || !strings.Contains(p.HTML, "Public page") {
		t.Fatalf("the public page did not load: status %d, load error %q, blocked %q", p.Status, p.LoadError, p.Blocked)
	}
	if !strings.Contains(p.Blocked, "127.0.0.1 is a loopback address") {
		t.Errorf("blocked %q, want the page's private sub-resources refused", p.Blocked)
	}
	if p.Timings.Connect <= 0 {
		t.Errorf("timings %+v: the proxy's connect time to the public server is missing", p.Timings)
	}

	p = visit("http://" + public + "/to-private")
	if p.LoadError == "" || !strings.Contains(p.Blocked, "loopback") {
		t.Errorf("a redirect to a private address: status %d, load error %q, blocked %q; want it refused", p.Status, p.LoadError, p.Blocked)
	}
	p = visit("http://" + private + "/")
	if p.LoadError == "" || p.Status != 0 || !strings.Contains(p.Blocked, "loopback") {
		t.Errorf("the private server directly: status %d, load error %q, blocked %q; want it refused", p.Status, p.LoadError, p.Blocked)
	}
	time.Sleep(200 * time.Millisecond) // let a stray late request arrive, if any
	if n := privateHits.Load(); n != 0 {
		t.Errorf("the private server got %d requests through the browser", n)
	}
}

// serve runs an HTTP server on addr until t ends and returns its host:port.
func serve(t *testing.T, addr string, h http.Handler) string {
	t.Helper()
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(lis) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })
	return lis.Addr().String()
}
