//go:build cluster

// Package cluster is the proof across hosts (make test-cluster, deploy/README.md "The cluster
// test"): Vantage's real binaries on hosts made of network namespaces — a 3-member NATS
// JetStream cluster, three control-plane replicas, the agents of three regions, each on its own
// host, and PostgreSQL, the target and the webhook receiver on the test's host — put through
// partitions and kills one at a time, with the assertions after each. It needs root and runs
// only with the build tag cluster.
package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vantagehq/vantage/pkg/wire"
)

// regions are the three regions, one agent host each.
var regions = []string{"cloud:us-east-1", "cloud:eu-west-2", "cloud:ap-southeast-2"}

// interval is the checks' test_interval: the API's minimum.
const interval = 30 * time.Second

// unservedGrace is the control planes' VANTAGE_REGION_UNSERVED_GRACE: well inside the 2-minute
// cut of a region, whose agent's stream takes the control plane up to 50 s of keepalive to
// declare dead, so that agent.region_unserved and agent.region_served must both go out.
const unservedGrace = 15 * time.Second

// connectionAge is the control planes' VANTAGE_GRPC_MAX_CONNECTION_AGE: within it (+10 %
// jitter) of a replica's return, every agent has reconnected and taken its first address again.
const connectionAge = time.Minute

type cluster struct {
	dir, logs                string
	cpBin, agentBin, natsBin string
	procs                    procs
	pg                       *postgres
	nats                     []*natsNode
	cps                      []*controlPlane
	agents                   []*agent
	target                   *target
	recv                     *receiver
	db                       *pgxpool.Pool
	js                       jetstream.JetStream
	token                    string
	checks                   []checkRef
	start                    time.Time // every check ran once from every region
}

