package scheduler

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Check states the scheduler cares about (DESIGN.md's status machine).
const (
	stateVerifying  = "VERIFYING"
	stateRecovering = "RECOVERING"
)

// Attempts per run and default timeouts when a check has none stored.
const (
	// attemptsProbe is max_attempts of HTTP, DNS, TCP, ping, gRPC and WebSocket jobs: one retry absorbs a transient
	// failure (a dropped packet, a reset connection) before it becomes a failing result.
	attemptsProbe = 2
	// attemptsBrowser is max_attempts of browser jobs: a browser run is expensive and slow,
	// and confirmation runs from the other regions already double-check a failure.
	attemptsBrowser = 1
	// defaultTimeout applies to a job whose check has no timeout_ms (check.DefaultTimeoutMs).
	defaultTimeout = check.DefaultTimeoutMs * time.Millisecond
	// defaultBrowserTimeout applies to legacy browser checks without timeout_ms.
	defaultBrowserTimeout = 60 * time.Second
)

// plan is what the schedule knows about one active check: its rhythm and a template of its
// jobs. Plans are immutable once built; a reload builds a new one.
type plan struct {
	id, orgID  uuid.UUID
	interval   time.Duration
	regions    []string
	state      string
	anchor     int64 // state_changed_at in ms; noTime when the state never changed
	period     time.Duration
	lastQueued int64 // the legacy last_queued column; noTime when none
	createdAt  int64
	timeout    time.Duration
	attempts   uint32
	// job carries every field that is the same for all of the check's jobs; the per-run and
	// per-region fields are set on a copy.
	job *vantagev1.CheckJob
	// guard signs each job; sealed holds the job's secrets sealed for each region's agents
	// (nil: no guard, or no secrets).
	guard  JobGuard
	sealed map[string][]byte
}

// confirming reports whether the check is confirming a state change and runs faster.
func (p *plan) confirming() bool { return p.state == stateVerifying || p.state == stateRecovering }

// buildPlan turns a stored check into a plan whose jobs guard signs and whose secrets it seals
// (guard may be nil). An error means the check cannot be run as stored (unknown kind,
// unresolvable variables, no regions).
func buildPlan(c store.SchedCheck, guard JobGuard) (*plan, error) {
	sp := c.Spec
	if len(c.MissingVars) > 0 {
		return nil, fmt.Errorf("references unknown variables %v", c.MissingVars)
	}
	if sp.TestInterval <= 0 {
		return nil, fmt.Errorf("test_interval %d is not positive", sp.TestInterval)
	}
	var regions []string
	for _, r := range sp.TestRegions {
		if !check.IsRegion(r) {
			return nil, fmt.Errorf("test region %q is not a known region", r)
		}
		regions = append(regions, r)
	}
	if len(regions) == 0 {
		return nil, fmt.Errorf("has no test regions")
	}
	p := &plan{
		id: c.ID, orgID: c.OrgID,
		interval:   time.Duration(sp.TestInterval) * time.Second,
		regions:    regions,
		state:      c.State,
		anchor:     noTime,
		lastQueued: noTime,
		createdAt:  unixMs(c.CreatedAt),
		timeout:    defaultTimeout,
		attempts:   attemptsProbe,
	}
	switch c.State {
	case stateVerifying:
		p.period = time.Duration(sp.ConfirmationPeriodSeconds) * time.Second
	case stateRecovering:
		p.period = time.Duration(sp.RecoveryPeriodSeconds) * time.Second
	}
	if c.StateChangedAt != nil {
		p.anchor = unixMs(*c.StateChangedAt)
	}
	if c.LastQueued != nil {
		p.lastQueued = unixMs(*c.LastQueued)
	}
	if sp.Kind == check.Browser {
		p.attempts = attemptsBrowser
		p.timeout = defaultBrowserTimeout
	}
	if sp.TimeoutMs != nil && *sp.TimeoutMs > 0 {
		p.timeout = time.Duration(*sp.TimeoutMs) * time.Millisecond
	}
	if sp.Kind == check.Uptime && (sp.HTTP == nil || sp.HTTP.URL == nil) {
		return nil, fmt.Errorf("uptime check has no url")
	}
	if sp.Kind == check.Browser && (sp.HTTP == nil || sp.HTTP.URL == nil && sp.HTTP.Script == nil) {
		return nil, fmt.Errorf("browser check has neither url nor script")
	}
	// A multistep check gets an HTTP check's attempts: it runs without a browser, at about
	// the cost of the HTTP calls it makes.
	if sp.Kind == check.Multistep && (sp.Multistep == nil || strings.TrimSpace(sp.Multistep.Script) == "") {
		return nil, fmt.Errorf("multistep check has no script")
	}
	job, err := sp.Job()
	if err != nil {
		return nil, err
	}
	job.CheckId, job.OrgId = c.ID.String(), c.OrgID.String()
	job.TimeoutMs, job.MaxAttempts, job.Redact, job.Env = uint32(p.timeout.Milliseconds()), p.attempts, c.Redact, c.Env
	if guard != nil {
		if p.sealed, err = guard.Seal(job, regions); err != nil {
			return nil, fmt.Errorf("seal secrets: %w", err)
		}
	}
	p.job, p.guard = job, guard
	return p, nil
}

// newJob is the job of one run from one region: the plan's template with the run's fields,
// the secrets sealed for the region, and the signature. The template's nested messages are
// shared, read-only.
func (p *plan) newJob(id uuid.UUID, region string, due, deadline int64, confirmation, catchUp bool) *vantagev1.CheckJob {
	t := p.job
	j := &vantagev1.CheckJob{
		JobId:             id.String(),
		CheckId:           t.CheckId,
		OrgId:             t.OrgId,
		Kind:              t.Kind,
		Region:            region,
		ScheduledAtUnixMs: due,
		DeadlineUnixMs:    deadline,
		TimeoutMs:         t.TimeoutMs,
		MaxAttempts:       t.MaxAttempts,
		Assertions:        t.Assertions,
		Spec:              t.Spec,
		Redact:            t.Redact,
		Env:               t.Env,
		Confirmation:      confirmation,
		CatchUp:           catchUp,
		Sealed:            p.sealed[region],
	}
	if p.guard != nil {
		p.guard.Sign(j)
	}
	return j
}
