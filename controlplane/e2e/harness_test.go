package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vantagehq/vantage/controlplane/internal/scheduler"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	"github.com/vantagehq/vantage/pkg/testwait"
	"github.com/vantagehq/vantage/pkg/wire"
)

// maxParallel bounds how many tests run their processes at once, whatever -parallel says: each
// runs a control plane and agents, and the timing assertions need CPU to spare.
const maxParallel = 2

var slots = make(chan struct{}, maxParallel)

// parallel marks t parallel and waits for one of maxParallel slots.
func parallel(t *testing.T) {
	t.Parallel()
	slots <- struct{}{}
	t.Cleanup(func() { <-slots })
}

// stack is one test's Vantage: a fresh database, an in-process NATS server with JetStream, a
// control plane process and the agent processes the test starts.
type stack struct {
	dir        string // process logs
	dbURL      string
	db         *pgxpool.Pool
	ns         *server.Server
	nc         *nats.Conn
	js         jetstream.JetStream
	secretKey  string
	token      string // the bootstrap token, used as the API token
	agentToken string
	cp         *controlPlane
	client     *http.Client
	// cpEnv is added to (or replaces) the control plane's environment.
	cpEnv map[string]string
}

// newStack starts a database, NATS and a control plane (ready) for t.
func newStack(t *testing.T) *stack {
	t.Helper()
	return newStackWith(t, nil)
}

// newStackWith is newStack with cpEnv added to the control plane's environment.
func newStackWith(t *testing.T, cpEnv map[string]string) *stack {
	t.Helper()
	s := &stack{
		cpEnv:      cpEnv,
		dir:        t.TempDir(),
		dbURL:      storetest.NewDatabase(t),
		secretKey:  randomKey(),
		token:      "vt_e2e_" + randomHex(16),
		agentToken: "agent_e2e_" + randomHex(16),
		client:     &http.Client{Timeout: 15 * time.Second},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, s.dbURL)
	if err != nil {
		t.Fatalf("connect to the test database: %v", err)
	}
	t.Cleanup(pool.Close)
	s.db = pool

	s.ns = startNATS(t)
	nc, err := nats.Connect(s.ns.ClientURL())
	if err != nil {
		t.Fatalf("nats connect: %v", err)
	}
	t.Cleanup(nc.Close)
	s.nc = nc
	if s.js, err = jetstream.New(nc); err != nil {
		t.Fatalf("jetstream: %v", err)
	}

	s.cp = &controlPlane{s: s, name: "controlplane"}
	s.cp.start(t)
	return s
}

