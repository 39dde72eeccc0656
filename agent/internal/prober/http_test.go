package prober

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/redact"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// testMux is the HTTP test target. Paths:
//
//	/status/{code}       answers with that status
//	/redirect/{n}        redirects n times, then answers 200 "arrived"
//	/loop                redirects to itself
//	/echo                answers JSON describing the request
//	/sleep               waits for the client to go away (or 30s)
//	/slowbody            sends headers and part of the body, then waits like /sleep
//	/size/{n}            answers n bytes of 'a'
//	/json, /html         fixed documents for assertions
//	/auth                401 without Basic vantage:s3cret
func testMux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.PathValue("code"))
		w.WriteHeader(code)
		fmt.Fprintf(w, "status %d", code)
	})
	mux.HandleFunc("/redirect/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n <= 0 {
			io.WriteString(w, "arrived")
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/redirect/%d", n-1), http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/r307", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/echo", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		user, pass, hasAuth := r.BasicAuth()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Add("X-Multi", "one")
		w.Header().Add("X-Multi", "two")
		fmt.Fprintf(w, `{"method":%q,"body":%q,"ua":%q,"host":%q,"x_custom":%q,"token":%q,"auth_header":%q,"has_auth":%v,"user":%q,"pass":%q}`,
			r.Method, body, r.UserAgent(), r.Host, r.Header.Get("X-Custom"), r.Header.Get("X-Token"), r.Header.Get("Authorization"),
			hasAuth, user, pass)
	})
	mux.HandleFunc("/sleep", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	})
	mux.HandleFunc("/slowbody", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "partial body ")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	})
	mux.HandleFunc("/size/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		w.Write([]byte(strings.Repeat("a", n)))
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("X-Version", "10")
		io.WriteString(w, `{"status":"ok","checks":{"db":"up","cache":"degraded"},"latency_ms":42,"items":[1,2,3],"maintenance":false}`)
	})
	mux.HandleFunc("/html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><head><title>Service status</title></head><body><h1 class="state">All systems
			<em>operational</em></h1><span id="count">7</span></body></html>`)
	})
	mux.HandleFunc("/auth", func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "vantage" || p != "s3cret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, "welcome")
	})
	return mux
}

func newHTTPServer(t *testing.T) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(testMux())
	t.Cleanup(ts.Close)
	return ts
}

func uptime(url string) *vantagev1.CheckJob {
	return &vantagev1.CheckJob{Kind: vantagev1.CheckKind_CHECK_KIND_UPTIME,
		Spec: &vantagev1.CheckJob_Http{Http: &vantagev1.HTTPSpec{Url: &url, FollowRedirects: true, VerifySsl: true}}}
}

// httpJob is an uptime job of spec.
func httpJob(spec *vantagev1.HTTPSpec, as ...*vantagev1.Assertion) *vantagev1.CheckJob {
	return &vantagev1.CheckJob{Kind: vantagev1.CheckKind_CHECK_KIND_UPTIME, Spec: &vantagev1.CheckJob_Http{Http: spec}, Assertions: as}
}

func TestHTTPStatus(t *testing.T) {
	t.Parallel()
	ts := newHTTPServer(t)
	p := NewHTTP()
	for _, tc := range []struct {
		code int
		pass bool
	}{{200, true}, {201, true}, {204, true}, {299, true}, {304, true}, {400, false}, {404, false}, {418, false}, {500, false}, {503, false}} {
		t.Run(strconv.Itoa(tc.code), func(t *testing.T) {
			t.Parallel()
			res := run(t, p, uptime(fmt.Sprintf("%s/status/%d", ts.URL, tc.code)), 5*time.Second)
			if res.ResponseCode != tc.code {
				t.Errorf("ResponseCode = %d, want %d", res.ResponseCode, tc.code)
			}
			if res.BodyAvailability != BodyAvailable {
				t.Errorf("BodyAvailability = %s", res.BodyAvailability)
			}
			if tc.pass {
				wantPass(t, res)
				wantSummary(t, res, "HTTP "+strconv.Itoa(tc.code))
				return
			}
			wantFail(t, res, SourceAssertion, HTTPStatus)
			wantSummary(t, res, "HTTP "+strconv.Itoa(tc.code)+" "+http.StatusText(tc.code))
			if res.ResponseBody != fmt.Sprintf("status %d", tc.code) {
				t.Errorf("ResponseBody = %q", res.ResponseBody)
			}
		})
	}
}

func TestHTTPRedirects(t *testing.T) {
	t.Parallel()
	ts := newHTTPServer(t)
	p := NewHTTP()
	t.Run("followed", func(t *testing.T) {
		t.Parallel()
		res := run(t, p, uptime(ts.URL+"/redirect/3"), 5*time.Second)
		wantPass(t, res)
		if res.ResponseCode != 200 || res.ResponseBody != "arrived" {
			t.Errorf("got %d %q, want 200 \"arrived\"", res.ResponseCode, res.ResponseBody)
		}
	})
	t.Run("exactly the limit", func(t *testing.T) {
		t.Parallel()
		res := run(t, p, uptime(fmt.Sprintf("%s/redirect/%d", ts.URL, MaxRedirects)), 5*time.Second)
		wantPass(t, res)
	})
	t.Run("one over the limit", func(t *testing.T) {
		t.Parallel()
		res := run(t, p, uptime(fmt.Sprintf("%s/redirect/%d", ts.URL, MaxRedirects+1)), 5*time.Second)
		wantFail(t, res, SourceTransport, TooManyRedirects)
	})
	t.Run("not followed", func(t *testing.T) {
		t.Parallel()
		req := uptime(ts.URL + "/redirect/3")
		req.GetHttp().FollowRedirects = false
		res := run(t, p, req, 5*time.Second)
		wantPass(t, res)
		if res.ResponseCode != http.StatusFound {
			t.Errorf("ResponseCode = %d, want 302", res.ResponseCode)
		}
	})
	t.Run("loop", func(t *testing.T) {
		t.Parallel()
		res := run(t, p, uptime(ts.URL+"/loop"), 5*time.Second)
		wantFail(t, res, SourceTransport, TooManyRedirects)
		wantSummary(t, res, "too many redirects")
		if res.ResponseCode != http.StatusMovedPermanently {
			t.Errorf("ResponseCode = %d, want the last response's 301", res.ResponseCode)
		}
		if res.BodyAvailability != BodyNotRecorded {
			t.Errorf("BodyAvailability = %s", res.BodyAvailability)
		}
	})
	t.Run("307 resends the body", func(t *testing.T) {
		t.Parallel()
		req := uptime(ts.URL + "/r307")
		req.GetHttp().Method = "POST"
		req.GetHttp().Body = ptr(`{"hello":"world"}`)
		req.Assertions = []*vantagev1.Assertion{
			assertion(check.JSONBody, "$.method", check.Equals, "POST"),
			assertion(check.JSONBody, "$.body", check.Equals, `{"hello":"world"}`),
		}
		wantPass(t, run(t, p, req, 5*time.Second))
	})
}

func TestHTTPTimeout(t *testing.T) {
	t.Parallel()
	ts := newHTTPServer(t)
	p := NewHTTP()
	t.Run("waiting for the response", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		res := run(t, p, uptime(ts.URL+"/sleep"), 300*time.Millisecond)
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("the probe took %s, past its deadline", took)
		}
		wantFail(t, res, SourceTransport, Timeout)
		wantSummary(t, res, "timed out after", "waiting for the response")
		if res.ResponseTime < 300*time.Millisecond {
			t.Errorf("ResponseTime = %s, want at least the timeout", res.ResponseTime)
		}
		if res.ResponseCode != 0 || res.BodyAvailability != BodyNotRecorded {
			t.Errorf("got code %d, body %s; want none", res.ResponseCode, res.BodyAvailability)
		}
	})
	t.Run("reading the body", func(t *testing.T) {
		t.Parallel()
		res := run(t, p, uptime(ts.URL+"/slowbody"), 300*time.Millisecond)
		wantFail(t, res, SourceTransport, Timeout)
		wantSummary(t, res, "while reading the body")
		if res.ResponseCode != 200 || res.ResponseBody != "partial body " || res.BodyAvailability != BodyAvailable {
			t.Errorf("got %d %q %s; want 200 with the partial body", res.ResponseCode, res.ResponseBody, res.BodyAvailability)
		}
	})
}

func TestHTTPCancelled(t *testing.T) {
	t.Parallel()
	ts := newHTTPServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := NewHTTP().Probe(ctx, uptime(ts.URL+"/sleep"))
	if !errors.Is(err, ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want ErrCancelled", err)
	}
}

func TestHTTPTLS(t *testing.T) {
	t.Parallel()
	quiet := log.New(io.Discard, "", 0) // the failed handshakes are the point
	ts := httptest.NewUnstartedServer(testMux())
	ts.Config.ErrorLog = quiet
	ts.StartTLS()
	t.Cleanup(ts.Close)
	serverCert := ts.Certificate()

	expired := selfSignedCert(t, time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour))
	old := httptest.NewUnstartedServer(testMux())
	old.TLS = &tls.Config{Certificates: []tls.Certificate{expired}}
	old.Config.ErrorLog = quiet
	old.StartTLS()
	t.Cleanup(old.Close)

	trusted := x509.NewCertPool()
	trusted.AddCert(serverCert)
	trusted.AddCert(expired.Leaf)

	t.Run("unknown authority fails", func(t *testing.T) {
		t.Parallel()
		res := run(t, NewHTTP(), uptime(ts.URL+"/status/200"), 5*time.Second)
		wantFail(t, res, SourceTransport, TLSError)
		wantSummary(t, res, "TLS error", "certificate")
		if !res.CertNotAfter.Equal(serverCert.NotAfter) {
			t.Errorf("CertNotAfter = %s, want %s even when verification fails", res.CertNotAfter, serverCert.NotAfter)
		}
	})
	t.Run("verify_ssl false passes", func(t *testing.T) {
		t.Parallel()
		req := uptime(ts.URL + "/status/200")
		req.GetHttp().VerifySsl = false
		res := run(t, NewHTTP(), req, 5*time.Second)
		wantPass(t, res)
		if !res.CertNotAfter.Equal(serverCert.NotAfter) {
			t.Errorf("CertNotAfter = %s, want %s", res.CertNotAfter, serverCert.NotAfter)
		}
		if res.Timings.TLS <= 0 || res.Timings.Connect <= 0 || res.Timings.FirstByte <= 0 {
			t.Errorf("Timings = %+v, want connect, TLS and first byte measured", res.Timings)
		}
		if res.Timings.DNS != 0 {
			t.Errorf("Timings.DNS = %s for an IP address", res.Timings.DNS)
		}
		if res.Timings.Total < res.Timings.FirstByte || res.ResponseTime != res.Timings.Total {
			t.Errorf("Timings = %+v, ResponseTime = %s", res.Timings, res.ResponseTime)
		}
	})
	t.Run("trusted authority passes", func(t *testing.T) {
		t.Parallel()
		res := run(t, NewHTTP(WithRootCAs(trusted)), uptime(ts.URL+"/status/200"), 5*time.Second)
		wantPass(t, res)
	})
	t.Run("expired certificate fails", func(t *testing.T) {
		t.Parallel()
		res := run(t, NewHTTP(WithRootCAs(trusted)), uptime(old.URL+"/status/200"), 5*time.Second)
		wantFail(t, res, SourceTransport, TLSError)
		wantSummary(t, res, "expired")
		if !res.CertNotAfter.Equal(expired.Leaf.NotAfter) {
			t.Errorf("CertNotAfter = %s, want %s", res.CertNotAfter, expired.Leaf.NotAfter)
		}
	})
	t.Run("expired certificate with verify_ssl false passes", func(t *testing.T) {
		t.Parallel()
		req := uptime(old.URL + "/status/200")
		req.GetHttp().VerifySsl = false
		res := run(t, NewHTTP(), req, 5*time.Second)
		wantPass(t, res)
		if !res.CertNotAfter.Equal(expired.Leaf.NotAfter) {
			t.Errorf("CertNotAfter = %s, want %s", res.CertNotAfter, expired.Leaf.NotAfter)
		}
	})
	t.Run("plain HTTP server for an https URL", func(t *testing.T) {
		t.Parallel()
		plain := newHTTPServer(t)
		res := run(t, NewHTTP(), uptime(strings.Replace(plain.URL, "http://", "https://", 1)), 5*time.Second)
		wantFail(t, res, SourceTransport, TLSError)
	})
}

func TestHTTPConnectionRefused(t *testing.T) {
	t.Parallel()
	host, port := closedPort(t)
	res := run(t, NewHTTP(), uptime(fmt.Sprintf("http://%s:%d/", host, port)), 5*time.Second)
	wantFail(t, res, SourceTransport, ConnectionRefused)
	wantSummary(t, res, "connection refused")
	if res.ResponseCode != 0 || res.BodyAvailability != BodyNotRecorded || len(res.Assertions) != 0 {
		t.Errorf("got %+v, want no response", res)
	}
}

func TestHTTPBody(t *testing.T) {
	t.Parallel()
	ts := newHTTPServer(t)
	p := NewHTTP()
	t.Run("stored body is cut", func(t *testing.T) {
		t.Parallel()
		req := uptime(fmt.Sprintf("%s/size/%d", ts.URL, 100<<10))
		req.Assertions = []*vantagev1.Assertion{assertion(check.TextBody, "", check.Contains, strings.Repeat("a", 100<<10))}
		res := run(t, p, req, 5*time.Second)
		wantPass(t, res) // assertions see the whole body read
		if len(res.ResponseBody) != MaxBodyStored || res.BodyAvailability != BodyAvailable {
			t.Errorf("stored %d bytes (%s), want %d", len(res.ResponseBody), res.BodyAvailability, MaxBodyStored)
		}
	})
	t.Run("read is capped", func(t *testing.T) {
		t.Parallel()
		req := uptime(fmt.Sprintf("%s/size/%d", ts.URL, MaxBodyRead+10))
		req.GetHttp().TextToSearchFor = ptr(strings.Repeat("a", MaxBodyRead+1))
		res := run(t, p, req, 10*time.Second)
		wantFail(t, res, SourceAssertion, TextNotFound)
	})
	t.Run("json cut at the read limit", func(t *testing.T) {
		t.Parallel()
		req := uptime(fmt.Sprintf("%s/size/%d", ts.URL, MaxBodyRead+10))
		req.Assertions = []*vantagev1.Assertion{assertion(check.JSONBody, "$.a", check.Null, "")}
		res := run(t, p, req, 10*time.Second)
		wantFail(t, res, SourceAssertion, AssertionFailed)
		wantSummary(t, res, "not valid JSON", "cut at the read limit")
	})
	t.Run("HEAD has no body", func(t *testing.T) {
		t.Parallel()
		req := uptime(ts.URL + "/size/100")
		req.GetHttp().Method = "HEAD"
		res := run(t, p, req, 5*time.Second)
		wantPass(t, res)
		if res.ResponseBody != "" || res.BodyAvailability != BodyAvailable {
			t.Errorf("got %q %s, want an empty recorded body", res.ResponseBody, res.BodyAvailability)
		}
	})
	t.Run("binary body stored as valid UTF-8", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte{'o', 'k', 0xff, 0xfe}) }))
		t.Cleanup(srv.Close)
		res := run(t, p, uptime(srv.URL), 5*time.Second)
		wantPass(t, res)
		if res.ResponseBody != "ok\uFFFD" {
			t.Errorf("ResponseBody = %q", res.ResponseBody)
		}
	})
}

func TestHTTPTextToSearchFor(t *testing.T) {
	t.Parallel()
	ts := newHTTPServer(t)
	p := NewHTTP()
	req := uptime(ts.URL + "/json")
	req.GetHttp().TextToSearchFor = ptr(`"status":"ok"`)
	wantPass(t, run(t, p, req, 5*time.Second))

	req.GetHttp().TextToSearchFor = ptr("STATUS")
	res := run(t, p, req, 5*time.Second)
	wantFail(t, res, SourceAssertion, TextNotFound)
	wantSummary(t, res, `text "STATUS" not found`)

	// A bad status is reported first.
	req = uptime(ts.URL + "/status/500")
	req.GetHttp().TextToSearchFor = ptr("nowhere")
	wantFail(t, run(t, p, req, 5*time.Second), SourceAssertion, HTTPStatus)
}

func TestHTTPRequestShape(t *testing.T) {
	t.Parallel()
	ts := newHTTPServer(t)
	p := NewHTTP(WithVersion("v1.4.0"))
	t.Run("defaults", func(t *testing.T) {
		t.Parallel()
		req := uptime(ts.URL + "/echo")
		req.Region = "cloud:eu-central-1"
		req.Assertions = []*vantagev1.Assertion{
			assertion(check.JSONBody, "$.method", check.Equals, "GET"),
			assertion(check.JSONBody, "$.ua", check.Equals, "Vantage/1.4.0 (+region cloud:eu-central-1)"),
			assertion(check.JSONBody, "$.has_auth", check.False, ""),
			assertion(check.JSONBody, "$.body", check.Empty, ""),
		}
		wantPass(t, run(t, p, req, 5*time.Second))
	})
	for _, method := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			req := uptime(ts.URL + "/echo")
			req.GetHttp().Method = method
			req.GetHttp().Body = ptr("payload " + method)
			req.GetHttp().Headers = map[string]string{"X-Custom": "custom value", "User-Agent": "mine/2", "Host": "status.example.com"}
			req.Assertions = []*vantagev1.Assertion{
				assertion(check.JSONBody, "$.method", check.Equals, method),
				assertion(check.JSONBody, "$.body", check.Equals, "payload "+method),
				assertion(check.JSONBody, "$.x_custom", check.Equals, "custom value"),
				assertion(check.JSONBody, "$.ua", check.Equals, "mine/2"),
				assertion(check.JSONBody, "$.host", check.Equals, "status.example.com"),
			}
			wantPass(t, run(t, p, req, 5*time.Second))
		})
	}
	t.Run("basic auth", func(t *testing.T) {
		t.Parallel()
		req := uptime(ts.URL + "/auth")
		wantFail(t, run(t, p, req, 5*time.Second), SourceAssertion, HTTPStatus)
		req.GetHttp().AuthUsername, req.GetHttp().AuthPassword = ptr("vantage"), ptr("wrong")
		wantFail(t, run(t, p, req, 5*time.Second), SourceAssertion, HTTPStatus)
		req.GetHttp().AuthUsername, req.GetHttp().AuthPassword = ptr("vantage"), ptr("s3cret")
		res := run(t, p, req, 5*time.Second)
		wantPass(t, res)
		if res.ResponseBody != "welcome" {
			t.Errorf("ResponseBody = %q", res.ResponseBody)
		}
	})
	t.Run("basic auth empty user", func(t *testing.T) {
		t.Parallel()
		req := uptime(ts.URL + "/echo")
		req.GetHttp().AuthUsername, req.GetHttp().AuthPassword = ptr(""), ptr("pw")
		req.Assertions = []*vantagev1.Assertion{
			assertion(check.JSONBody, "$.has_auth", check.True, ""),
			assertion(check.JSONBody, "$.user", check.Empty, ""),
			assertion(check.JSONBody, "$.pass", check.Equals, "pw"),
		}
		wantPass(t, run(t, p, req, 5*time.Second))
	})
}

func TestHTTPAssertions(t *testing.T) {
	t.Parallel()
	ts := newHTTPServer(t)
	p := NewHTTP()
	passing := map[string][]*vantagev1.Assertion{
		"/json": {
			assertion(check.JSONBody, "$.status", check.Equals, "ok"),
			assertion(check.JSONBody, "$.checks.cache", check.NotEquals, "up"),
			assertion(check.JSONBody, "$.latency_ms", check.LessThan, "100"),
			assertion(check.JSONBody, "$.items", check.Contains, "3"),
			assertion(check.JSONBody, "$.maintenance", check.False, ""),
			assertion(check.JSONBody, "$.missing", check.Null, ""),
			assertion(check.TextBody, "", check.Contains, `"db":"up"`),
			assertion(check.ResponseHeaders, "content-type", check.Contains, "application/json"),
			assertion(check.ResponseHeaders, "X-Version", check.GreaterThan, "9"),
			assertion(check.ResponseHeaders, "X-Absent", check.Null, ""),
		},
		"/html": {
			assertion(check.HTMLBody, "h1.state", check.Equals, "All systems operational"),
			assertion(check.HTMLBody, "title", check.Contains, "status"),
			assertion(check.HTMLBody, "#count", check.GreaterThan, "6"),
			assertion(check.HTMLBody, ".missing", check.Null, ""),
			assertion(check.ResponseHeaders, "Content-Type", check.Equals, "text/html"),
		},
		"/echo": {
			assertion(check.ResponseHeaders, "x-multi", check.Equals, "one, two"),
		},
	}
	for path, as := range passing {
		t.Run("pass "+path, func(t *testing.T) {
			t.Parallel()
			req := uptime(ts.URL + path)
			req.Assertions = as
			res := run(t, p, req, 5*time.Second)
			wantPass(t, res)
			if len(res.Assertions) != len(as) {
				t.Fatalf("%d outcomes for %d assertions", len(res.Assertions), len(as))
			}
			for i, o := range res.Assertions {
				if o.Assertion != check.AssertionsOfJob(as)[i] {
					t.Errorf("outcome %d is for %+v, want %+v", i, o.Assertion, as[i])
				}
			}
		})
	}
	t.Run("fail", func(t *testing.T) {
		t.Parallel()
		req := uptime(ts.URL + "/json")
		req.Assertions = []*vantagev1.Assertion{
			assertion(check.JSONBody, "$.status", check.Equals, "ok"),
			assertion(check.JSONBody, "$.checks.cache", check.Equals, "up"),
			assertion(check.HTMLBody, "h1", check.NotNull, ""),
			assertion(check.ResponseHeaders, "X-Version", check.LessThan, "9"),
		}
		res := run(t, p, req, 5*time.Second)
		wantFail(t, res, SourceAssertion, AssertionFailed)
		wantSummary(t, res, `assertion failed: $.checks.cache: expected EQUALS "up", got "degraded" (and 2 more)`)
		passed := []bool{true, false, false, false}
		for i, o := range res.Assertions {
			if o.Passed != passed[i] {
				t.Errorf("outcome %d passed = %v: %s", i, o.Passed, o.Message)
			}
		}
		if res.Assertions[1].Actual != "degraded" {
			t.Errorf("Actual = %q", res.Assertions[1].Actual)
		}
	})
	t.Run("judged on a failing status too", func(t *testing.T) {
		t.Parallel()
		req := uptime(ts.URL + "/status/503")
		req.Assertions = []*vantagev1.Assertion{assertion(check.TextBody, "", check.Contains, "503")}
		res := run(t, p, req, 5*time.Second)
		wantFail(t, res, SourceAssertion, HTTPStatus)
		if len(res.Assertions) != 1 || !res.Assertions[0].Passed {
			t.Errorf("Assertions = %+v, want the one evaluated and passing", res.Assertions)
		}
	})
}

func TestHTTPSecretsRedacted(t *testing.T) {
	t.Parallel()
	ts := newHTTPServer(t)
	const secret = "tok-9f8e7d6c5b4a"
	req := uptime(ts.URL + "/echo")
	req.GetHttp().Headers = map[string]string{"X-Token": secret}
	req.GetHttp().AuthUsername, req.GetHttp().AuthPassword = ptr("svc"), ptr("pw-"+secret)
	req.Redact = []string{secret, "", "pw-" + secret}
	req.Assertions = []*vantagev1.Assertion{assertion(check.JSONBody, "$.token", check.Equals, "something else")}
	res := run(t, NewHTTP(), req, 5*time.Second)
	wantFail(t, res, SourceAssertion, AssertionFailed)
	basic := base64.StdEncoding.EncodeToString([]byte("svc:pw-" + secret))
	for name, text := range map[string]string{
		"body": res.ResponseBody, "summary": res.ResultSummary,
		"actual": res.Assertions[0].Actual, "message": res.Assertions[0].Message,
	} {
		if strings.Contains(text, secret) || strings.Contains(text, basic) || strings.Contains(text, "pw-") {
			t.Errorf("%s leaks a secret: %q", name, text)
		}
		if !strings.Contains(text, redact.Marker) {
			t.Errorf("%s has no %s: %q", name, redact.Marker, text)
		}
	}
	if !strings.Contains(res.ResponseBody, `"auth_header":"Basic [REDACTED]"`) {
		t.Errorf("the echoed Authorization header is not redacted: %s", res.ResponseBody)
	}

	t.Run("a secret across the stored limit", func(t *testing.T) {
		t.Parallel()
		const long = "SECRET-VALUE-0123456789"
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, strings.Repeat("x", MaxBodyStored-5)+long+"tail")
		}))
		t.Cleanup(srv.Close)
		req := uptime(srv.URL)
		req.Redact = []string{long}
		res := run(t, NewHTTP(), req, 5*time.Second)
		if strings.Contains(res.ResponseBody, "SECRE") {
			t.Errorf("the stored body ends with part of the secret: %q", res.ResponseBody[len(res.ResponseBody)-20:])
		}
	})
}

func TestHTTPPrivateTargets(t *testing.T) {
	t.Parallel()
	ts := newHTTPServer(t)
	dnsSrv := startDNS(t)
	_, port, _ := strings.Cut(strings.TrimPrefix(ts.URL, "http://"), ":")
	deny := NewHTTP(WithPrivateTargets(false), WithResolver(dnsSrv.resolver()))
	t.Run("loopback address refused", func(t *testing.T) {
		t.Parallel()
		res := run(t, deny, uptime(ts.URL+"/status/200"), 5*time.Second)
		wantFail(t, res, SourceTransport, ForbiddenTarget)
		wantSummary(t, res, "127.0.0.1 is a loopback address")
	})
	t.Run("name resolving to loopback refused", func(t *testing.T) {
		t.Parallel()
		res := run(t, deny, uptime("http://loop.test:"+port+"/status/200"), 5*time.Second)
		wantFail(t, res, SourceTransport, ForbiddenTarget)
		if res.Timings.DNS <= 0 {
			t.Errorf("Timings.DNS = %s, want the lookup measured", res.Timings.DNS)
		}
	})
	t.Run("name resolving to a private address refused", func(t *testing.T) {
		t.Parallel()
		res := run(t, deny, uptime("http://private.test:"+port+"/"), 5*time.Second)
		wantFail(t, res, SourceTransport, ForbiddenTarget)
		wantSummary(t, res, "10.1.2.3 is a private address")
	})
	t.Run("allowed by default", func(t *testing.T) {
		t.Parallel()
		res := run(t, NewHTTP(WithResolver(dnsSrv.resolver())), uptime("http://loop.test:"+port+"/status/200"), 5*time.Second)
		wantPass(t, res)
	})
}

func TestHTTPDNSError(t *testing.T) {
	t.Parallel()
	dnsSrv := startDNS(t)
	res := run(t, NewHTTP(WithResolver(dnsSrv.resolver())), uptime("http://nowhere.test/"), 5*time.Second)
	wantFail(t, res, SourceTransport, DNSError)
	wantSummary(t, res, "DNS resolution failed", "nowhere.test")
}

func TestHTTPInvalidRequest(t *testing.T) {
	t.Parallel()
	p := NewHTTP()
	for name, req := range map[string]*vantagev1.CheckJob{
		"scheme":           uptime("ftp://127.0.0.1/"),
		"no host":          uptime("http:///path"),
		"unparseable":      uptime("http://[::1"),
		"method":           httpJob(&vantagev1.HTTPSpec{Url: ptr("http://127.0.0.1/"), Method: "TRACE"}),
		"header name":      httpJob(&vantagev1.HTTPSpec{Url: ptr("http://127.0.0.1/"), Headers: map[string]string{"Bad Name": "x"}}),
		"header value":     httpJob(&vantagev1.HTTPSpec{Url: ptr("http://127.0.0.1/"), Headers: map[string]string{"X-A": "a\r\nX-B: b"}}),
		"no specification": {Kind: vantagev1.CheckKind_CHECK_KIND_UPTIME},
		"assertion": httpJob(&vantagev1.HTTPSpec{Url: ptr("http://127.0.0.1/")},
			assertion(check.JSONBody, "$[", check.NotNull, "")),
		"assertion of another kind": httpJob(&vantagev1.HTTPSpec{Url: ptr("http://127.0.0.1/")},
			assertion(check.DNSResponseCode, "status", check.Equals, "NOERROR")),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			wantFail(t, run(t, p, req, time.Second), SourceTransport, InvalidRequest)
		})
	}
}

// TestHTTPProtocols: a plain-HTTP target is probed over HTTP/1.1 without HTTP/2 set up, and an
// HTTPS target, directly or at the end of a redirect from plain HTTP, over HTTP/2 when it
// offers it.
func TestHTTPProtocols(t *testing.T) {
	t.Parallel()
	protos := make(chan string, 4)
	secure := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos <- r.Proto
		fmt.Fprint(w, "ok")
	}))
	secure.EnableHTTP2 = true
	secure.StartTLS()
	t.Cleanup(secure.Close)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/to-secure" {
			http.Redirect(w, r, secure.URL+"/", http.StatusFound)
			return
		}
		protos <- r.Proto
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(plain.Close)
	roots := x509.NewCertPool()
	roots.AddCert(secure.Certificate())
	p := NewHTTP(WithRootCAs(roots))
	for _, c := range []struct{ url, want string }{
		{plain.URL + "/", "HTTP/1.1"},
		{secure.URL + "/", "HTTP/2.0"},
		{plain.URL + "/to-secure", "HTTP/2.0"},
	} {
		res := run(t, p, uptime(c.url), 5*time.Second)
		wantPass(t, res)
		if got := <-protos; got != c.want {
			t.Errorf("%s was probed over %s, want %s", c.url, got, c.want)
		}
	}
}
