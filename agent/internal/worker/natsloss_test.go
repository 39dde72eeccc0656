package worker_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/vantagehq/vantage/agent/internal/agenttest"
	"github.com/vantagehq/vantage/agent/internal/worker"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// startNATSAt starts a JetStream server on 127.0.0.1:port storing in dir, stopped when the
// test ends (if it still runs).
func startNATSAt(t *testing.T, port int, dir string) *server.Server {
	t.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	return ns
}

// TestAgentSurvivesNATSLosingItsStore: NATS is replaced by a server with an empty store. While
// the job stream is gone the worker says it is not ready; once the control plane re-creates
// the stream, the worker re-creates its consumer by itself, is ready again and runs jobs.
func TestAgentSurvivesNATSLosingItsStore(t *testing.T) {
	t.Parallel()
	first := agenttest.StartNATS(t)
	port := first.Addr().(*net.TCPAddr).Port
	_, js := agenttest.Connect(t, first)
	agenttest.CreateJobStream(t, js)
	e := &env{ns: first, js: js, cp: agenttest.StartControlPlane(t, token)}
	target := target(t, func(int) string { return "ok" })
	a := e.startAgent(t, "agent-a", newTCPRunner(0), worker.Config{})
	agenttest.PublishJob(t, e.js, tcpJob("job-before", usEast, target, 1))
	waitStreamMsgs(t, e, 0)

	// The server is replaced: same address, empty store.
	first.Shutdown()
	first.WaitForShutdown()
	second := startNATSAt(t, port, t.TempDir())
	testwait.Eventually(t, 20*time.Second, func() error {
		if a.w.Ready() {
			return errors.New("the worker says ready, but its consumer is gone with the store")
		}
		return nil
	})

	// The control plane re-creates the stream (not the consumers).
	_, js2 := agenttest.Connect(t, second)
	agenttest.CreateJobStream(t, js2)
	e.ns, e.js = second, js2
	testwait.Eventually(t, 20*time.Second, func() error {
		if !a.w.Ready() {
			return errors.New("worker not ready again")
		}
		return nil
	})
	agenttest.PublishJob(t, js2, tcpJob("job-after", usEast, target, 1))
	waitStreamMsgs(t, e, 0)
	testwait.Eventually(t, 10*time.Second, func() error {
		if e.cp.Stored(key("job-after", usEast, 1)) == nil {
			return errors.New("the job published after the replacement was not run")
		}
		return nil
	})
}
