// Package jobopen stands between the worker and the probers: it opens a job's sealed secrets
// (pkg/jobseal) with the keys the control plane handed this agent for its regions just before
// the probe, and stamps each result with what the control plane needs to accept it — the
// job's signature — and with how many probes the agent is running, for the operators' view.
//
// The keys come with every registration on the gRPC stream (Registered.region_keys); a job
// whose secrets cannot be opened (no registration yet, or a region this agent's token does
// not allow) is not probed: the runner returns nil, and the worker hands the job back.
package jobopen

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"

	"github.com/vantagehq/vantage/pkg/jobseal"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Prober runs one attempt of a job (probe.Runner).
type Prober interface {
	Run(ctx context.Context, job *vantagev1.CheckJob, attempt int) *vantagev1.CheckResult
}

// Runner opens jobs for its Prober; it implements the worker's Runner.
type Runner struct {
	next    Prober
	keys    *jobseal.Keyring
	log     *slog.Logger
	running atomic.Int32
}

// Deps are a Runner's collaborators. It has no settings, so no Config.
type Deps struct {
	Next Prober // required: runs the opened job (probe.Runner)
	// Logger receives the runner's log (component jobopen). Default: discarded.
	Logger *slog.Logger
}

// New returns a runner in front of deps.Next, without keys until Registered is called.
func New(deps Deps) (*Runner, error) {
	if deps.Next == nil {
		return nil, errors.New("jobopen: a prober is required")
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runner{next: deps.Next, keys: jobseal.NewKeyring(), log: deps.Logger.With("component", "jobopen")}, nil
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

// Run opens job's secrets into it, runs the attempt and stamps the result; nil when the
// secrets do not open or the prober has nothing to report.
func (r *Runner) Run(ctx context.Context, job *vantagev1.CheckJob, attempt int) *vantagev1.CheckResult {
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
	res := r.next.Run(ctx, job, attempt)
	if res != nil {
		res.JobSignature = job.GetSignature()
		res.AgentProbesRunning = uint32(max(running, r.running.Load()))
	}
	return res
}