// startNATS starts a NATS server with JetStream on a random port, storing in a test directory.
func startNATS(t *testing.T) *server.Server {
	t.Helper()
	ns, err := server.NewServer(&server.Options{
		Host:      "127.0.0.1",
		Port:      -1,
		JetStream: true,
		StoreDir:  t.TempDir(),
		NoLog:     true,
		NoSigs:    true,
	})
	if err != nil {
		t.Fatalf("nats server: %v", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready within 10s")
	}
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	return ns
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func randomKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// cpShutdownTimeout is the control plane's VANTAGE_SHUTDOWN_TIMEOUT.
const cpShutdownTimeout = 10 * time.Second

// controlPlane is a vantage-controlplane process of a stack (a replica). Its first start
// listens on free ports; later starts reuse them, so agents find it again.
type controlPlane struct {
	s                  *stack
	name               string // of its log files, name-<start>.log
	httpAddr, grpcAddr string
	p                  *proc
	starts             int
}

func (c *controlPlane) env() map[string]string {
	httpAddr, grpcAddr := c.httpAddr, c.grpcAddr
	if httpAddr == "" {
		httpAddr, grpcAddr = "127.0.0.1:0", "127.0.0.1:0"
	}
	env := map[string]string{
		"VANTAGE_DATABASE_URL":     c.s.dbURL,
		"VANTAGE_SECRET_KEY":       c.s.secretKey,
		"VANTAGE_HTTP_ADDR":        httpAddr,
		"VANTAGE_GRPC_ADDR":        grpcAddr,
		"VANTAGE_PING_ADDR":        "127.0.0.1:0",
		"VANTAGE_METRICS_ADDR":     "127.0.0.1:0",
		"VANTAGE_AGENT_TOKEN":      c.s.agentToken,
		"VANTAGE_BOOTSTRAP_TOKEN":  c.s.token,
		"VANTAGE_NATS_URL":         c.s.ns.ClientURL(),
		"VANTAGE_NATS_STORE_DIR":   c.s.dir + "/unused-nats-store",
		"VANTAGE_LOG_LEVEL":        "debug",
		"VANTAGE_SHUTDOWN_TIMEOUT": cpShutdownTimeout.String(),
	}
	for k, v := range c.s.cpEnv {
		env[k] = v
	}
	return env
}

// start runs the control plane and waits until /readyz answers 200.
func (c *controlPlane) start(t *testing.T) {
	t.Helper()
	for try := 1; ; try++ {
		c.starts++
		p := startProc(t, fmt.Sprintf("%s-%d", c.name, c.starts), controlPlaneBin, c.s.dir, c.env())
		h, err := p.awaitLog("http listening", 60*time.Second)
		var g map[string]any
		if err == nil {
			g, err = p.awaitLog("grpc listening", 10*time.Second)
		}
		if err != nil {
			// A restart reuses the ports; should something have taken one meanwhile, retry.
			if try < 5 && p.exited() && p.log.contains("address already in use") {
				time.Sleep(200 * time.Millisecond)
				continue
			}
			t.Fatalf("control plane start: %v", err)
		}
		c.httpAddr, _ = h["addr"].(string)
		c.grpcAddr, _ = g["addr"].(string)
		if c.httpAddr == "" || c.grpcAddr == "" {
			t.Fatalf("control plane start: no addresses in %v and %v", h, g)
		}
		c.p = p
		break
	}
	testwait.Eventually(t, 30*time.Second, func() error {
		if c.p.exited() {
			t.Fatalf("control plane exited: %v", c.p.err)
		}
		return httpOK(c.s.client, "http://"+c.httpAddr+"/readyz")
	})
}

// stop sends SIGTERM and requires a clean exit within the shutdown timeout (plus slack); it
// returns how long the control plane took to stop.
func (c *controlPlane) stop(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	c.p.terminate(t, cpShutdownTimeout+20*time.Second)
	return time.Since(start)
}

// kill sends SIGKILL: a crash.
func (c *controlPlane) kill(t *testing.T) {
	t.Helper()
	c.p.kill(t)
}

// agentShutdownTimeout is the agents' VANTAGE_SHUTDOWN_TIMEOUT: how long running jobs may
// finish after SIGTERM before they are aborted and handed back.
const agentShutdownTimeout = 3 * time.Second

// agent is a vantage-agent process.
type agent struct {
	name        string
	regions     []string
	p           *proc
	httpAddr    string
	metricsAddr string
	client      *http.Client
}

// startAgent starts an agent without a browser serving regions and waits until it is ready:
// NATS connected, its consumers set up and registered with the control plane.
func (s *stack) startAgent(t *testing.T, name string, regions ...string) *agent {
	t.Helper()
	return s.startAgentWith(t, name, map[string]string{"VANTAGE_BROWSER_PATH": "none"}, regions...)
}

// startBrowserAgent starts an agent with a browser (Chromium found on the machine) serving
// regions, with the extra environment env, and waits until it is ready.
func (s *stack) startBrowserAgent(t *testing.T, name string, env map[string]string, regions ...string) *agent {
	t.Helper()
	a := s.startAgentWith(t, name, env, regions...)
	if !a.p.log.contains(`"browser":true`) {
		t.Fatalf("%s started without a browser (is chromium-headless-shell installed?)", name)
	}
	return a
}

// startAgentWith starts an agent serving regions with env added to (or replacing) the
// harness's environment, and waits until it is ready.
func (s *stack) startAgentWith(t *testing.T, name string, env map[string]string, regions ...string) *agent {
	t.Helper()
	full := map[string]string{
		"VANTAGE_NATS_URL":          s.ns.ClientURL(),
		"VANTAGE_CONTROLPLANE_ADDR": s.cp.grpcAddr,
		"VANTAGE_AGENT_TOKEN":       s.agentToken,
		"VANTAGE_REGIONS":           strings.Join(regions, ","),
		"VANTAGE_AGENT_ID":          name,
		"VANTAGE_HTTP_ADDR":         "127.0.0.1:0",
		"VANTAGE_METRICS_ADDR":      "127.0.0.1:0",
		"VANTAGE_LOG_LEVEL":         "debug",
		"VANTAGE_SHUTDOWN_TIMEOUT":  agentShutdownTimeout.String(),
	}
	for k, v := range env {
		full[k] = v
	}
	p := startProc(t, name, agentBin, s.dir, full)
	line := p.waitLog(t, "vantage agent starting", 30*time.Second)
	a := &agent{name: name, regions: regions, p: p, client: s.client}
	a.httpAddr, _ = line["http_addr"].(string)
	a.metricsAddr, _ = line["metrics_addr"].(string)
	if a.httpAddr == "" || a.metricsAddr == "" {
		t.Fatalf("%s: no http_addr or metrics_addr in its start-up line: %v", name, line)
	}
	a.waitReady(t)
	return a
}

func (a *agent) waitReady(t *testing.T) {
	t.Helper()
	testwait.Eventually(t, 30*time.Second, func() error {
		if a.p.exited() {
			t.Fatalf("%s exited: %v", a.name, a.p.err)
		}
		return httpOK(a.client, "http://"+a.httpAddr+"/readyz")
	})
}

func (a *agent) kill(t *testing.T)      { t.Helper(); a.p.kill(t) }
func (a *agent) terminate(t *testing.T) { t.Helper(); a.p.terminate(t, 30*time.Second) }

// metric is the sum of every series of the named metric on the agent's /metrics.
func (a *agent) metric(name string) (float64, error) {
	return scrapeMetric(a.client, a.name, "http://"+a.metricsAddr+"/metrics", name)
}

// metric is the sum of every series of the named metric on the control plane's /metrics.
func (c *controlPlane) metric(name string) (float64, error) {
	line, ok := c.p.log.find("metrics listening")
	if !ok {
		return 0, fmt.Errorf("%s logged no metrics address", c.p.name)
	}
	addr, _ := line["addr"].(string)
	return scrapeMetric(c.s.client, c.p.name, "http://"+addr+"/metrics", name)
}

// scrapeMetric is the sum of every series of the named metric on who's /metrics at u.
func scrapeMetric(client *http.Client, who, u, name string) (float64, error) {
	resp, err := client.Get(u)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s /metrics: %s", who, resp.Status)
	}
	var sum float64
	found := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		series, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if n, _, _ := strings.Cut(series, "{"); n != name {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q: %v", who, line, err)
		}
		sum += v
		found = true
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("%s exports no %s", who, name)
	}
	return sum, nil
}

