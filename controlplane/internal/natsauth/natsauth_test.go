package natsauth

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vantagehq/vantage/controlplane/internal/jobqueue"
	"github.com/vantagehq/vantage/pkg/wire"
)

const (
	eu = "cloud:eu-west-2"
	us = "cloud:us-east-1"
)

var passwords = map[string]string{
	ControlPlaneUser: "controlplane-password-0123",
	AgentUser(eu):    "eu-agents-password-0123",
	AgentUser(us):    "us-agents-password-0123",
}

// startHub starts a nats-server with JetStream from the generated authorization, exactly as
// an operator includes it, and (leaf) a leaf node listener. It returns the server.
func startHub(t *testing.T, leaf bool) *server.Server {
	t.Helper()
	auth, err := Config([]string{eu, us}, passwords, "test deployment")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "vantage-auth.conf"), []byte(auth), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("listen: 127.0.0.1:-1\nserver_name: hub\njetstream {store_dir: %q}\ninclude ./vantage-auth.conf\n",
		filepath.Join(dir, "js"))
	if leaf {
		conf += "leafnodes {listen: 127.0.0.1:-1}\n"
	}
	return startConf(t, dir, conf)
}

func startConf(t *testing.T, dir, conf string) *server.Server {
	t.Helper()
	file := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(file)
	if err != nil {
		t.Fatalf("nats-server does not take the configuration: %v\n%s", err, conf)
	}
	opts.NoLog, opts.NoSigs = true, true
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	return ns
}

// client is a connection and its JetStream.
type client struct {
	nc *nats.Conn
	js jetstream.JetStream
}