type checkRef struct {
	id, name string
	outage   bool // probes the target's /outage
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newCluster builds the hosts and starts everything, ready.
func newCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{dir: os.Getenv("VANTAGE_CLUSTER_DIR"), natsBin: os.Getenv("VANTAGE_CLUSTER_NATS_SERVER")}
	bin := os.Getenv("VANTAGE_CLUSTER_BIN")
	if bin == "" || c.natsBin == "" {
		t.Fatal("VANTAGE_CLUSTER_BIN (the folder of make build's binaries) and VANTAGE_CLUSTER_NATS_SERVER are required: run make test-cluster")
	}
	c.cpBin, c.agentBin = filepath.Join(bin, "vantage-controlplane"), filepath.Join(bin, "vantage-agent")
	if c.dir == "" {
		c.dir = t.TempDir()
	}
	// PostgreSQL runs as user postgres below this folder.
	if err := os.Chmod(c.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c.logs = filepath.Join(c.dir, "logs")
	if err := os.MkdirAll(c.logs, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("logs in %s", c.logs)

	setUpBridge(t)
	var natsHosts []*host
	for i := 1; i <= 3; i++ {
		natsHosts = append(natsHosts, addHost(t, fmt.Sprintf("n%d", i), 10+i, ""))
	}
	cpHosts := []*host{addHost(t, "cp1", 21, ""), addHost(t, "cp2", 22, ""), addHost(t, "cp3", 23, "")}
	var agentHosts []*host
	for i := range regions {
		// Agents dial the name "controlplane", which resolves to every replica; gRPC tries
		// them in order, so each region prefers another replica.
		var names strings.Builder
		for j := range cpHosts {
			fmt.Fprintf(&names, "%s controlplane\n", cpHosts[(i+j)%len(cpHosts)].ip)
		}
		agentHosts = append(agentHosts, addHost(t, fmt.Sprintf("r%d", i+1), 31+i, names.String()))
	}

	c.target, c.recv = startTarget(t), startReceiver(t)

	c.pg = c.newPostgres(t)
	c.pg.start(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgxpool.New(ctx, c.pg.url("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE vantage"); err != nil {
		t.Fatal(err)
	}
	admin.Close()

	var natsURLs []string
	for i, h := range natsHosts {
		n := &natsNode{name: fmt.Sprintf("n%d", i+1), h: h}
		n.writeConfig(t, c.dir, natsHosts)
		c.nats = append(c.nats, n)
		natsURLs = append(natsURLs, n.clientURL())
	}
	for _, n := range c.nats {
		n.start(t, c)
	}
	for _, n := range c.nats {
		n.waitHealthy(t, 2*time.Minute)
	}

	key := make([]byte, 32)
	_, _ = rand.Read(key)
	c.token = "vt_cluster_" + randomHex(16)
	for _, h := range cpHosts {
		c.cps = append(c.cps, &controlPlane{name: h.name, h: h, env: map[string]string{
			"VANTAGE_DATABASE_URL":            c.pg.url("vantage"),
			"VANTAGE_SECRET_KEY":              base64.StdEncoding.EncodeToString(key),
			"VANTAGE_BOOTSTRAP_TOKEN":         c.token,
			"VANTAGE_HTTP_ADDR":               "0.0.0.0:8080",
			"VANTAGE_GRPC_ADDR":               "0.0.0.0:9090",
			"VANTAGE_PING_ADDR":               "0.0.0.0:8082",
			"VANTAGE_METRICS_ADDR":            "0.0.0.0:9100",
			"VANTAGE_NATS_URL":                strings.Join(natsURLs, ","),
			"VANTAGE_NATS_STREAM_REPLICAS":    "3",
			"VANTAGE_REPLICA_NAME":            h.name,
			"VANTAGE_ALLOW_PRIVATE_TARGETS":   "true",
			"VANTAGE_SHUTDOWN_TIMEOUT":        "10s",
			"VANTAGE_LOG_LEVEL":               "debug",
			"VANTAGE_REGION_UNSERVED_GRACE":   unservedGrace.String(),
			"VANTAGE_GRPC_MAX_CONNECTION_AGE": connectionAge.String(),
		}})
	}
	for _, cp := range c.cps {
		cp.start(t, c)
		cp.waitReady(t, 2*time.Minute)
	}

	for i, region := range regions {
		a := &agent{region: region, h: agentHosts[i], env: map[string]string{
			"VANTAGE_NATS_URL":              strings.Join(natsURLs, ","),
			"VANTAGE_CONTROLPLANE_ADDR":     "controlplane:9090",
			"VANTAGE_AGENT_TOKEN":           c.adminCreateAgentToken(t, region),
			"VANTAGE_REGIONS":               region,
			"VANTAGE_AGENT_ID":              "agent-" + agentHosts[i].name,
			"VANTAGE_HTTP_ADDR":             "0.0.0.0:8081",
			"VANTAGE_METRICS_ADDR":          "0.0.0.0:9101",
			"VANTAGE_BROWSER_PATH":          "none",
			"VANTAGE_ALLOW_PRIVATE_TARGETS": "true",
			"VANTAGE_LOG_LEVEL":             "debug",
		}}
		a.start(t, c)
		c.agents = append(c.agents, a)
	}
	for _, a := range c.agents {
		a.waitReady(t, time.Minute)
	}

	if c.db, err = pgxpool.New(context.Background(), c.pg.url("vantage")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.db.Close)
	nc, err := nats.Connect(strings.Join(natsURLs, ","), nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	if c.js, err = jetstream.New(nc); err != nil {
		t.Fatal(err)
	}
	return c
}

// --- the API, through whichever replica answers ---

func (c *cluster) call(method, path string, body, out any) error {
	var errs []string
	for _, cp := range c.cps {
		err := c.callOn(cp, method, path, body, out)
		if err == nil {
			return nil
		}
		errs = append(errs, err.Error())
	}
	return fmt.Errorf("%s", strings.Join(errs, "; "))
}

func (c *cluster) callOn(cp *controlPlane, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, cp.api()+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Success bool            `json:"success"`
		Result  json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(b, &env); err != nil || resp.StatusCode/100 != 2 || !env.Success {
		return fmt.Errorf("%s %s on %s: %s %s", method, path, cp.name, resp.Status, b)
	}
	if out != nil {
		return json.Unmarshal(env.Result, out)
	}
	return nil
}

// createChecks creates the stable checks, the outage check and a webhook subscribed to them.
func (c *cluster) createChecks(t *testing.T) {
	t.Helper()
	for _, ck := range []checkRef{{name: "stable-1"}, {name: "stable-2"}, {name: "outage", outage: true}} {
		path := "/ok"
		if ck.outage {
			path = "/outage"
		}
		var out struct {
			ID string `json:"id"`
		}
		// No confirmation or recovery period: one failing verdict is a DOWN, so that any
		// false failure the faults cause shows.
		if err := c.call(http.MethodPost, "/v1/checks", map[string]any{
			"name": ck.name, "url": c.target.url + path, "test_regions": regions, "test_interval": int(interval / time.Second),
			"timeout": 5000, "confirmation_period_seconds": 0, "recovery_period_seconds": 0,
			"reminder_alert_interval_minutes": -1,
		}, &out); err != nil {
			t.Fatal(err)
		}
		ck.id = out.ID
		c.checks = append(c.checks, ck)
	}
	var ids []string
	for _, ck := range c.checks {
		ids = append(ids, ck.id)
	}
	if err := c.call(http.MethodPost, "/v1/webhooks", map[string]any{
		"url": c.recv.url + "/hook", "check_ids": ids,
		"events": []string{"uptime.down", "uptime.up", "agent.region_unserved", "agent.region_served"},
	}, nil); err != nil {
		t.Fatal(err)
	}
}

// status is a check's status through the API.
func (c *cluster) status(id string) (string, error) {
	var out struct {
		Status string `json:"status"`
	}
	err := c.call(http.MethodGet, "/v1/checks/"+id, nil, &out)
	return out.Status, err
}

// --- the state of the cluster ---

// allReady is nil when every running process answers its health check.
func (c *cluster) allReady() error {
	for _, n := range c.nats {
		if err := httpOK(n.monitorURL() + "/healthz"); err != nil {
			return fmt.Errorf("nats %s: %w", n.name, err)
		}
	}
	for _, cp := range c.cps {
		if err := httpOK(cp.api() + "/readyz"); err != nil {
			return fmt.Errorf("%s: %w", cp.name, err)
		}
	}
	for _, a := range c.agents {
		if err := httpOK(a.readyURL()); err != nil {
			return fmt.Errorf("agent %s: %w", a.region, err)
		}
	}
	return nil
}

// fresh is nil when every check has a final result from each of regions of a run scheduled
// after since.
func (c *cluster) fresh(since time.Time, regions []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rows, err := c.db.Query(ctx, `SELECT check_id::text, region, max(job_id::text) FROM check_results
		WHERE is_final_attempt AND checked_at > $1 GROUP BY 1, 2`, since.Add(-time.Minute))
	if err != nil {
		return err
	}
	latest := map[string]time.Time{}
	for rows.Next() {
		var check, region, job string
		if err := rows.Scan(&check, &region, &job); err != nil {
			return err
		}
		due, err := dueOf(job)
		if err != nil {
			return err
		}
		latest[check+" "+region] = due
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, ck := range c.checks {
		for _, r := range regions {
			if due, ok := latest[ck.id+" "+r]; !ok || !due.After(since) {
				return fmt.Errorf("no run of %s due after %s stored from %s yet", ck.name, since.Format(time.TimeOnly), r)
			}
		}
	}
	return nil
}

// dueOf is the scheduled time of a job: its id is a UUIDv7 of that time (scheduler.jobID).
func dueOf(job string) (time.Time, error) {
	b, err := hex.DecodeString(strings.ReplaceAll(job, "-", "")[:12])
	if err != nil {
		return time.Time{}, fmt.Errorf("job id %q: %w", job, err)
	}
	var ms int64
	for _, x := range b {
		ms = ms<<8 | int64(x)
	}
	return time.UnixMilli(ms), nil
}

// streamLeader is the NATS member holding the job stream's leader.
func (c *cluster) streamLeader() (*natsNode, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := c.js.Stream(ctx, wire.JobStream)
	if err != nil {
		return nil, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, err
	}
	if info.Config.Replicas != 3 {
		return nil, fmt.Errorf("stream %s has %d replicas, want 3 (VANTAGE_NATS_STREAM_REPLICAS)", wire.JobStream, info.Config.Replicas)
	}
	if info.Cluster == nil {
		return nil, fmt.Errorf("stream %s: no cluster information", wire.JobStream)
	}
	for _, n := range c.nats {
		if n.name == info.Cluster.Leader {
			return n, nil
		}
	}
	return nil, fmt.Errorf("stream %s: leader %q is none of the members", wire.JobStream, info.Cluster.Leader)
}

// shardOwners returns how many scheduler shards each running control plane owns
// (vantage_scheduler_owned_shards).
func (c *cluster) shardOwners() (map[*controlPlane]int, error) {
	owned := map[*controlPlane]int{}
	for _, cp := range c.cps {
		if cp.p.exited() {
			continue
		}
		resp, err := httpClient.Get(cp.metrics())
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "vantage_scheduler_owned_shards "); ok {
				n, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return nil, fmt.Errorf("%s: %q: %w", cp.name, line, err)
				}
				owned[cp] = int(n)
			}
		}
	}
	return owned, nil
}

// shardsShared checks that the running control planes own every one of the 256 shards between
// them, each about its share, and returns the one owning the most.
func (c *cluster) shardsShared() (*controlPlane, error) {
	owned, err := c.shardOwners()
	if err != nil {
		return nil, err
	}
	total, share := 0, (256+len(owned)-1)/max(len(owned), 1)
	var most *controlPlane
	for cp, n := range owned {
		total += n
		if n > share {
			return nil, fmt.Errorf("%s owns %d shards, above its share %d", cp.name, n, share)
		}
		if most == nil || n > owned[most] {
			most = cp
		}
	}
	if total != 256 {
		return nil, fmt.Errorf("the running control planes own %d of 256 shards (%v)", total, owned)
	}
	return most, nil
}