func httpOK(c *http.Client, u string) error {
	resp, err := c.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("GET %s: %s %s", u, resp.Status, strings.TrimSpace(string(b)))
	}
	return nil
}

// --- the REST API ---

type envelope struct {
	Success bool            `json:"success"`
	Result  json.RawMessage `json:"result"`
	Errors  []struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"errors"`
}

// do sends one API request with the bootstrap token and returns the status and body.
func (s *stack) do(method, path string, body any) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+s.cp.httpAddr+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// call sends an API request and decodes the envelope's result into out; anything but a
// successful envelope with a 2xx status is an error.
func (s *stack) call(method, path string, body, out any) error {
	status, b, err := s.do(method, path, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("%s %s: %d, not an envelope: %s", method, path, status, b)
	}
	if status/100 != 2 || !env.Success {
		return fmt.Errorf("%s %s: %d %s", method, path, status, b)
	}
	if out != nil {
		if err := json.Unmarshal(env.Result, out); err != nil {
			return fmt.Errorf("%s %s: decode result: %w (%s)", method, path, err, env.Result)
		}
	}
	return nil
}

func (s *stack) mustCall(t *testing.T, method, path string, body, out any) {
	t.Helper()
	if err := s.call(method, path, body, out); err != nil {
		t.Fatal(err)
	}
}

type checkJSON struct {
	ID         string  `json:"id"`
	CheckType  string  `json:"check_type"`
	Status     string  `json:"status"`
	LastQueued *string `json:"last_queued"`
}

type incidentJSON struct {
	ID        string  `json:"id"`
	CheckID   string  `json:"check_id"`
	StartedAt string  `json:"started_at"`
	EndedAt   *string `json:"ended_at"`
}

type resultJSON struct {
	ID             string  `json:"id"`
	CheckedAt      string  `json:"checked_at"`
	CheckedFrom    string  `json:"checked_from"`
	Passing        bool    `json:"passing"`
	ResponseTimeMs float64 `json:"response_time_ms"`
	AttemptNumber  int     `json:"attempt_number"`
	IsFinalAttempt bool    `json:"is_final_attempt"`
	ResponseCode   *int    `json:"response_code"`
	ResultSummary  *string `json:"result_summary"`
	DNSStatus      *string `json:"dns_status"`
	FailureSource  *string `json:"failure_source"`
	FailureType    *string `json:"failure_type"`
	Resolver       *string `json:"resolver"`
	ParsedResponse *string `json:"parsed_response"`
	TCPStatus      *string `json:"tcp_status"`
}

// createCheck creates a check with POST path and returns its id.
func (s *stack) createCheck(t *testing.T, path string, body map[string]any) uuid.UUID {
	t.Helper()
	var c checkJSON
	s.mustCall(t, http.MethodPost, path, body, &c)
	id, err := uuid.Parse(c.ID)
	if err != nil {
		t.Fatalf("POST %s: id %q: %v", path, c.ID, err)
	}
	if c.Status != "PENDING" {
		t.Fatalf("POST %s: a new check has status %q, want PENDING", path, c.Status)
	}
	return id
}

// createChecks creates n checks with POST path, body(i) being the i-th one's body, from
// workers concurrent clients, and returns their ids in order.
func (s *stack) createChecks(t *testing.T, path string, n, workers int, body func(i int) map[string]any) []uuid.UUID {
	t.Helper()
	ids := make([]uuid.UUID, n)
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				var c checkJSON
				if errs[i] = s.call(http.MethodPost, path, body(i), &c); errs[i] != nil {
					return
				}
				ids[i], errs[i] = uuid.Parse(c.ID)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("creating %d checks: %v", n, err)
	}
	return ids
}

// setIntervals is setInterval for many checks at once: one UPDATE, locking the checks in id
// order as the evaluator does (an UPDATE in physical order can deadlock with ingest), and one
// change notification per check.
func (s *stack) setIntervals(t *testing.T, ids []uuid.UUID, seconds int) {
	t.Helper()
	s.exec(t, `UPDATE checks SET test_interval = $2, updated_at = now()
		WHERE id IN (SELECT id FROM checks WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE)`, ids, seconds)
	for _, id := range ids {
		if err := scheduler.Notify(s.nc, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

// setInterval sets a check's test_interval in SQL, below the API's 30s minimum, and tells the
// scheduler at once through the change notification, as the API does after a change.
func (s *stack) setInterval(t *testing.T, id uuid.UUID, seconds int) {
	t.Helper()
	s.setIntervals(t, []uuid.UUID{id}, seconds)
}

// status is a check's status as GET /v1/checks/{id} shows it.
func (s *stack) status(id uuid.UUID) (string, error) {
	var c checkJSON
	if err := s.call(http.MethodGet, "/v1/checks/"+id.String(), nil, &c); err != nil {
		return "", err
	}
	return c.Status, nil
}

// waitStatus polls the check's status until it is want, failing after within; it returns
// every distinct status seen on the way, in order.
func (s *stack) waitStatus(t *testing.T, id uuid.UUID, want string, within time.Duration) []string {
	t.Helper()
	var seen []string
	testwait.Eventually(t, within, func() error {
		st, err := s.status(id)
		if err != nil {
			return err
		}
		if len(seen) == 0 || seen[len(seen)-1] != st {
			seen = append(seen, st)
		}
		if st != want {
			return fmt.Errorf("check %s is %s, want %s (seen %v)", id, st, want, seen)
		}
		return nil
	})
	return seen
}

// incidents lists a check's incidents through the API, newest first.
func (s *stack) incidents(t *testing.T, kind string, id uuid.UUID) []incidentJSON {
	t.Helper()
	var out []incidentJSON
	s.mustCall(t, http.MethodGet, fmt.Sprintf("/v1/checks/%s/%s/incidents?per_page=100", kind, id), nil, &out)
	return out
}

// results lists every result of a check checked from since on, through the API, page by page.
func (s *stack) results(t *testing.T, kind string, id uuid.UUID, since time.Time) []resultJSON {
	t.Helper()
	from := since.Add(-time.Minute).UTC().Format(time.RFC3339)
	to := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	var all []resultJSON
	for page := 1; ; page++ {
		var out struct {
			CheckID    string       `json:"check_id"`
			CheckType  string       `json:"check_type"`
			Results    []resultJSON `json:"results"`
			ResultInfo struct {
				TotalCount int `json:"total_count"`
			} `json:"result_info"`
		}
		q := url.Values{"from": {from}, "to": {to}, "per_page": {"100"}, "page": {strconv.Itoa(page)}}
		s.mustCall(t, http.MethodGet, fmt.Sprintf("/v1/checks/%s/%s/results?%s", kind, id, q.Encode()), nil, &out)
		if out.CheckID != id.String() {
			t.Fatalf("results of %s name check %q", id, out.CheckID)
		}
		all = append(all, out.Results...)
		if len(out.Results) == 0 || len(all) >= out.ResultInfo.TotalCount {
			return all
		}
	}
}

// --- SQL ---

func (s *stack) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.db.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// count runs a SELECT count(*)-shaped query.
func (s *stack) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var n int
	if err := s.db.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// outbox counts a check's outbox rows of eventType.
func (s *stack) outbox(t *testing.T, id uuid.UUID, eventType string) int {
	t.Helper()
	return s.count(t, `SELECT count(*) FROM outbox WHERE check_id = $1 AND event_type = $2`, id, eventType)
}

// duplicateResults lists the (job, region, attempt) keys stored more than once for a check.
func (s *stack) duplicateResults(t *testing.T, id uuid.UUID) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := s.db.Query(ctx, `SELECT job_id::text, region, attempt_number, count(*) FROM check_results
		WHERE check_id = $1 GROUP BY 1, 2, 3 HAVING count(*) > 1`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var dups []string
	for rows.Next() {
		var job, region string
		var attempt, n int
		if err := rows.Scan(&job, &region, &attempt, &n); err != nil {
			t.Fatal(err)
		}
		dups = append(dups, fmt.Sprintf("job %s region %s attempt %d stored %d times", job, region, attempt, n))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return dups
}

// consumerInfo is the JetStream state of region's job consumer.
func (s *stack) consumerInfo(region string) (*jetstream.ConsumerInfo, error) {
	return s.consumerInfoNamed(wire.ConsumerName(region))
}

// consumerInfoNamed is the JetStream state of the job consumer named name.
func (s *stack) consumerInfoNamed(name string) (*jetstream.ConsumerInfo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := s.js.Consumer(ctx, wire.JobStream, name)
	if err != nil {
		return nil, err
	}
	return c.Info(ctx)
}
