// Package jobqueuetest starts a real nats-server with JetStream inside the test process, on a
// random port with its storage in the test's temporary directory, and stops it when the test
// ends.
package jobqueuetest

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vantagehq/vantage/controlplane/internal/jobqueue"
)

// NewServer starts an in-process nats-server with JetStream on 127.0.0.1 and a free port.
func NewServer(t testing.TB) *server.Server {
	t.Helper()
	ns, err := jobqueue.StartEmbedded(jobqueue.EmbeddedOptions{Port: -1, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatalf("jobqueuetest: %v", err)
	}
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	return ns
}

// Connect opens a client connection to ns over TCP, closed when the test ends.
func Connect(t testing.TB, ns *server.Server) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(ns.ClientURL(), nats.Name(t.Name()))
	if err != nil {
		t.Fatalf("jobqueuetest: connect: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// NewStream starts a server, connects to it and declares the job stream and its consumers.
func NewStream(t testing.TB) (*server.Server, *nats.Conn, jetstream.JetStream) {
	t.Helper()
	ns := NewServer(t)
	nc := Connect(t, ns)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jobqueuetest: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := jobqueue.EnsureStream(ctx, js); err != nil {
		t.Fatalf("jobqueuetest: %v", err)
	}
	return ns, nc, js
}
