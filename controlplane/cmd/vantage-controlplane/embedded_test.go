package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vantagehq/vantage/pkg/wire"
)

// freeLoopbackAddr is a loopback address nobody listens on right now.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestTwoEmbeddedNATSServersSideBySide: two control planes with embedded NATS run on one
// machine, each on its own configured loopback port, and each server accepts only its
// credentials — the configured password, or one generated for the run.
func TestTwoEmbeddedNATSServersSideBySide(t *testing.T) {
	t.Parallel()
	const password = "local-run-password-0123"
	addrA, addrB := freeLoopbackAddr(t), freeLoopbackAddr(t)
	a := startServe(t, testServeEnv(t, map[string]string{"VANTAGE_NATS_URL": "",
		"VANTAGE_NATS_EMBEDDED_ADDR": addrA, "VANTAGE_NATS_EMBEDDED_PASSWORD": password}))
	b := startServe(t, testServeEnv(t, map[string]string{"VANTAGE_NATS_URL": "", "VANTAGE_NATS_EMBEDDED_ADDR": addrB}))
	for _, s := range []*served{a, b} {
		if strings.Contains(s.logs.String(), password) {
			t.Error("the NATS password reached the log")
		}
	}

	// Nobody gets in without credentials, or with wrong ones.
	for _, url := range []string{"nats://" + addrA, "nats://" + addrB, "nats://vantage:wrong-password-000000@" + addrA,
		"nats://vantage:" + password + "@" + addrB} {
		if nc, err := nats.Connect(url, nats.Timeout(3*time.Second)); err == nil {
			nc.Close()
			t.Errorf("%s: connected, want refused", strings.Replace(url, password, "…", 1))
		}
	}
	// The configured credentials reach A's JetStream, with the job stream in it.
	nc, err := nats.Connect("nats://vantage:"+password+"@"+addrA, nats.Timeout(3*time.Second))
	if err != nil {
		t.Fatalf("A with its credentials: %v", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := js.Stream(ctx, wire.JobStream); err != nil {
		t.Fatalf("job stream on A's embedded server: %v", err)
	}
}
