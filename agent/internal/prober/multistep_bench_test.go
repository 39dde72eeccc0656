package prober

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// BenchmarkMultistep measures multistep checks per second beside a bare Go loop making the same
// HTTP calls, interleaved in the same run so that both see the same machine: a login (POST
// JSON, read the token), then a list with the token (GET, parse the JSON, count the items), on
// a transport of each check's own that keeps its connection between the two calls — as the
// request fixture does within a run.
//
//	make bench-agent   (or: go test -run '^$' -bench '^BenchmarkMultistep$' -benchtime 2000x ./agent/internal/prober/)
//
// multistep-checks/s and bare-checks/s are the two rates; ratio is multistep over bare.
func BenchmarkMultistep(b *testing.B) {
	api := loginAPI(b)
	p := NewMultistep(WithScriptHeapLimit(0))
	job := multistepJob(loginScript, func(j *vantagev1.CheckJob) {
		j.Env = map[string]string{"API": api.URL, "PASSWORD": "s3cret-pass"}
		j.Redact = []string{"s3cret-pass"}
	})
	var multistep, bare time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		ctx, cancel := context.WithTimeout(b.Context(), 10*time.Second)
		res, err := p.Probe(ctx, job)
		cancel()
		multistep += time.Since(start)
		if err != nil || !res.Passing {
			b.Fatalf("multistep: %v %s", err, res.ResultSummary)
		}
		start = time.Now()
		if err := bareLogin(b.Context(), api.URL); err != nil {
			b.Fatal(err)
		}
		bare += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(n/multistep.Seconds(), "multistep-checks/s")
	b.ReportMetric(n/bare.Seconds(), "bare-checks/s")
	b.ReportMetric(bare.Seconds()/multistep.Seconds(), "ratio")
}

// bareLogin is the multistep benchmark's script written in Go.
func bareLogin(ctx context.Context, base string) error {
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	body, _ := json.Marshal(map[string]string{"password": "s3cret-pass"})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/login", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	var login struct{ Token string }
	if err := doJSON(client, req, &login); err != nil {
		return err
	}
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, base+"/items", nil)
	req.Header.Set("Authorization", "Bearer "+login.Token)
	var items []map[string]any
	if err := doJSON(client, req, &items); err != nil {
		return err
	}
	if len(items) != 2 {
		return fmt.Errorf("%d items", len(items))
	}
	return nil
}

func doJSON(c *http.Client, req *http.Request, v any) error {
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %d", req.URL.Path, resp.StatusCode)
	}
	return json.Unmarshal(b, v)
}
