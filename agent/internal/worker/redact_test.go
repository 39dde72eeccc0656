package worker

import (
	"testing"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	tests := []struct {
		name    string
		secrets []string
		body    string
		want    string
	}{
		{"no secrets", nil, "token=abc", "token=abc"},
		{"empty secret ignored", []string{""}, "token=abc", "token=abc"},
		{"every occurrence", []string{"abc"}, "abc token=abc", "[REDACTED] token=[REDACTED]"},
		{"longest first", []string{"abc", "abcdef"}, "x=abcdef y=abc", "x=[REDACTED] y=[REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &vantagev1.CheckResult{
				ResponseBody: str(tt.body), ResultSummary: str(tt.body), ParsedResponse: str(tt.body),
				Assertions: []*vantagev1.AssertionOutcome{{
					Assertion: &vantagev1.Assertion{Expected: tt.body}, Actual: tt.body, Message: tt.body,
				}},
			}
			redact(r, tt.secrets)
			a := r.Assertions[0]
			for name, got := range map[string]string{
				"response_body": r.GetResponseBody(), "result_summary": r.GetResultSummary(),
				"parsed_response": r.GetParsedResponse(), "assertion.expected": a.GetAssertion().GetExpected(),
				"assertion.actual": a.GetActual(), "assertion.message": a.GetMessage(),
			} {
				if got != tt.want {
					t.Errorf("%s = %q, want %q", name, got, tt.want)
				}
			}
		})
	}
	r := &vantagev1.CheckResult{}
	redact(r, []string{"abc"})
	if r.ResponseBody != nil || r.ResultSummary != nil {
		t.Error("redact set fields that were unset")
	}
}
