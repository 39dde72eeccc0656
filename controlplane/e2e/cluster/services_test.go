//go:build cluster

package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// --- PostgreSQL: an instance of the test's own on the test host ---

type postgres struct {
	bin  string // folder of initdb and postgres
	dir  string
	port int
	cred *syscall.Credential
	p    *proc
}

// newPostgres initializes a cluster in dir as the postgres user, listening on the bridge.
func (c *cluster) newPostgres(t *testing.T) *postgres {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		t.Fatal("no /usr/lib/postgresql/*/bin/initdb: install PostgreSQL's server package")
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("the test's PostgreSQL runs as user postgres: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	pg := &postgres{bin: filepath.Dir(bins[len(bins)-1]), dir: filepath.Join(c.dir, "pg"),
		cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	if err := os.Mkdir(pg.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(pg.dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(pg.bin, "initdb"), "-D", pg.dir, "-A", "trust", "-U", "postgres", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: pg.cred}
	cmd.Dir = pg.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	hba, err := os.OpenFile(filepath.Join(pg.dir, "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fmt.Fprintf(hba, "host all all %s0/24 trust\n", subnet)
	hba.Close()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", hostIP+":0")
	if err != nil {
		t.Fatal(err)
	}
	pg.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	return pg
}

func (pg *postgres) url(db string) string {
	return fmt.Sprintf("postgres://postgres@%s:%d/%s?sslmode=disable", hostIP, pg.port, db)
}

// start runs the server and waits until it accepts connections.
func (pg *postgres) start(t *testing.T, c *cluster) {
	t.Helper()
	pg.p = c.procs.start(t, c.logs, "postgres", "", nil, pg.cred, filepath.Join(pg.bin, "postgres"), "-D", pg.dir,
		"-p", strconv.Itoa(pg.port), "-c", "listen_addresses="+hostIP, "-c", "unix_socket_directories="+pg.dir,
		"-c", "fsync=off", "-c", "max_connections=200")
	if _, err := waitFor(60*time.Second, 100*time.Millisecond, func() error {
		if pg.p.exited() {
			t.Fatalf("postgres exited: %v\n%s", pg.p.err, tail(pg.p.log, 30))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, pg.url("postgres"))
		if err != nil {
			return err
		}
		return conn.Close(ctx)
	}); err != nil {
		t.Fatalf("postgres: %v", err)
	}
}

// stop shuts the server down fast (SIGINT: sessions ended, a clean checkpoint).
func (pg *postgres) stop(t *testing.T) {
	t.Helper()
	if err := pg.p.stop(syscall.SIGINT, 60*time.Second); err != nil {
		t.Fatal(err)
	}
}

// --- NATS: a 3-member JetStream cluster, one member per host ---

type natsNode struct {
	name string
	h    *host
	conf string
	p    *proc
}

func (n *natsNode) clientURL() string  { return "nats://" + n.h.ip + ":4222" }
func (n *natsNode) monitorURL() string { return "http://" + n.h.ip + ":8222" }

// writeConfig writes the member's configuration: JetStream with its own store, routes to
// every member.
func (n *natsNode) writeConfig(t *testing.T, dir string, all []*host) {
	t.Helper()
	var routes []string
	for _, h := range all {
		routes = append(routes, fmt.Sprintf("nats://%s:6222", h.ip))
	}
	conf := fmt.Sprintf(`server_name: %s
listen: "%s:4222"
http: "%s:8222"
jetstream {
  store_dir: %q
  max_memory_store: 64MB
  max_file_store: 1GB
}
cluster {
  name: vantage-test
  listen: "%s:6222"
  routes: [%s]
}
`, n.name, n.h.ip, n.h.ip, filepath.Join(dir, "nats-"+n.name), n.h.ip, strings.Join(routes, ", "))
	n.conf = filepath.Join(dir, n.name+".conf")
	if err := os.WriteFile(n.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (n *natsNode) start(t *testing.T, c *cluster) {
	t.Helper()
	n.p = c.procs.start(t, c.logs, "nats-"+n.name, n.h.ns, nil, nil, c.natsBin, "-c", n.conf)
}

// waitHealthy waits until the member answers its health check (JetStream current in the
// cluster).
func (n *natsNode) waitHealthy(t *testing.T, within time.Duration) time.Duration {
	t.Helper()
	d, err := waitFor(within, 200*time.Millisecond, func() error {
		if n.p.exited() {
			t.Fatalf("nats %s exited: %v\n%s", n.name, n.p.err, tail(n.p.log, 30))
		}
		return httpOK(n.monitorURL() + "/healthz")
	})
	if err != nil {
		t.Fatalf("nats %s: %v\n%s", n.name, err, tail(n.p.log, 30))
	}
	return d
}

// --- the control planes and the agents ---

type controlPlane struct {
	name string
	h    *host
	env  map[string]string
	p    *proc
	runs int
}

func (cp *controlPlane) api() string     { return "http://" + cp.h.ip + ":8080" }
func (cp *controlPlane) metrics() string { return "http://" + cp.h.ip + ":9100/metrics" }

func (cp *controlPlane) start(t *testing.T, c *cluster) {
	t.Helper()
	cp.runs++
	cp.p = c.procs.start(t, c.logs, fmt.Sprintf("%s-run%d", cp.name, cp.runs), cp.h.ns, cp.env, nil, c.cpBin)
}

func (cp *controlPlane) waitReady(t *testing.T, within time.Duration) {
	t.Helper()
	if _, err := waitFor(within, 200*time.Millisecond, func() error {
		if cp.p.exited() {
			t.Fatalf("%s exited: %v\n%s", cp.name, cp.p.err, tail(cp.p.log, 40))
		}
		return httpOK(cp.api() + "/readyz")
	}); err != nil {
		t.Fatalf("%s: %v\n%s", cp.name, err, tail(cp.p.log, 40))
	}
}

type agent struct {
	region string
	h      *host
	env    map[string]string
	p      *proc
}

func (a *agent) readyURL() string { return "http://" + a.h.ip + ":8081/readyz" }

func (a *agent) start(t *testing.T, c *cluster) {
	t.Helper()
	a.p = c.procs.start(t, c.logs, "agent-"+a.h.name, a.h.ns, a.env, nil, c.agentBin)
}

func (a *agent) waitReady(t *testing.T, within time.Duration) {
	t.Helper()
	if _, err := waitFor(within, 200*time.Millisecond, func() error {
		if a.p.exited() {
			t.Fatalf("agent %s exited: %v\n%s", a.region, a.p.err, tail(a.p.log, 40))
		}
		return httpOK(a.readyURL())
	}); err != nil {
		t.Fatalf("agent %s: %v\n%s", a.region, err, tail(a.p.log, 40))
	}
}

// adminCreateAgentToken issues a token bound to region with the control plane's admin
// command (run on the first control plane's host) and returns its secret.
func (c *cluster) adminCreateAgentToken(t *testing.T, region string) string {
	t.Helper()
	cp := c.cps[0]
	cmd := exec.Command("ip", "netns", "exec", cp.h.ns, c.cpBin, "admin", "create-agent-token", "--regions", region, "--name", region)
	for k, v := range cp.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, "PATH="+os.Getenv("PATH"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("admin create-agent-token %s: %v\n%s", region, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}
