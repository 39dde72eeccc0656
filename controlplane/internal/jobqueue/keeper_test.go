package jobqueue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/jobqueue"
	"github.com/vantagehq/vantage/controlplane/internal/jobqueue/jobqueuetest"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/wire"
)

// TestKeeperRecreatesWhatNATSLost: a deleted consumer, then the deleted stream, come back
// within the keeper's interval; Check names what is missing meanwhile.
func TestKeeperRecreatesWhatNATSLost(t *testing.T) {
	t.Parallel()
	_, _, js := jobqueuetest.NewStream(t)
	ctx := context.Background()
	k, err := jobqueue.NewKeeper(jobqueue.KeeperConfig{Interval: 50 * time.Millisecond}, jobqueue.KeeperDeps{JetStream: js})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Check(ctx); err != nil {
		t.Fatalf("Check with everything in place: %v", err)
	}

	region := check.Regions[3]
	if err := js.DeleteConsumer(ctx, wire.JobStream, wire.ConsumerName(region)); err != nil {
		t.Fatal(err)
	}
	if err := k.Check(ctx); !errors.Is(err, jobqueue.ErrTopologyMissing) {
		t.Fatalf("Check without a consumer: %v, want ErrTopologyMissing", err)
	}
	if err := js.DeleteStream(ctx, wire.JobStream); err != nil {
		t.Fatal(err)
	}
	if err := k.Check(ctx); !errors.Is(err, jobqueue.ErrTopologyMissing) {
		t.Fatalf("Check without the stream: %v, want ErrTopologyMissing", err)
	}

	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- k.Run(runCtx) }()
	deadline := time.Now().Add(10 * time.Second)
	for k.Check(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("not re-created within 10s: %v", k.Check(ctx))
		}
		time.Sleep(20 * time.Millisecond)
	}
	info, err := js.Stream(ctx, wire.JobStream)
	if err != nil {
		t.Fatal(err)
	}
	if cfg := info.CachedInfo().Config; cfg.Retention != jobqueue.StreamConfig(1).Retention || cfg.Duplicates != jobqueue.DuplicateWindow {
		t.Errorf("re-created stream has another configuration: %+v", cfg)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v, want nil when ctx ends", err)
	}
}