func connect(t *testing.T, url, user string) *client {
	t.Helper()
	c := &client{}
	var opts []nats.Option
	if pw := passwords[user]; pw != "" {
		opts = append(opts, nats.UserInfo(user, pw))
	}
	var err error
	if c.nc, err = nats.Connect(url, opts...); err != nil {
		t.Fatalf("connect as %q: %v", user, err)
	}
	t.Cleanup(c.nc.Close)
	if user == ControlPlaneUser {
		c.js, err = jetstream.New(c.nc)
	} else { // an agent of a region account, or on its leaf node
		c.js, err = jetstream.NewWithAPIPrefix(c.nc, APIPrefix)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// queueJobs makes the control plane declare the stream and publish one job and one browser
// job per region.
func queueJobs(t *testing.T, cp *client) {
	t.Helper()
	ctx := context.Background()
	if err := jobqueue.EnsureStream(ctx, cp.js); err != nil {
		t.Fatalf("the control plane's user cannot declare the stream: %v", err)
	}
	for _, r := range []string{eu, us} {
		for _, subject := range []string{wire.JobSubject(r), wire.BrowserJobSubject(r)} {
			if _, err := cp.js.Publish(ctx, subject, []byte("job of "+subject)); err != nil {
				t.Fatalf("the control plane cannot publish a job: %v", err)
			}
		}
	}
}

func pending(t *testing.T, cp *client, consumer string) uint64 {
	t.Helper()
	c, err := cp.js.Consumer(context.Background(), wire.JobStream, consumer)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.NumPending + uint64(info.NumAckPending)
}

// pull takes one job of consumer as an agent does, and acks it, within a few seconds.
func pull(ctx context.Context, c *client, consumer string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cons, err := c.js.Consumer(ctx, wire.JobStream, consumer)
	if err != nil {
		return "", err
	}
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		return "", err
	}
	if m, ok := <-batch.Messages(); ok {
		if err := m.InProgress(); err != nil {
			return "", err
		}
		if err := m.DoubleAck(ctx); err != nil {
			return "", err
		}
		return string(m.Data()), nil
	}
	if batch.Error() != nil {
		return "", batch.Error()
	}
	return "", errors.New("no job")
}

func TestRegionAccountsAgainstNATSServer(t *testing.T) {
	t.Parallel()
	hub := startHub(t, false)
	cp := connect(t, hub.ClientURL(), ControlPlaneUser)
	queueJobs(t, cp)
	agent := connect(t, hub.ClientURL(), AgentUser(eu))
	ctx := context.Background()

	t.Run("pulls and acks its region's jobs", func(t *testing.T) {
		for _, consumer := range []string{wire.ConsumerName(eu), wire.BrowserConsumerName(eu)} {
			got, err := pull(ctx, agent, consumer)
			if err != nil || !strings.HasPrefix(got, "job of vantage.jobs.eu-west-2") {
				t.Fatalf("%s: %q, %v", consumer, got, err)
			}
			if n := pending(t, cp, consumer); n != 0 {
				t.Errorf("%s: %d jobs left after the ack", consumer, n)
			}
		}
	})
	t.Run("cannot pull another region's jobs", func(t *testing.T) {
		for _, consumer := range []string{wire.ConsumerName(us), wire.BrowserConsumerName(us)} {
			if got, err := pull(ctx, agent, consumer); err == nil {
				t.Fatalf("an agent of %s pulled %q from %s", eu, got, consumer)
			}
			// Straight to the pull subject, without looking the consumer up first.
			for _, prefix := range []string{APIPrefix, "$JS.API"} {
				if m, err := agent.nc.Request(prefix+".CONSUMER.MSG.NEXT.VANTAGE_JOBS."+consumer, []byte(`{"batch":1}`), time.Second); err == nil && strings.Contains(string(m.Data), "job of") {
					t.Errorf("a pull request on %s got %q", consumer, m.Data)
				}
			}
			if n := pending(t, cp, consumer); n != 1 {
				t.Errorf("%s: %d jobs, want its one job untouched", consumer, n)
			}
		}
	})
	t.Run("sees no job and no other region's replies", func(t *testing.T) {
		all, err := agent.nc.SubscribeSync(">")
		if err != nil {
			t.Fatal(err)
		}
		if err := agent.nc.Flush(); err != nil {
			t.Fatal(err)
		}
		if _, err := cp.js.Publish(ctx, wire.JobSubject(us), []byte("job of vantage.jobs.us-east-1 (second)")); err != nil {
			t.Fatal(err)
		}
		usAgent := connect(t, hub.ClientURL(), AgentUser(us))
		if got, err := pull(ctx, usAgent, wire.ConsumerName(us)); err != nil || !strings.Contains(got, "us-east-1") {
			t.Fatalf("the us-east-1 agent: %q, %v", got, err)
		}
		for {
			m, err := all.NextMsg(300 * time.Millisecond)
			if err != nil {
				break
			}
			if strings.Contains(string(m.Data), "job of") {
				t.Errorf("an agent of eu-west-2 received %q on %s", m.Data, m.Subject)
			}
		}
	})
	t.Run("cannot publish jobs or touch the stream", func(t *testing.T) {
		before := pending(t, cp, wire.ConsumerName(us))
		if err := agent.nc.Publish(wire.JobSubject(us), []byte("forged job")); err != nil {
			t.Fatal(err)
		}
		if err := agent.nc.Flush(); err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		if err := agent.js.DeleteStream(cctx, wire.JobStream); err == nil {
			t.Error("an agent deleted the job stream")
		}
		if _, err := cp.js.Stream(ctx, wire.JobStream); err != nil {
			t.Errorf("the job stream: %v", err)
		}
		if n := pending(t, cp, wire.ConsumerName(us)); n != before {
			t.Errorf("us-east-1 has %d jobs, had %d: a forged job arrived", n, before)
		}
	})
	t.Run("creates its own consumer only, filtering its own subject", func(t *testing.T) {
		if err := cp.js.DeleteConsumer(ctx, wire.JobStream, wire.ConsumerName(eu)); err != nil {
			t.Fatal(err)
		}
		create := func(cc jetstream.ConsumerConfig) error {
			cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			_, err := agent.js.CreateConsumer(cctx, wire.JobStream, cc)
			return err
		}
		wrong := jobqueue.ConsumerConfig(eu, 1)
		wrong.FilterSubject = wire.JobSubject("cloud:ap-south-1")
		if err := create(wrong); err == nil {
			t.Error("an agent of eu-west-2 created its consumer filtering another region's jobs")
		}
		if err := create(jobqueue.ConsumerConfig("cloud:ap-south-1", 1)); err == nil {
			t.Error("an agent of eu-west-2 created another region's consumer")
		}
		if err := create(jobqueue.ConsumerConfig(eu, 1)); err != nil {
			t.Errorf("an agent cannot create its region's missing consumer: %v", err)
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		if _, err := nats.Connect(hub.ClientURL(), nats.UserInfo(AgentUser(eu), passwords[AgentUser(us)])); err == nil {
			t.Error("connected with another user's password")
		}
	})
}

// TestLeafNodeOfARegion connects a region's leaf node to the hub with the region's user: the
// region's agents connect to the leaf node (no credentials of their own there) and pull their
// jobs through it, and the hub enforces the region's permissions on the leaf connection.
func TestLeafNodeOfARegion(t *testing.T) {
	t.Parallel()
	hub := startHub(t, true)
	cp := connect(t, hub.ClientURL(), ControlPlaneUser)
	queueJobs(t, cp)

	vz, err := hub.Varz(nil)
	if err != nil || vz.LeafNode.Port <= 0 {
		t.Fatalf("the hub has no leaf node listener: %v", err)
	}
	leafURL := fmt.Sprintf("nats-leaf://%s:%s@127.0.0.1:%d", AgentUser(eu), passwords[AgentUser(eu)], vz.LeafNode.Port)
	dir := t.TempDir()
	leaf := startConf(t, dir, fmt.Sprintf("listen: 127.0.0.1:-1\nserver_name: leaf-eu\nleafnodes {remotes: [{url: %q}]}\n", leafURL))
	deadline := time.Now().Add(10 * time.Second)
	for leaf.NumLeafNodes() == 0 || hub.NumLeafNodes() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the leaf node did not connect to the hub")
		}
		time.Sleep(20 * time.Millisecond)
	}
	agent := connect(t, leaf.ClientURL(), "leaf")
	ctx := context.Background()
	// Interest crosses the leaf connection shortly after the subscription.
	var got string
	for range 20 {
		if got, err = pull(ctx, agent, wire.ConsumerName(eu)); err == nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil || !strings.HasPrefix(got, "job of vantage.jobs.eu-west-2") {
		t.Fatalf("through the leaf node: %q, %v", got, err)
	}
	if got, err := pull(ctx, agent, wire.ConsumerName(us)); err == nil {
		t.Errorf("through eu-west-2's leaf node, a us-east-1 job was pulled: %q", got)
	}
	if n := pending(t, cp, wire.ConsumerName(us)); n != 1 {
		t.Errorf("us-east-1 has %d jobs, want its one job untouched", n)
	}
	before := pending(t, cp, wire.ConsumerName(us))
	if err := agent.nc.Publish(wire.JobSubject(us), []byte("forged job")); err != nil {
		t.Fatal(err)
	}
	if err := agent.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // a forged job would have crossed by now
	if n := pending(t, cp, wire.ConsumerName(us)); n != before {
		t.Errorf("a job published on the leaf node reached the hub's stream (%d, was %d)", n, before)
	}
}
