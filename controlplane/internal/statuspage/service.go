package statuspage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Store is what the service needs from storage: reads on the pool and transactions over the
// status pages' tables (implemented by *store.Store).
type Store interface {
	StatusPages() store.StatusPageReader
	InStatusPageTx(ctx context.Context, fn func(tx *store.StatusPageTx) error) error
	ClaimDomainRechecks(ctx context.Context, dueBefore, now time.Time, limit int) ([]store.DomainRecheck, error)
}

var _ Store = (*store.Store)(nil)

// Config holds the service's settings; the zero value means the defaults.
type Config struct {
	// Interval is how often Run advances scheduled maintenance and brings monitor-fed
	// components in step with their monitors, and how often RunDomainRechecks looks for
	// custom domains due for a re-check. Default DefaultInterval.
	Interval time.Duration
	// DomainRecheck is how often a verified custom domain's TXT record is looked up again.
	// Default DefaultDomainRecheck (1 hour).
	DomainRecheck time.Duration
	// DomainGrace is how long a verified custom domain's record may be missing before the
	// domain is no longer verified. Default DefaultDomainGrace (72 hours).
	DomainGrace time.Duration
}

// DefaultInterval is Config.Interval's default.
const DefaultInterval = 15 * time.Second

// Deps are the service's collaborators.
type Deps struct {
	Store Store
	// Now is the clock of every workflow (default time.Now).
	Now func() time.Time
	// Logger (default slog.Default()).
	Logger *slog.Logger
	// LookupTXT reads the TXT records of a name, to verify custom domains (default: the
	// system resolver's).
	LookupTXT func(ctx context.Context, name string) ([]string, error)
}

// Service is the status pages' domain over their storage: the API, the public pages and the
// lifecycle loop (Run) all go through it. It is safe for concurrent use, and several replicas
// may run it together.
type Service struct {
	st       Store
	now      func() time.Time
	log      *slog.Logger
	interval time.Duration
	txt      func(ctx context.Context, name string) ([]string, error)
	// domainRecheck and domainGrace: Config.DomainRecheck and Config.DomainGrace.
	domainRecheck, domainGrace time.Duration
}

// New returns a Service.
func New(cfg Config, deps Deps) (*Service, error) {
	if deps.Store == nil {
		return nil, errors.New("statuspage: no store")
	}
	s := &Service{st: deps.Store, now: deps.Now, log: deps.Logger, interval: cfg.Interval, txt: deps.LookupTXT,
		domainRecheck: cfg.DomainRecheck, domainGrace: cfg.DomainGrace}
	if s.txt == nil {
		s.txt = net.DefaultResolver.LookupTXT
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.interval <= 0 {
		s.interval = DefaultInterval
	}
	if s.domainRecheck <= 0 {
		s.domainRecheck = DefaultDomainRecheck
	}
	if s.domainGrace <= 0 {
		s.domainGrace = DefaultDomainGrace
	}
	s.log = s.log.With("component", "statuspage")
	return s, nil
}

// Tick does one round of the lifecycle at the clock's current time: it moves scheduled
// maintenance on (maintenance.go) and sets the status of every component that follows its
// monitors (components.go).
func (s *Service) Tick(ctx context.Context) error {
	now := s.now()
	if err := s.AdvanceMaintenance(ctx, now); err != nil {
		return fmt.Errorf("advance scheduled maintenance: %w", err)
	}
	if err := s.SyncFollowingComponents(ctx, now); err != nil {
		return fmt.Errorf("sync monitor-fed components: %w", err)
	}
	return nil
}

// Run ticks until ctx ends; a failed tick is logged and retried at the next tick.
func (s *Service) Run(ctx context.Context) error {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		if err := s.Tick(ctx); err != nil && ctx.Err() == nil {
			s.log.ErrorContext(ctx, "status page tick failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
