package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/testwait"
	"github.com/vantagehq/vantage/pkg/wire"
)

// natsAt starts a NATS server on 127.0.0.1:port (0: a free one), with JetStream storing in a
// fresh directory when jetStream is set.
func natsAt(t *testing.T, port int, jetStream bool) *server.Server {
	t.Helper()
	if port == 0 {
		port = -1
	}
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: jetStream,
		StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
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

// TestJobStreamComesBackAfterNATSLosesItsStore: NATS is replaced under a running control plane.
// While the job stream cannot exist (a server without JetStream) /readyz says not ready;
// once a JetStream server with an empty store answers, the control plane re-creates the stream
// and every region's consumer by itself and is ready again.
func TestJobStreamComesBackAfterNATSLosesItsStore(t *testing.T) {
	t.Parallel()
	first := natsAt(t, 0, true)
	port := first.Addr().(*net.TCPAddr).Port
	s := startServe(t, testServeEnv(t, map[string]string{"VANTAGE_NATS_URL": first.ClientURL()}))

	first.Shutdown()
	first.WaitForShutdown()
	second := natsAt(t, port, false) // NATS is back, its JetStream is not
	testwait.Eventually(t, 20*time.Second, func() error {
		if second.NumClients() == 0 {
			return fmt.Errorf("the control plane did not reconnect to NATS")
		}
		return nil
	})
	// Connected again, but without the job stream: not ready, for as long as that lasts.
	for range 5 {
		code, body := s.readyz()
		if code != http.StatusServiceUnavailable {
			t.Fatalf("/readyz = %d %s while NATS has no job stream, want 503", code, body)
		}
		if !strings.Contains(body, "nats") {
			t.Errorf("/readyz = %d %s: should say NATS is what is missing", code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}

	second.Shutdown()
	second.WaitForShutdown()
	third := natsAt(t, port, true) // a new server, empty store
	nc, err := nats.Connect(third.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		st, err := js.Stream(ctx, wire.JobStream)
		if err != nil {
			return fmt.Errorf("stream %s: %v", wire.JobStream, err)
		}
		for _, r := range check.Regions {
			if _, err := st.Consumer(ctx, wire.ConsumerName(r)); err != nil {
				return fmt.Errorf("consumer %s: %v", wire.ConsumerName(r), err)
			}
		}
		return nil
	})
	s.waitReady(t, 20*time.Second)
}
