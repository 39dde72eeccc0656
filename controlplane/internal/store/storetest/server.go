package storetest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Server is a PostgreSQL instance of one test's own (initdb and pg_ctl into a temporary
// directory, a free loopback port, trust authentication), for tests that do to the database
// what they must not do to the machine's: freeze it, stop it. It is stopped and removed when
// the test ends.
type Server struct {
	t    testing.TB
	bin  string // the directory of initdb, pg_ctl and postgres
	data string
	port int
	cred *syscall.Credential // the postgres user's, when the test runs as root (initdb refuses root)
}

// NewServer starts a PostgreSQL instance from the newest /usr/lib/postgresql/*/bin. Missing
// binaries fail the test.
func NewServer(t testing.TB) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("needs PostgreSQL binaries (a server of its own); skipped under -short (make test-short)")
	}
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		t.Fatal("storetest: no /usr/lib/postgresql/*/bin/initdb: install PostgreSQL")
	}
	sort.Slice(bins, func(i, j int) bool { return pgVersion(bins[i]) < pgVersion(bins[j]) })
	s := &Server{t: t, bin: filepath.Dir(bins[len(bins)-1])}
	// Not t.TempDir: its parents are private to the test's user, and the server may run as
	// the postgres user.
	dir, err := os.MkdirTemp("", "vantage-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s.data = filepath.Join(dir, "data")
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("storetest: running as root needs a postgres user to run the server as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	s.port = freePort(t)
	s.run("initdb", "-D", s.data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale", "C")
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -c port=%d -c unix_socket_directories=%s -c fsync=off", s.port, dir)
	s.run("pg_ctl", "-D", s.data, "-o", opts, "-l", filepath.Join(dir, "server.log"), "-w", "-t", "60", "start")
	t.Cleanup(func() {
		s.Thaw() // a test that failed while the server was frozen
		s.run("pg_ctl", "-D", s.data, "-m", "immediate", "-w", "stop")
	})
	return s
}

// URL is the server's URL for database db.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// NewDatabase creates a migrated database on the server and returns its URL.
func (s *Server) NewDatabase() string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		s.t.Fatalf("storetest: %v", err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `CREATE DATABASE vantage`); err != nil {
		s.t.Fatalf("storetest: %v", err)
	}
	pool, err := pgxpool.New(ctx, s.URL("vantage"))
	if err != nil {
		s.t.Fatalf("storetest: %v", err)
	}
	defer pool.Close()
	if err := store.Migrate(ctx, pool); err != nil {
		s.t.Fatalf("storetest: migrate: %v", err)
	}
	return s.URL("vantage")
}

// Freeze stops every process of the server with SIGSTOP: connections stay open and new ones
// are accepted by the kernel, but nothing answers — a hung database host.
func (s *Server) Freeze() { s.t.Helper(); s.signal(syscall.SIGSTOP) }

// Thaw resumes the server's processes with SIGCONT.
func (s *Server) Thaw() { s.t.Helper(); s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	pids := s.pids()
	for _, pid := range pids {
		if err := syscall.Kill(pid, sig); err != nil && err != syscall.ESRCH {
			s.t.Errorf("storetest: signal %d: %v", pid, err)
		}
	}
}

// pids is the postmaster and its children.
func (s *Server) pids() []int {
	b, err := os.ReadFile(filepath.Join(s.data, "postmaster.pid"))
	if err != nil {
		return nil
	}
	first, _, _ := strings.Cut(string(b), "\n")
	master, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return nil
	}
	pids := []int{master}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range stats {
		b, err := os.ReadFile(st) //nolint:gosec // G304: /proc, to find stray servers
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so read after the last ')'.
		rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == master {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(st)))
			pids = append(pids, pid)
		}
	}
	return slices.Compact(pids)
}

// run runs one of the server's programs, as the postgres user when the test runs as root.
func (s *Server) run(prog string, args ...string) {
	s.t.Helper()
	cmd := exec.Command(filepath.Join(s.bin, prog), args...) //nolint:gosec // G204: PostgreSQL's own programs
	cmd.Dir = os.TempDir()
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("storetest: %s %s: %v\n%s", prog, strings.Join(args, " "), err, out)
	}
}

func pgVersion(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
