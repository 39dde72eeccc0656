package jobqueue_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vantagehq/vantage/controlplane/internal/jobqueue"
	"github.com/vantagehq/vantage/controlplane/internal/jobqueue/jobqueuetest"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/wire"
)

func TestConnectStartsAnEmbeddedServerWithoutURL(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	ctx := context.Background()
	const password = "embedded-password-0123"
	nc, shutdown, err := jobqueue.Connect(ctx, jobqueue.Config{
		StoreDir: t.TempDir(), EmbeddedPort: -1, EmbeddedUser: "agent", EmbeddedPassword: password,
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown()
	if !strings.Contains(logs.String(), `"embedded":true`) || !strings.Contains(logs.String(), "nats://127.0.0.1:") {
		t.Errorf("start-up log does not say where the embedded server is: %s", logs.String())
	}
	if err := jobqueue.Ping(ctx, nc); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), password) {
		t.Error("the embedded server's password reached the log")
	}
	// Agents reach the embedded server over TCP, with its credentials only.
	if anon, err := nats.Connect(nc.ConnectedUrl()); err == nil {
		anon.Close()
		t.Error("the embedded server let an anonymous client in")
	}
	agent, err := nats.Connect(nc.ConnectedUrl(), nats.UserInfo("agent", password))
	if err != nil {
		t.Fatalf("agent connection to %s: %v", nc.ConnectedUrl(), err)
	}
	defer agent.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := jobqueue.EnsureStream(ctx, js); err != nil {
		t.Fatal(err)
	}
}

func TestConnectToURL(t *testing.T) {
	t.Parallel()
	ns := jobqueuetest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	nc, shutdown, err := jobqueue.Connect(ctx, jobqueue.Config{URL: ns.ClientURL()})
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown()
	if err := jobqueue.Ping(ctx, nc); err != nil {
		t.Fatal(err)
	}
	shutdown()
	if err := jobqueue.Ping(ctx, nc); err == nil {
		t.Error("ping succeeded on a closed connection")
	}
	if _, _, err := jobqueue.Connect(ctx, jobqueue.Config{URL: "nats://user:hunter2@127.0.0.1:1"}); err == nil ||
		strings.Contains(err.Error(), "hunter2") {
		t.Errorf("connecting to nothing: %v (want an error without the password)", err)
	}
}

func TestEnsureStreamIsIdempotentAndDeduplicates(t *testing.T) {
	t.Parallel()
	_, _, js := jobqueuetest.NewStream(t) // EnsureStream once
	ctx := context.Background()
	if err := jobqueue.EnsureStream(ctx, js); err != nil { // and again, as every replica does
		t.Fatalf("second EnsureStream: %v", err)
	}
	st, err := js.Stream(ctx, wire.JobStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := info.Config
	if c.Retention != jetstream.WorkQueuePolicy || c.MaxAge != wire.JobMaxAge || c.Duplicates != jobqueue.DuplicateWindow ||
		len(c.Subjects) != 1 || c.Subjects[0] != "vantage.jobs.>" {
		t.Errorf("stream config: retention %v max age %v duplicates %v subjects %v", c.Retention, c.MaxAge, c.Duplicates, c.Subjects)
	}
	for _, r := range check.Regions {
		cons, err := js.Consumer(ctx, wire.JobStream, wire.ConsumerName(r))
		if err != nil {
			t.Fatalf("consumer of %s: %v", r, err)
		}
		ci := cons.CachedInfo().Config
		if ci.FilterSubject != wire.JobSubject(r) || ci.AckPolicy != jetstream.AckExplicitPolicy || ci.AckWait != wire.JobAckWait ||
			ci.MaxDeliver != jobqueue.MaxDeliver || ci.Durable != wire.ConsumerName(r) {
			t.Errorf("consumer %s: %+v", r, ci)
		}
		bcons, err := js.Consumer(ctx, wire.JobStream, wire.BrowserConsumerName(r))
		if err != nil {
			t.Fatalf("browser consumer of %s: %v", r, err)
		}
		if bi := bcons.CachedInfo().Config; bi.FilterSubject != wire.BrowserJobSubject(r) || bi.AckPolicy != jetstream.AckExplicitPolicy {
			t.Errorf("browser consumer %s: %+v", r, bi)
		}
	}

	// The same job published twice (a scheduler fail-over) is stored once.
	for range 2 {
		if _, err := js.Publish(ctx, "vantage.jobs.eu-west-2", []byte("job"), jetstream.WithMsgID("run-1/eu-west-2")); err != nil {
			t.Fatal(err)
		}
	}
	info, err = st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Errorf("stream holds %d messages after a duplicate publish, want 1", info.State.Msgs)
	}
	// Work-queue retention: an acked job is gone.
	cons, _ := js.Consumer(ctx, wire.JobStream, wire.ConsumerName("cloud:eu-west-2"))
	msgs, err := cons.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for m := range msgs.Messages() {
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
	}
	info, _ = st.Info(ctx)
	if info.State.Msgs != 0 {
		t.Errorf("stream holds %d messages after the ack, want 0", info.State.Msgs)
	}
}

func TestEmbeddedServerListensOnLoopbackOnly(t *testing.T) {
	t.Parallel()
	for _, host := range []string{"0.0.0.0", "192.0.2.1", "::", "example.com"} {
		_, err := jobqueue.StartEmbedded(jobqueue.EmbeddedOptions{Host: host, Port: -1, StoreDir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("host %q: %v, want a refusal naming loopback", host, err)
		}
	}
	// Without a configured password, Connect makes one up: nobody else gets in.
	ctx := context.Background()
	nc, shutdown, err := jobqueue.Connect(ctx, jobqueue.Config{StoreDir: t.TempDir(), EmbeddedPort: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown()
	for _, opt := range []nats.Option{nats.Name("anonymous"), nats.UserInfo("vantage", "")} {
		if c, err := nats.Connect(nc.ConnectedUrl(), opt); err == nil {
			c.Close()
			t.Error("a client without the generated password got in")
		}
	}
}
