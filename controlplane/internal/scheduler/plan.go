package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

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

// plan is what the schedule knows about one active check: its rhythm and its jobs, kept as the
// encoded bytes of what every run shares. Plans are immutable once built; a reload builds a new
// one. A plan keeps nothing of the store row it came from: the leader holds one per active
// check, so its size is the control plane's memory per check (docs/scaling.md).
type plan struct {
	id, orgID  uuid.UUID
	interval   time.Duration
	regions    []string // check.Regions' own strings
	state      string   // interned (knownStates)
	anchor     int64    // state_changed_at in ms; noTime when the state never changed
	period     time.Duration
	lastQueued int64 // the legacy last_queued column; noTime when none
	createdAt  int64
	timeout    time.Duration
	attempts   uint32
	kind       vantagev1.CheckKind
	// job is the check's job without its per-run and per-region fields, encoded. newJob
	// inserts those fields at the cuts, the offsets where fields 5, 16 and 18 belong, so that a
	// run's bytes are what encoding the whole job gives (cutsOf).
	job  []byte
	cuts [3]int32
	// guard signs each job; sealed[i] holds the job's secrets sealed for regions[i]'s agents
	// (nil: no guard, or no secrets).
	guard  JobGuard
	sealed [][]byte
}

// knownStates are the status machine's states (store.Check.State), so that plans share their
// strings instead of each keeping the one its store row decoded.
var knownStates = []string{"PENDING", "UP", stateVerifying, "DOWN", stateRecovering}

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
	regions := make([]string, 0, len(sp.TestRegions))
	for _, r := range sp.TestRegions {
		i := slices.Index(check.Regions, r)
		if i < 0 {
			return nil, fmt.Errorf("test region %q is not a known region", r)
		}
		regions = append(regions, check.Regions[i])
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
	if i := slices.Index(knownStates, c.State); i >= 0 {
		p.state = knownStates[i]
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
		sealed, err := guard.Seal(job, regions)
		if err != nil {
			return nil, fmt.Errorf("seal secrets: %w", err)
		}
		if sealed != nil {
			p.sealed = make([][]byte, len(regions))
			for i, r := range regions {
				p.sealed[i] = sealed[r]
			}
		}
	}
	// Deterministic: map entries (headers, env) in key order, so that an unchanged check
	// encodes to the same bytes on every reload.
	if p.job, err = (proto.MarshalOptions{Deterministic: true}).Marshal(job); err != nil {
		return nil, fmt.Errorf("encode job: %w", err)
	}
	if p.cuts, err = cutsOf(p.job); err != nil {
		return nil, err
	}
	p.kind, p.guard = job.Kind, guard
	return p, nil
}

// cutsOf finds where in an encoded job the fields newJob adds belong: before the first field
// numbered 5 or more (region, scheduled and deadline times), 16 or more (confirmation), 18 or
// more (signature, sealed secrets, catch-up). proto.Marshal writes the fields in number order
// but a oneof's (the spec) after all of them, so the spec, which must come last, ends each
// part it does not precede.
func cutsOf(b []byte) ([3]int32, error) {
	firsts := [3]protowire.Number{5, 16, 18}
	fields := (*vantagev1.CheckJob)(nil).ProtoReflect().Descriptor().Fields()
	var cuts [3]int32
	k := 0
	for off := 0; off < len(b); {
		num, typ, n := protowire.ConsumeTag(b[off:])
		if n < 0 {
			return cuts, fmt.Errorf("encoded job: %w", protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[off+n:])
		if m < 0 {
			return cuts, fmt.Errorf("encoded job: %w", protowire.ParseError(m))
		}
		if f := fields.ByNumber(num); f != nil && f.ContainingOneof() != nil {
			if off+n+m != len(b) {
				return cuts, fmt.Errorf("encoded job: field %d of oneof %s is not last", num, f.ContainingOneof().Name())
			}
			break
		}
		for ; k < len(firsts) && num >= firsts[k]; k++ {
			cuts[k] = int32(off)
		}
		off += n + m
		for j := k; j < len(firsts); j++ {
			cuts[j] = int32(off)
		}
	}
	return cuts, nil
}

// newJob is the job of one run from one region (regions[ri]), encoded as agents receive it:
// the plan's job with the run's fields, the secrets sealed for the region, and the signature.
// head is that job without what every run shares (assertions, spec, redact, env): the
// identity and bounds the signature covers, for the publisher's subject and message id.
func (p *plan) newJob(id uuid.UUID, ri int, due, deadline int64, confirmation, catchUp bool) (head *vantagev1.CheckJob, data []byte) {
	head = &vantagev1.CheckJob{
		JobId:             id.String(),
		CheckId:           p.id.String(),
		OrgId:             p.orgID.String(),
		Kind:              p.kind,
		Region:            p.regions[ri],
		ScheduledAtUnixMs: due,
		DeadlineUnixMs:    deadline,
		TimeoutMs:         uint32(p.timeout.Milliseconds()),
		MaxAttempts:       p.attempts,
		Confirmation:      confirmation,
		CatchUp:           catchUp,
	}
	if p.sealed != nil {
		head.Sealed = p.sealed[ri]
	}
	if p.guard != nil {
		p.guard.Sign(head)
	}
	// Each field as proto.Marshal writes it: proto3 leaves out zero values.
	b := make([]byte, 0, len(p.job)+len(head.JobId)+len(head.Region)+len(head.Signature)+len(head.Sealed)+48)
	b = appendString(b, 1, head.JobId)
	b = append(b, p.job[:p.cuts[0]]...)
	b = appendString(b, 5, head.Region)
	b = appendVarint(b, 6, uint64(due))
	b = appendVarint(b, 7, uint64(deadline))
	b = append(b, p.job[p.cuts[0]:p.cuts[1]]...)
	b = appendVarint(b, 16, protowire.EncodeBool(confirmation))
	b = append(b, p.job[p.cuts[1]:p.cuts[2]]...)
	b = appendBytes(b, 18, head.Signature)
	b = appendBytes(b, 19, head.Sealed)
	b = appendVarint(b, 20, protowire.EncodeBool(catchUp))
	b = append(b, p.job[p.cuts[2]:]...)
	return head, b
}

func appendString(b []byte, num protowire.Number, v string) []byte {
	if v == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, v)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}
