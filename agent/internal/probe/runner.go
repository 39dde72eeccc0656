// Package probe is the agent's run path, from a job to its result: it opens the job's sealed
// secrets (pkg/jobseal) with the keys the control plane handed this agent for its regions, runs
// the prober of the job's kind (prober.New, the one table of probers by kind), and maps what the
// prober observed onto a CheckResult, stamped with what the control plane needs to accept it —
// the job's signature — and with how many probes the agent is running, for the operators' view.
// The worker stamps ids, region, attempt and timestamps. It lives apart from the worker so the
// worker (and its tests) never link the probers' dependencies.
//
// The keys come with every registration on the gRPC stream (Registered.region_keys); a job
// whose secrets cannot be opened (no registration yet, or a region this agent's token does
// not allow) is not probed: Run returns nil, and the worker hands the job back.
package probe

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"

	"github.com/vantagehq/vantage/agent/internal/prober"
	"github.com/vantagehq/vantage/agent/internal/worker"
	"github.com/vantagehq/vantage/pkg/jobseal"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Runner runs job attempts: open, probe, result. It implements the worker's Runner.
type Runner struct {
	p       prober.Prober
	keys    *jobseal.Keyring
	log     *slog.Logger
	running atomic.Int32
}

var _ worker.Runner = (*Runner)(nil)

// Deps are a Runner's collaborators. It has no settings, so no Config.
type Deps struct {
	// Prober probes every opened job: prober.New(...), which dispatches by kind. Required.
	Prober prober.Prober
	// Logger receives the runner's log (component probe). Default: discarded.
	Logger *slog.Logger
}

// New returns a Runner probing with deps.Prober, without keys until Registered is called.
func New(deps Deps) (*Runner, error) {
	if deps.Prober == nil {
		return nil, errors.New("probe: a prober is required")
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runner{p: deps.Prober, keys: jobseal.NewKeyring(), log: deps.Logger.With("component", "probe")}, nil
}

// Registered takes the region keys of a registration (the uplink calls it on every one).
func (r *Runner) Registered(reg *vantagev1.Registered) {
	keys := make([]jobseal.Key, 0, len(reg.GetRegionKeys()))
	for _, k := range reg.GetRegionKeys() {
		keys = append(keys, jobseal.Key{Region: k.GetRegion(), ID: k.GetKeyId(), Secret: k.GetKey()})
	}
	if err := r.keys.Set(keys); err != nil {
		r.log.Error("the control plane sent region keys that cannot be used; jobs with secrets will not run", "err", err)
	}
}

// Run opens job's secrets into it, probes one attempt and returns its stamped result. It
// returns nil when the secrets do not open, or when the prober could not finish the attempt
// (ctx was cancelled: the agent is stopping); the worker must not report either.
func (r *Runner) Run(ctx context.Context, job *vantagev1.CheckJob, _ int) *vantagev1.CheckResult {
	if err := r.keys.Open(job); err != nil {
		msg := "cannot open the job's secrets; handing it back"
		if errors.Is(err, jobseal.ErrNoKey) {
			msg = "no key for the job's secrets (not registered yet, or a region this agent's token does not allow); handing it back"
		}
		r.log.Error(msg, "job_id", job.GetJobId(), "check_id", job.GetCheckId(), "region", job.GetRegion(), "err", err)
		return nil
	}
	running := r.running.Add(1)
	defer r.running.Add(-1)
	observed, err := r.p.Probe(ctx, job)
	if err != nil {
		return nil
	}
	res := Result(observed)
	res.JobSignature = job.GetSignature()
	res.AgentProbesRunning = uint32(max(running, r.running.Load()))
	return res
}
