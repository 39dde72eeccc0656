package worker

import (
	"cmp"
	"slices"
	"strings"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Redacted replaces secret values in results (the prober's marker too).
const Redacted = "[REDACTED]"

// redact replaces every exact occurrence of the job's secret values in the free-text fields of
// r. Probers redact what they produce; this is the last line before a result leaves the agent,
// so a prober that forgets a field cannot leak a secret. (A browser run's screenshot is an
// image: text on it cannot be redacted.)
func redact(r *vantagev1.CheckResult, secrets []string) {
	secrets = slices.DeleteFunc(slices.Clone(secrets), func(s string) bool { return s == "" })
	if len(secrets) == 0 {
		return
	}
	// Longest first, so a secret that contains another is replaced whole.
	slices.SortFunc(secrets, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	clean := func(s string) string {
		for _, sec := range secrets {
			s = strings.ReplaceAll(s, sec, Redacted)
		}
		return s
	}
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
