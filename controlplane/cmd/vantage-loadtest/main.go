// Command vantage-loadtest drives a running control plane over HTTP from a separate process and
// reports throughput and latency percentiles per scenario. `make bench` runs it against a fresh
// database; see README "Benchmarks".
//
//	vantage-loadtest -addr http://127.0.0.1:8080 -token $TOKEN -seed 10000 -duration 10s
//
// The statuspage scenario needs no token: it GETs one public status page (-page, a URL or a
// path on -addr, e.g. /status/acme) repeatedly, as browsers do (gzip accepted).
//
//	vantage-loadtest -scenarios statuspage -page /status/acme -duration 20s -concurrency 16
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "vantage-loadtest:", err)
		os.Exit(1)
	}
}

type options struct {
	addr        string
	token       string
	seed        int
	duration    time.Duration
	concurrency int
	scenarios   string
	page        string
}

func run(ctx context.Context, args []string, out io.Writer) error {
	var o options
	fs := flag.NewFlagSet("vantage-loadtest", flag.ContinueOnError)
	fs.StringVar(&o.addr, "addr", "http://127.0.0.1:8080", "control plane base URL")
	fs.StringVar(&o.token, "token", os.Getenv("VANTAGE_TOKEN"), "API token (default $VANTAGE_TOKEN)")
	fs.IntVar(&o.seed, "seed", 10000, "checks to create first (through POST /v1/checks, measured as the post scenario)")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "duration of each read scenario")
	fs.IntVar(&o.concurrency, "concurrency", 16, "concurrent client connections")
	fs.StringVar(&o.scenarios, "scenarios", "post,get,list", "comma-separated scenarios: post, get, list, statuspage")
	fs.StringVar(&o.page, "page", "", "the statuspage scenario's page: a URL, or a path on -addr such as /status/acme")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.token == "" && strings.TrimSpace(o.scenarios) != "statuspage" {
		return errors.New("-token (or VANTAGE_TOKEN) is required")
	}
	c := &client{base: strings.TrimRight(o.addr, "/"), token: o.token, http: &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{MaxIdleConns: o.concurrency * 2, MaxIdleConnsPerHost: o.concurrency * 2},
	}}
	fmt.Fprintf(out, "%-34s %10s %9s %9s %9s %9s %7s\n", "scenario", "requests", "ok req/s", "p50 ms", "p99 ms", "p99.9 ms", "errors")
	var ids []string
	for _, sc := range strings.Split(o.scenarios, ",") {
		switch strings.TrimSpace(sc) {
		case "post":
			var mu sync.Mutex
			r := c.fixed(ctx, o.concurrency, o.seed, func(i int) (int, error) {
				body := fmt.Sprintf(`{"name":"load check %d","url":"https://example.com/health/%d","test_interval":60}`, i, i)
				status, res, err := c.do(http.MethodPost, "/v1/checks", body)
				if err == nil && status == http.StatusCreated {
					var env struct{ Result struct{ ID string } }
					if json.Unmarshal(res, &env) == nil {
						mu.Lock()
						ids = append(ids, env.Result.ID)
						mu.Unlock()
					}
				}
				return status, err
			})
			r.print(out, "POST /v1/checks", http.StatusCreated)
		case "get":
			if len(ids) == 0 {
				return errors.New("the get scenario needs the post scenario first (it reads the checks it created)")
			}
			var n atomic.Int64
			r := c.timed(ctx, o.concurrency, o.duration, func() (int, error) {
				id := ids[int(n.Add(1))%len(ids)]
				status, _, err := c.do(http.MethodGet, "/v1/checks/"+id, "")
				return status, err
			})
			r.print(out, "GET /v1/checks/{id}", http.StatusOK)
		case "list":
			var n atomic.Int64
			pages := max(1, len(ids)/100)
			r := c.timed(ctx, o.concurrency, o.duration, func() (int, error) {
				page := int(n.Add(1))%pages + 1
				status, _, err := c.do(http.MethodGet, fmt.Sprintf("/v1/checks?per_page=100&page=%d", page), "")
				return status, err
			})
			r.print(out, fmt.Sprintf("GET /v1/checks?per_page=100 (%d)", len(ids)), http.StatusOK)
		case "statuspage":
			if o.page == "" {
				return errors.New("the statuspage scenario needs -page (e.g. /status/acme)")
			}
			target := o.page
			if !strings.Contains(target, "://") {
				target = c.base + "/" + strings.TrimLeft(target, "/")
			}
			var size atomic.Int64
			r := c.timed(ctx, o.concurrency, o.duration, func() (int, error) {
				status, n, err := c.page(target)
				size.Store(n)
				return status, err
			})
			r.print(out, fmt.Sprintf("GET status page (%d KB)", size.Load()/1024), http.StatusOK)
		default:
			return fmt.Errorf("unknown scenario %q", sc)
		}
	}
	return nil
}

