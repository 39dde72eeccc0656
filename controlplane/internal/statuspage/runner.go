package statuspage

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Lifecycle is what the runner needs from storage (implemented by *store.Store).
type Lifecycle interface {
	// AdvanceMaintenance moves every scheduled maintenance whose start has come to IN_PROGRESS
	// (components to MAINTENANCE) and every one whose end has come to COMPLETED (components
	// restored), as of now. It is idempotent and safe on several replicas at once.
	AdvanceMaintenance(ctx context.Context, now time.Time) error
	// SyncLinkedComponents sets the status of every component that follows its checks or
	// heartbeat (not overridden, not in maintenance) from their current states.
	SyncLinkedComponents(ctx context.Context, now time.Time) error
}

// DefaultInterval is how often the runner ticks unless WithInterval says otherwise.
const DefaultInterval = 15 * time.Second

// Runner drives scheduled maintenance through its lifecycle and keeps monitor-fed components
// in step with their monitors.
type Runner struct {
	store    Lifecycle
	now      func() time.Time
	interval time.Duration
	log      *slog.Logger
}

// Option configures a Runner.
type Option func(*Runner)

// WithClock replaces time.Now (default) as the runner's clock.
func WithClock(now func() time.Time) Option { return func(r *Runner) { r.now = now } }

// WithInterval sets the tick interval (default DefaultInterval).
func WithInterval(d time.Duration) Option { return func(r *Runner) { r.interval = d } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(r *Runner) { r.log = l } }

// NewRunner returns a runner over store.
func NewRunner(store Lifecycle, opts ...Option) *Runner {
	r := &Runner{store: store, now: time.Now, interval: DefaultInterval, log: slog.Default()}
	for _, o := range opts {
		o(r)
	}
	r.log = r.log.With("component", "statuspage")
	return r
}

// Tick does one round at the clock's current time.
func (r *Runner) Tick(ctx context.Context) error {
	now := r.now()
	if err := r.store.AdvanceMaintenance(ctx, now); err != nil {
		return fmt.Errorf("advance scheduled maintenance: %w", err)
	}
	if err := r.store.SyncLinkedComponents(ctx, now); err != nil {
		return fmt.Errorf("sync monitor-fed components: %w", err)
	}
	return nil
}

// Run ticks until ctx ends; a failed tick is logged and retried at the next tick.
func (r *Runner) Run(ctx context.Context) error {
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		if err := r.Tick(ctx); err != nil && ctx.Err() == nil {
			r.log.ErrorContext(ctx, "status page tick failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
