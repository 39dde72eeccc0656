package jobqueue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/wire"
)

// ErrTopologyMissing means the job stream or one of its consumers does not exist.
var ErrTopologyMissing = errors.New("missing")

// KeeperConfig configures a Keeper. Zero values take the documented defaults.
type KeeperConfig struct {
	// Interval is how often the Keeper looks for the stream and its consumers. Default 2s.
	Interval time.Duration
	// Replicas is the replication factor of what it re-creates (see WithReplicas). Default 1.
	Replicas int
	// Regions are the regions whose consumers it keeps. Default check.Regions.
	Regions []string
}

// KeeperDeps are the Keeper's collaborators.
type KeeperDeps struct {
	JetStream jetstream.JetStream // required
	Logger    *slog.Logger        // default: discarded
}

// Keeper keeps stream wire.JobStream and its consumers in place. EnsureStream creates them at
// start-up, but NATS may lose them later — its volume wiped, the server replaced by a new one —
// and nothing else would create them again: the scheduler's publishes would find no stream
// and agents no consumer. The Keeper looks every Interval and re-creates what is missing;
// Check tells readiness whether everything is there now.
type Keeper struct {
	cfg  KeeperConfig
	js   jetstream.JetStream
	log  *slog.Logger
	opts []StreamOption
}

// NewKeeper returns a Keeper; it starts looking when Run is called.
func NewKeeper(cfg KeeperConfig, deps KeeperDeps) (*Keeper, error) {
	if deps.JetStream == nil {
		return nil, errors.New("jobqueue keeper: a JetStream context is required")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 2 * time.Second
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	if len(cfg.Regions) == 0 {
		cfg.Regions = check.Regions
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	return &Keeper{cfg: cfg, js: deps.JetStream, log: deps.Logger,
		opts: []StreamOption{WithReplicas(cfg.Replicas), WithRegions(cfg.Regions)}}, nil
}

// Run re-creates the stream and its consumers whenever they are missing, until ctx ends
// (then it returns nil). NATS being unreachable is not its business: it tries again later.
func (k *Keeper) Run(ctx context.Context) error {
	t := time.NewTicker(k.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		k.keep(ctx)
	}
}

// keep looks once and re-creates what is missing.
func (k *Keeper) keep(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, k.cfg.Interval+5*time.Second)
	defer cancel()
	err := k.Check(ctx)
	if err == nil || !errors.Is(err, ErrTopologyMissing) {
		return // in place, or NATS does not answer now (readiness says so)
	}
	if err := EnsureStream(ctx, k.js, k.opts...); err != nil {
		k.log.Error("job stream missing, and re-creating it failed", "missing", err.Error(), "err", err)
		return
	}
	k.log.Warn("job stream or consumers were missing (NATS lost its store?): re-created", "missing", err.Error())
}

// Check reports whether the stream and every region's consumer exist now: nil if so, an error
// wrapping ErrTopologyMissing naming what is missing, or the error of a NATS that does not
// answer.
func (k *Keeper) Check(ctx context.Context) error {
	s, err := k.js.Stream(ctx, wire.JobStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("stream %s %w", wire.JobStream, ErrTopologyMissing)
	}
	if err != nil {
		return fmt.Errorf("stream %s: %w", wire.JobStream, err)
	}
	have := map[string]bool{}
	names := s.ConsumerNames(ctx)
	for n := range names.Name() {
		have[n] = true
	}
	if err := names.Err(); err != nil {
		return fmt.Errorf("consumers of %s: %w", wire.JobStream, err)
	}
	for _, r := range k.cfg.Regions {
		if name := wire.ConsumerName(r); !have[name] {
			return fmt.Errorf("consumer %s %w", name, ErrTopologyMissing)
		}
	}
	return nil
}
