package jobqueue

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/wire"
)

const (
	// DuplicateWindow is how long JetStream remembers a job's Nats-Msg-Id (wire.JobMsgID): a
	// run republished within it — by a scheduler that took over leadership and could not know
	// whether its predecessor had queued the run — is dropped as a duplicate. It covers the
	// scheduler's catch-up window plus a fail-over, and stays below wire.JobMaxAge.
	DuplicateWindow = 2 * time.Minute
	// MaxDeliver is how many times a job is delivered before JetStream gives up on it (agents
	// crashing on it, or never acking); by then its deadline has long passed.
	MaxDeliver = 5
	// MaxAckPending bounds the delivered-but-unacked jobs of one region's consumer. Agents
	// fetch only as many jobs as they have free probe slots, so this is a safety bound, sized
	// for 100,000 checks (about 3,300 jobs/s per region) acked within a few seconds.
	MaxAckPending = 50000
)

// StreamOption changes EnsureStream's topology.
type StreamOption func(*streamOptions)

type streamOptions struct {
	replicas int
	regions  []string
}

// WithReplicas sets the stream's and consumers' replication factor in a NATS cluster. Default
// 1.
func WithReplicas(n int) StreamOption { return func(o *streamOptions) { o.replicas = n } }

// WithRegions sets the regions that get a consumer. Default check.Regions (all of them).
func WithRegions(regions []string) StreamOption {
	return func(o *streamOptions) { o.regions = regions }
}

// StreamConfig is the configuration of stream wire.JobStream.
func StreamConfig(replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        wire.JobStream,
		Description: "Vantage check jobs, one subject per region",
		Subjects:    []string{wire.JobSubjectPrefix + ">"},
		Retention:   jetstream.WorkQueuePolicy,
		MaxAge:      wire.JobMaxAge,
		Duplicates:  DuplicateWindow,
		Storage:     jetstream.FileStorage,
		Discard:     jetstream.DiscardOld,
		Replicas:    replicas,
	}
}

// ConsumerConfig is the configuration of the durable pull consumer all agents of region share.
func ConsumerConfig(region string, replicas int) jetstream.ConsumerConfig {
	return consumerConfig(wire.ConsumerName(region), "agents of "+region, wire.JobSubject(region), replicas)
}

// BrowserConsumerConfig is the configuration of the durable pull consumer the browser-capable
// agents of region share (wire.BrowserJobSubject).
func BrowserConsumerConfig(region string, replicas int) jetstream.ConsumerConfig {
	return consumerConfig(wire.BrowserConsumerName(region), "browser agents of "+region, wire.BrowserJobSubject(region), replicas)
}

func consumerConfig(name, description, subject string, replicas int) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       name,
		Description:   description,
		FilterSubject: subject,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       wire.JobAckWait,
		MaxDeliver:    MaxDeliver,
		MaxAckPending: MaxAckPending,
		Replicas:      replicas,
	}
}

// EnsureStream creates stream wire.JobStream and two durable pull consumers per region (its
// jobs, its browser jobs), or
// updates them to this configuration; it is idempotent, so every replica calls it at start-up.
func EnsureStream(ctx context.Context, js jetstream.JetStream, opts ...StreamOption) error {
	o := streamOptions{replicas: 1, regions: check.Regions}
	for _, opt := range opts {
		opt(&o)
	}
	if _, err := js.CreateOrUpdateStream(ctx, StreamConfig(o.replicas)); err != nil {
		return fmt.Errorf("ensure stream %s: %w", wire.JobStream, err)
	}
	for _, r := range o.regions {
		for _, cc := range []jetstream.ConsumerConfig{ConsumerConfig(r, o.replicas), BrowserConsumerConfig(r, o.replicas)} {
			if _, err := js.CreateOrUpdateConsumer(ctx, wire.JobStream, cc); err != nil {
				return fmt.Errorf("ensure consumer %s: %w", cc.Durable, err)
			}
		}
	}
	return nil
}
