package worker

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"strings"
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
		{"a short secret only as a whole token", []string{"iv"}, "private iv=iv", "private [REDACTED]=[REDACTED]"},
		{"a long secret inside words", []string{"s3cr3t-v4lue"}, "xs3cr3t-v4luex", "x[REDACTED]x"},
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
			redactResult(r, &vantagev1.CheckJob{Redact: tt.secrets})
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
	redactResult(r, &vantagev1.CheckJob{Redact: []string{"abc"}})
	if r.ResponseBody != nil || r.ResultSummary != nil {
		t.Error("redact set fields that were unset")
	}
}

// TestRedactEncodings: a secret with characters that every encoding changes (", \, <, &, é)
// leaks in no form in which a result can hold it: quoted by %q in a summary, JSON-escaped in
// a body, HTML-escaped, URL-encoded; nor does the job's Basic-auth user:password in base64.
func TestRedactEncodings(t *testing.T) {
	t.Parallel()
	const secret = `p"a\ss<w&rdé`
	user, pass := "svc", "pw-"+secret
	basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	goJSON, _ := json.Marshal(secret)
	forms := map[string]string{
		"raw":          secret,
		"%q":           fmt.Sprintf("%q", secret),
		"%+q":          fmt.Sprintf("%+q", secret),
		"JSON":         string(goJSON),
		"JSON no HTML": `"p\"a\\ss<w&rdé"`,
		"JSON ASCII":   `"p\"a\\ss<w&rd\u00e9"`,
		"HTML":         html.EscapeString(secret),
		"query":        url.QueryEscape(secret),
		"path":         url.PathEscape(secret),
		"basic":        "Authorization: Basic " + basic,
	}
	job := &vantagev1.CheckJob{Redact: []string{secret, pass},
		Spec: &vantagev1.CheckJob_Http{Http: &vantagev1.HTTPSpec{AuthUsername: &user, AuthPassword: &pass}}}
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			text := "before " + form + " after"
			r := &vantagev1.CheckResult{ResponseBody: &text, ResultSummary: &text,
				Steps: []*vantagev1.Step{{Title: text, Error: text}}}
			redactResult(r, job)
			for field, got := range map[string]string{"response_body": r.GetResponseBody(),
				"result_summary": r.GetResultSummary(), "step.title": r.Steps[0].Title, "step.error": r.Steps[0].Error} {
				if strings.Contains(got, "rd") || strings.Contains(got, basic[:12]) || !strings.Contains(got, "[REDACTED]") {
					t.Errorf("%s = %q: the secret survives", field, got)
				}
			}
		})
	}
}
