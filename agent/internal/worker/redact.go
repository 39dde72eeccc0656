package worker

import (
	"github.com/vantagehq/vantage/pkg/redact"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// redactResult replaces the secret values of job, in every encoding the agent or its target
// can produce (pkg/redact), in the free-text fields of r. Probers redact what they
// produce; this is the last line before a result leaves the agent, so a prober that forgets a
// field cannot leak a secret. (A browser run's screenshot is an image: text on it cannot be
// redacted.)
func redactResult(r *vantagev1.CheckResult, job *vantagev1.CheckJob) {
	clean := redact.ForJob(job).String
	cleanOpt := func(p *string) *string {
		if p == nil {
			return nil
		}
		v := clean(*p)
		return &v
	}
	r.ResponseBody = cleanOpt(r.ResponseBody)
	r.ResultSummary = cleanOpt(r.ResultSummary)
	r.ParsedResponse = cleanOpt(r.ParsedResponse)
	for i, line := range r.GetArtifactsDropped() {
		r.ArtifactsDropped[i] = clean(line)
	}
	for _, s := range r.GetSteps() {
		s.Title = clean(s.Title)
		s.Error = clean(s.Error)
	}
	for _, a := range r.GetAssertions() {
		a.Actual = clean(a.Actual)
		a.Message = clean(a.Message)
		if a.Assertion != nil {
			a.Assertion.Expected = clean(a.Assertion.Expected)
			a.Assertion.Property = clean(a.Assertion.Property)
		}
	}
}