type client struct {
	base, token string
	http        *http.Client
}

func (c *client) do(method, path, body string) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, err = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes(), err
}

// page GETs a public page without credentials, accepting gzip like a browser (the transport
// decompresses), and returns the status and the decompressed size.
func (c *client) page(url string) (int, int64, error) {
	resp, err := c.http.Get(url)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, n, err
}

type report struct {
	latencies []time.Duration
	statuses  map[int]int
	errs      int
	elapsed   time.Duration
}

// fixed runs n requests over `workers` connections.
func (c *client) fixed(ctx context.Context, workers, n int, fn func(i int) (int, error)) report {
	var next atomic.Int64
	return c.load(ctx, workers, func() (int, error, bool) {
		i := int(next.Add(1)) - 1
		if i >= n {
			return 0, nil, false
		}
		s, err := fn(i)
		return s, err, true
	})
}

// timed runs requests over `workers` connections for d.
func (c *client) timed(ctx context.Context, workers int, d time.Duration, fn func() (int, error)) report {
	deadline := time.Now().Add(d)
	return c.load(ctx, workers, func() (int, error, bool) {
		if time.Now().After(deadline) {
			return 0, nil, false
		}
		s, err := fn()
		return s, err, true
	})
}

func (c *client) load(ctx context.Context, workers int, step func() (int, error, bool)) report {
	start := time.Now()
	results := make([]report, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := report{statuses: map[int]int{}}
			for ctx.Err() == nil {
				t0 := time.Now()
				status, err, more := step()
				if !more {
					break
				}
				r.latencies = append(r.latencies, time.Since(t0))
				if err != nil {
					r.errs++
				} else {
					r.statuses[status]++
				}
			}
			results[w] = r
		}()
	}
	wg.Wait()
	total := report{statuses: map[int]int{}, elapsed: time.Since(start)}
	for _, r := range results {
		total.latencies = append(total.latencies, r.latencies...)
		total.errs += r.errs
		for k, v := range r.statuses {
			total.statuses[k] += v
		}
	}
	return total
}

func (r report) print(out io.Writer, name string, wantStatus int) {
	slices.Sort(r.latencies)
	pct := func(p float64) float64 {
		if len(r.latencies) == 0 {
			return 0
		}
		i := min(len(r.latencies)-1, int(p*float64(len(r.latencies))))
		return float64(r.latencies[i].Microseconds()) / 1000
	}
	bad := r.errs
	for s, n := range r.statuses {
		if s != wantStatus {
			bad += n
		}
	}
	// The rate counts successes only: a server answering errors quickly must not read as fast.
	ok := r.statuses[wantStatus]
	fmt.Fprintf(out, "%-34s %10d %9.0f %9.2f %9.2f %9.2f %7d\n", name, len(r.latencies),
		float64(ok)/r.elapsed.Seconds(), pct(0.50), pct(0.99), pct(0.999), bad)
}
