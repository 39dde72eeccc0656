package prober

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/vantagehq/vantage/pkg/check"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// The two benchmarks below make one new loopback connection per operation against the same
// server, so they can be compared: BenchmarkRawHTTPClient is Go's http.Client with a fresh
// Transport per request (the ceiling), BenchmarkHTTPProbe is a whole probe (request building,
// tracing, body read, a JSON and a header assertion, redaction, result).
//
//	go test -bench . -benchtime 3s -run '^$' ./agent/internal/prober/

const benchBody = `{"status":"ok","version":"1.2.3","checks":{"db":"up"}}`

func benchServer(b *testing.B) *httptest.Server {
	b.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, benchBody)
	}))
	b.Cleanup(ts.Close)
	return ts
}

func BenchmarkHTTPProbe(b *testing.B) {
	ts := benchServer(b)
	p := NewHTTP()
	req := httpJob(&vantagev1.HTTPSpec{Url: ptr(ts.URL + "/health"), FollowRedirects: true, VerifySsl: true, TextToSearchFor: ptr(`"ok"`)},
		assertion(check.JSONBody, "$.checks.db", check.Equals, "up"),
		assertion(check.ResponseHeaders, "content-type", check.Contains, "json"))
	req.Redact = []string{"not-in-the-body"}
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithTimeout(b.Context(), 5*time.Second)
		res, err := p.Probe(ctx, req)
		cancel()
		if err != nil || !res.Passing {
			b.Fatalf("probe: %v %s", err, res.ResultSummary)
		}
	}
}

func BenchmarkRawHTTPClient(b *testing.B) {
	ts := benchServer(b)
	b.ReportAllocs()
	for b.Loop() {
		tr := &http.Transport{DisableKeepAlives: true}
		client := &http.Client{Transport: tr}
		ctx, cancel := context.WithTimeout(b.Context(), 5*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/health", nil)
		if err != nil {
			b.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		tr.CloseIdleConnections()
		cancel()
		if err != nil || resp.StatusCode != 200 || len(body) != len(benchBody) {
			b.Fatalf("got %d, %d bytes, %v", resp.StatusCode, len(body), err)
		}
	}
}
