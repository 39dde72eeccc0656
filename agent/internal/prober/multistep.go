package prober

import (
	"context"
	"errors"
	"strings"

	"github.com/vantagehq/vantage/agent/internal/browser/pwscript"
	"github.com/vantagehq/vantage/pkg/browserscript"
	"github.com/vantagehq/vantage/pkg/check"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Multistep probes multistep checks: a Playwright Test file that calls HTTP APIs with the
// request fixture, run by the script runtime (pwscript) without a browser, so every agent runs
// them, browser or not.
//
// It runs in the agent's process, not in a worker process as browser scripts do: a run costs
// about the HTTP calls it makes plus a goja runtime (see BenchmarkMultistep), where a process
// per run would cost several times that. What a worker's rlimits give browser scripts the run
// gets here from the runtime: the job's deadline interrupts a script stuck in JavaScript; the
// script has no file system, process or network access but the request fixture, whose calls
// go through the agent's address policy, resolver and trusted CAs and whose responses are
// capped; and the heap watch (WithScriptHeapLimit) interrupts scripts once the agent's Go heap
// passes the limit, before a runaway allocation can take the agent down. The heap is the
// process's: a script that runs while another one allocates without bound is interrupted with
// it — a rare, single failed attempt, which the second attempt of the run absorbs.
//
// Verdict: the script's first failure, as for scripted browser checks — an expect() ->
// ASSERTION / ASSERTION_FAILED (failOnStatusCode too); a call that got no response ->
// TRANSPORT, classified (FORBIDDEN_TARGET, DNS_ERROR, CONNECTION_REFUSED, TLS_ERROR,
// TOO_MANY_REDIRECTS, …); a timeout of a call, the test or the run -> TRANSPORT / TIMEOUT; the
// script itself (an exception, an unsupported API, a browser fixture, too much memory) ->
// ASSERTION / SCRIPT_ERROR. The summary names the failing step, its place in the script and
// Playwright's message; the steps are the result's steps.
type Multistep struct {
	opts     options
	programs browserscript.Cache
}

var _ Prober = (*Multistep)(nil)

// NewMultistep returns the multistep prober; it reads WithPrivateTargets, WithResolver,
// WithRootCAs, WithVersion and WithScriptHeapLimit.
func NewMultistep(opts ...Option) *Multistep { return &Multistep{opts: newOptions(opts)} }

// Probe runs one attempt of a multistep job; see Multistep.
func (p *Multistep) Probe(ctx context.Context, job *vantagev1.CheckJob) (Result, error) {
	res := Result{Kind: check.Multistep, BodyAvailability: BodyNotRecorded}
	prog, err := p.programs.Get("", job.GetMultistep().GetScript())
	if err != nil {
		var se *browserscript.SyntaxError
		if !errors.As(err, &se) {
			return Result{}, err
		}
		res.failAssertion(ScriptError, "the script does not compile: "+se.Error())
		res.finish(job, nil)
		return res, nil
	}
	rep := pwscript.Run(ctx, prog, pwscript.Options{
		Env: job.GetEnv(), Secrets: job.GetRedact(), RequestOnly: true, HeapLimit: p.opts.scriptHeapLimit,
		Request: pwscript.RequestOptions{
			AllowPrivate: p.opts.allowPrivate, Resolver: p.opts.resolver, RootCAs: p.opts.rootCAs,
			UserAgent: UserAgent(p.opts.version, job.GetRegion()),
		},
	})
	if cerr := cancelled(ctx); cerr != nil {
		return Result{}, cerr
	}
	res.ResponseTime = rep.Duration
	res.Timings.Total = rep.Duration
	res.Steps = steps(rep)
	f := rep.Failure
	switch {
	case rep.Passed:
		res.pass(rep.Summary)
	case f == nil:
		res.failAssertion(ScriptError, rep.Summary)
	case f.Cause == pwscript.CauseRequest:
		res.failTransport(requestFailureType(f.Message), rep.Summary)
	case f.Cause == pwscript.CauseTimeout:
		res.failTransport(Timeout, rep.Summary)
	case f.Cause == pwscript.CauseAssertion:
		res.failAssertion(AssertionFailed, rep.Summary)
	default:
		res.failAssertion(ScriptError, rep.Summary)
	}
	res.finish(job, nil)
	return res, nil
}

// requestFailureType classifies a request call that got no response from the class its
// message names (netpolicy.Describe's phrases, the runtime's redirect limit).
func requestFailureType(msg string) string {
	for _, c := range []struct{ phrase, failureType string }{
		{"refused by policy", ForbiddenTarget},
		{"DNS failure", DNSError},
		{"timeout: ", Timeout},
		{"connection refused", ConnectionRefused},
		{"connection reset", ConnectionReset},
		{"connection closed", ConnectionClosed},
		{"host unreachable", HostUnreachable},
		{"TLS: ", TLSError},
		{"Max redirect count exceeded", TooManyRedirects},
	} {
		if strings.Contains(msg, c.phrase) {
			return c.failureType
		}
	}
	return ConnectionError
}
