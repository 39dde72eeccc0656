package kubeplay_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/deploy/kube/kubeplay"
	"github.com/vantagehq/vantage/deploy/kube/render"
)

// containersConf is deploy/containers.conf of this checkout.
func containersConf(t *testing.T) string {
	t.Helper()
	if c := os.Getenv("CONTAINERS_CONF"); c != "" {
		return c
	}
	p, err := filepath.Abs(filepath.Join(render.ChartDir(), "..", "..", "containers.conf"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func gatewayOf(ctx context.Context, t *testing.T, pm kubeplay.Podman, network string) string {
	t.Helper()
	out, err := pm.Run(ctx, "network", "inspect", "--format", "{{range .Subnets}}{{.Gateway}} {{end}}", network)
	if err != nil {
		t.Fatal(err)
	}
	for _, gw := range strings.Fields(out) {
		if ip := net.ParseIP(gw); ip != nil && ip.To4() != nil {
			return gw
		}
	}
	t.Fatalf("network %s has no IPv4 gateway: %q", network, out)
	return ""
}

// newDatabase creates database name on the machine's PostgreSQL and drops it when the test ends.
func newDatabase(t *testing.T, name string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	if err != nil {
		t.Fatalf("PostgreSQL at 127.0.0.1:5432: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Error(err)
		}
	})
	return name
}

// forward accepts on listen and copies each connection to and from to; it returns the
// address it listens on, and stops when the test ends.
func forward(t *testing.T, listen, to string) string {
	t.Helper()
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		lis.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := lis.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", to)
			if err != nil {
				in.Close()
				continue
			}
			mu.Lock()
			open = append(open, in, out)
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = io.Copy(out, in); out.(*net.TCPConn).CloseWrite() }()
			go func() { defer wg.Done(); _, _ = io.Copy(in, out); in.(*net.TCPConn).CloseWrite() }()
		}
	}()
	return lis.Addr().String()
}

// target is the HTTP server the check probes; it records who probed it.
type target struct {
	url  string
	mu   sync.Mutex
	from map[string]bool
}

func newTarget(t *testing.T, listen string) *target {
	t.Helper()
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	tg := &target{url: "http://" + lis.Addr().String() + "/", from: map[string]bool{}}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		tg.mu.Lock()
		tg.from[host] = true
		tg.mu.Unlock()
		fmt.Fprintln(w, "ok")
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() { srv.Close() })
	return tg
}

func (tg *target) sources() []string {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return slices.Sorted(maps.Keys(tg.from))
}

// addresses are the network addresses of the pods of the units whose name starts with prefix.
func addresses(ctx context.Context, t *testing.T, pm kubeplay.Podman, plan *kubeplay.Plan, prefix, network string) []string {
	t.Helper()
	var ips []string
	for _, u := range plan.Units {
		if !strings.HasPrefix(u.Name, prefix) {
			continue
		}
		for _, pod := range slices.Sorted(maps.Keys(u.Containers)) {
			ip, err := pm.IP(ctx, u.Containers[pod][0], network)
			if err != nil {
				t.Fatal(err)
			}
			ips = append(ips, ip)
		}
	}
	return ips
}

func indexOf(t *testing.T, plan *kubeplay.Plan, name string) int {
	t.Helper()
	for i, u := range plan.Units {
		if u.Name == name {
			return i
		}
	}
	t.Fatalf("no unit %s", name)
	return -1
}

func waitReady(ctx context.Context, t *testing.T, url string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	var last string
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = resp.Status + " " + strings.TrimSpace(string(b))
		} else {
			last = err.Error()
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("%s not ready within %s: %s", url, within, last)
}

func get(ctx context.Context, t *testing.T, url string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return string(b)
}

type apiClient struct{ base, token string }

func (c apiClient) call(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s %s", method, path, resp.Status, b)
	}
	var env struct {
		Success bool            `json:"success"`
		Result  json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(b, &env); err != nil || !env.Success {
		return fmt.Errorf("%s %s: %s (%v)", method, path, b, err)
	}
	return json.Unmarshal(env.Result, out)
}

func (c apiClient) createCheck(ctx context.Context, t *testing.T, body map[string]any) string {
	t.Helper()
	var check struct {
		ID string `json:"id"`
	}
	if err := c.call(ctx, http.MethodPost, "/v1/checks", body, &check); err != nil {
		t.Fatal(err)
	}
	if check.ID == "" {
		t.Fatal("created check has no id")
	}
	return check.ID
}

type result struct {
	CheckedFrom string `json:"checked_from"`
	Passing     bool   `json:"passing"`
}

func (c apiClient) results(ctx context.Context, t *testing.T, id string, from time.Time) []result {
	t.Helper()
	var page struct {
		Results []result `json:"results"`
	}
	path := fmt.Sprintf("/v1/checks/uptime/%s/results?per_page=100&from=%s&to=%s", id,
		from.UTC().Format("2006-01-02T15:04:05Z"), time.Now().Add(time.Minute).UTC().Format("2006-01-02T15:04:05Z"))
	if err := c.call(ctx, http.MethodGet, path, nil, &page); err != nil {
		t.Fatal(err)
	}
	return page.Results
}

// dumpLogs logs the last lines of every container of the plan (on failure).
func dumpLogs(t *testing.T, pm kubeplay.Podman, plan *kubeplay.Plan) {
	for _, u := range plan.Units {
		for _, pod := range slices.Sorted(maps.Keys(u.Containers)) {
			for _, c := range u.Containers[pod] {
				out, err := pm.Logs(context.Background(), c, 40)
				t.Logf("=== logs of %s (%v)\n%s", c, err, out)
			}
		}
	}
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func randomHex(t *testing.T, n int) string { return hex.EncodeToString(randomBytes(t, n)) }

func sameSet(a, b []string) bool {
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(a, b)
}
