package kubeplay_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
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

// regions the test deploys agents for.
var regions = []string{"cloud:eu-west-2", "cloud:us-east-1"}

// TestChartRunsUnderPodmanKubePlay renders the chart and runs it with podman kube play: a
// 3-node NATS JetStream cluster, 2 control-plane replicas and the agents of two regions,
// against a database of its own on the machine's PostgreSQL. It creates an uptime check
// through the API of one replica and reads, through the other, the results both regions'
// agents sent; the target saw both agents. It needs the images of `make images`
// (IMAGE_TAG, default "local").
func TestChartRunsUnderPodmanKubePlay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	pm := kubeplay.Podman{Conf: containersConf(t)}
	tag := cmp.Or(os.Getenv("IMAGE_TAG"), "local")
	for _, img := range []string{"vantage-controlplane", "vantage-agent", "vantage-nats"} {
		if _, err := pm.Run(ctx, "image", "exists", "localhost/"+img+":"+tag); err != nil {
			t.Fatalf("image localhost/%s:%s is missing: run make images first (%v)", img, tag, err)
		}
	}
	id := randomHex(t, 4)
	release := "vt" + id // pod names are global under podman: one release per run
	network := "vantage-kubeplay-" + id
	if _, err := pm.Run(ctx, "network", "create", network); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := pm.Run(context.Background(), "network", "rm", "-f", network); err != nil {
			t.Error(err)
		}
	})
	// netavark brings the network's bridge (and the gateway address the test listens on) up
	// with its first container: an empty pod.
	holder := network + "-holder"
	if _, err := pm.Run(ctx, "pod", "create", "--name", holder, "--network", network); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := pm.Run(context.Background(), "pod", "rm", "-f", holder); err != nil {
			t.Error(err)
		}
	})
	if _, err := pm.Run(ctx, "pod", "start", holder); err != nil {
		t.Fatal(err)
	}
	gateway := gatewayOf(ctx, t, pm, network)

	// PostgreSQL listens on the host's loopback; the pods reach it through a forwarder on
	// the podman network's gateway (a cluster reaches its database by its own address).
	db := newDatabase(t, "vantage_kubeplay_"+id)
	pgAddr := forward(t, net.JoinHostPort(gateway, "0"), "127.0.0.1:5432")
	target := newTarget(t, net.JoinHostPort(gateway, "0"))

	bootstrap := "vtg_kubeplay_" + randomHex(t, 16)
	values := map[string]any{
		"images": map[string]any{"registry": "localhost", "tag": tag, "pullPolicy": "Never"},
		"secrets": map[string]any{
			"databaseURL":    fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable", pgAddr, db),
			"secretKey":      base64.StdEncoding.EncodeToString(randomBytes(t, 32)),
			"agentToken":     "agent_" + randomHex(t, 16),
			"bootstrapToken": bootstrap,
		},
		// The target is on a private address (the podman network's gateway).
		"controlPlane": map[string]any{"allowPrivateTargets": true},
		"agents": map[string]any{"allowPrivateTargets": true, "replicas": 1, "concurrency": 4,
			"regions": []any{map[string]any{"region": regions[0]}, map[string]any{"region": regions[1]}}},
		"nats": map[string]any{"storage": map[string]any{"size": "1Gi"}},
	}
	objs, err := render.Render(render.Options{Release: release, Namespace: "vantage", Values: values})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := kubeplay.Adapt(objs, "vantage")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range plan.Skipped {
		t.Logf("not run under podman: %s", s)
	}
	dir := t.TempDir()
	t.Cleanup(func() {
		if t.Failed() {
			dumpLogs(t, pm, plan)
		}
		if err := pm.Down(context.Background(), plan, dir); err != nil {
			t.Errorf("tear down: %v", err)
		}
	})
	start := time.Now()
	if err := pm.Up(ctx, plan, network, dir); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d units played in %s", len(plan.Units), time.Since(start).Round(time.Millisecond))

	full := release + "-vantage"
	cps := addresses(ctx, t, pm, plan, full+"-controlplane", network)
	agents := addresses(ctx, t, pm, plan, full+"-agent-", network)
	if len(cps) != 2 || len(agents) != 2 {
		t.Fatalf("control-plane replicas %v, agents %v: want 2 and 2", cps, agents)
	}
	for _, ip := range cps {
		waitReady(ctx, t, "http://"+net.JoinHostPort(ip, "8080")+"/readyz", 4*time.Minute)
	}
	for _, ip := range agents {
		waitReady(ctx, t, "http://"+net.JoinHostPort(ip, "8081")+"/readyz", 2*time.Minute)
	}
	t.Logf("control plane and agents ready %s after play", time.Since(start).Round(time.Second))

	// The three NATS members formed one JetStream cluster through the routes the chart gives.
	for _, ip := range addresses(ctx, t, pm, plan, full+"-nats-", network) {
		var jsz struct {
			Meta struct {
				Leader      string `json:"leader"`
				ClusterSize int    `json:"cluster_size"`
			} `json:"meta_cluster"`
		}
		if err := json.Unmarshal([]byte(get(ctx, t, "http://"+net.JoinHostPort(ip, "8222")+"/jsz")), &jsz); err != nil {
			t.Fatal(err)
		}
		if jsz.Meta.ClusterSize != 3 || jsz.Meta.Leader == "" {
			t.Errorf("NATS member %s: JetStream meta cluster of %d, leader %q; want 3 members and a leader", ip, jsz.Meta.ClusterSize, jsz.Meta.Leader)
		}
	}

	// The images' HEALTHCHECK is the binaries' healthcheck subcommand (no shell in the images).
	// kube play does not carry an image's health check over to its containers, so the test
	// checks the images declare it and runs the same command in the running containers.
	for image, unit := range map[string]string{"vantage-controlplane": full + "-controlplane", "vantage-agent": full + "-agent-us-east-1"} {
		out, err := pm.Run(ctx, "image", "inspect", "--format", "{{json .Config.Healthcheck.Test}}", "localhost/"+image+":"+tag)
		want := fmt.Sprintf(`["CMD","/usr/local/bin/%s","healthcheck"]`, image)
		if err != nil || strings.TrimSpace(out) != want {
			t.Errorf("HEALTHCHECK of %s: %s %v, want %s", image, out, err, want)
		}
		u := plan.Units[indexOf(t, plan, unit)]
		for _, pod := range slices.Sorted(maps.Keys(u.Containers)) {
			if out, err := pm.Run(ctx, "exec", u.Containers[pod][0], "/usr/local/bin/"+image, "healthcheck"); err != nil || strings.TrimSpace(out) != "ok" {
				t.Errorf("healthcheck in %s: %q %v", u.Containers[pod][0], out, err)
			}
		}
	}

	api := apiClient{base: "http://" + net.JoinHostPort(cps[0], "8080"), token: bootstrap}
	checkID := api.createCheck(ctx, t, map[string]any{
		"name": "kube play", "url": target.url, "test_regions": regions, "test_interval": 30, "timeout": 5000,
	})
	created := time.Now()
	// Read through the other replica: both serve the same database.
	other := apiClient{base: "http://" + net.JoinHostPort(cps[1], "8080"), token: bootstrap}
	seen := map[string]bool{}
	for deadline := time.Now().Add(3 * time.Minute); len(seen) < len(regions); {
		if time.Now().After(deadline) {
			t.Fatalf("results after 3m come from %v, want passing results from %v", seen, regions)
		}
		for _, r := range other.results(ctx, t, checkID, created.Add(-time.Minute)) {
			if r.Passing {
				seen[r.CheckedFrom] = true
			}
		}
		time.Sleep(2 * time.Second)
	}
	t.Logf("passing results from %v %s after the check was created", slices.Sorted(maps.Keys(seen)), time.Since(created).Round(time.Second))
	if got := target.sources(); !sameSet(got, agents) {
		t.Errorf("the target was probed from %v, want the two agent pods %v", got, agents)
	}

	// Every replica reports the pending jobs of the regions' consumers, what autoscaling uses.
	metrics := get(ctx, t, "http://"+net.JoinHostPort(cps[1], "8080")+"/metrics")
	for _, r := range regions {
		if !strings.Contains(metrics, fmt.Sprintf("vantage_region_jobs_pending{region=%q}", r)) {
			t.Errorf("/metrics has no vantage_region_jobs_pending for %s", r)
		}
	}
}

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
