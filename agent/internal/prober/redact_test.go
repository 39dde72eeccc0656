package prober

import (
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/redact"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// TestHTTPSecretsRedactedInEveryEncoding goes through the real probe path against a local
// server that echoes the job's secret header: /json in a JSON document, JSON-escaped as Go,
// Python and PHP write it, URL-encoded, with the Basic-auth header; /text raw, HTML-escaped
// and URL-encoded in a text body. An assertion on the echo fails, so the summary and the assertion's message
// quote the secret (%q). No form of the secret — with ", \, <, & and é in it — survives in
// the result.
func TestHTTPSecretsRedactedInEveryEncoding(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		tok := r.Header.Get("X-Token")
		ascii := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&", "é", `\u00e9`).Replace(string(must(json.Marshal(tok))))
		doc := map[string]any{"token": tok, "authorization": r.Header.Get("Authorization"), "query": url.QueryEscape(tok)}
		b := must(json.Marshal(doc))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, strings.TrimSuffix(string(b), "}")+`,"python":`+ascii+`,"php":`+strings.ReplaceAll(ascii, "/", `\/`)+"}")
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		tok := r.Header.Get("X-Token")
		io.WriteString(w, "token="+tok+"\n<p>"+html.EscapeString(tok)+"</p>\n<a href=\"/?t="+url.QueryEscape(tok)+"\">")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	const secret = `k"e\y/<&>é-0123`
	user, pass := "svc", "pw-"+secret
	basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	for _, tc := range []struct {
		path      string
		assertion *vantagev1.Assertion
		echoes    int // of the secret in the body
	}{
		{"/json", assertion(check.JSONBody, "$.token", check.Equals, "something else"), 5},
		{"/text", assertion(check.TextBody, "", check.Equals, "something else"), 3},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			job := uptime(srv.URL + tc.path)
			job.GetHttp().Headers = map[string]string{"X-Token": secret}
			job.GetHttp().AuthUsername, job.GetHttp().AuthPassword = &user, &pass
			job.Redact = []string{secret, pass}
			job.Assertions = []*vantagev1.Assertion{tc.assertion}
			res := run(t, NewHTTP(), job, 5*time.Second)
			wantFail(t, res, SourceAssertion, AssertionFailed)
			texts := map[string]string{"response_body": res.ResponseBody, "result_summary": res.ResultSummary,
				"assertion.actual": res.Assertions[0].Actual, "assertion.message": res.Assertions[0].Message}
			for name, text := range texts {
				for _, leak := range []string{"-0123", basic[:16]} {
					if strings.Contains(text, leak) {
						t.Errorf("%s leaks %q: %s", name, leak, text)
					}
				}
			}
			if !strings.Contains(res.ResultSummary, `got "`) || !strings.Contains(res.ResultSummary, redact.Marker) {
				t.Errorf("the summary does not quote the redacted secret: %s", res.ResultSummary)
			}
			if n := strings.Count(res.ResponseBody, redact.Marker); n != tc.echoes {
				t.Errorf("%d redactions in %s, want %d", n, res.ResponseBody, tc.echoes)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
