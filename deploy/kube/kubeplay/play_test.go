package kubeplay_test

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

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
	metrics := get(ctx, t, "http://"+net.JoinHostPort(cps[1], "9100")+"/metrics")
	for _, r := range regions {
		if !strings.Contains(metrics, fmt.Sprintf("vantage_region_jobs_pending{region=%q}", r)) {
			t.Errorf("/metrics has no vantage_region_jobs_pending for %s", r)
		}
	}
}
