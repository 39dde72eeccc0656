//go:build cluster

package cluster

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// target is the HTTP server the checks probe, on the test host: /ok always answers 200,
// /outage answers 503 while an outage is on.
type target struct {
	url    string
	outage atomic.Bool
}

func startTarget(t *testing.T) *target {
	t.Helper()
	tg := &target{}
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("/outage", func(w http.ResponseWriter, _ *http.Request) {
		if tg.outage.Load() {
			http.Error(w, "outage", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	tg.url = serve(t, mux)
	return tg
}

// receiver is the webhook receiver: it counts deliveries per event type and subject — the
// check, or the region of an agent region event — and the distinct event ids (deliveries are
// at least once; the id names the event).
type receiver struct {
	url string

	mu         sync.Mutex
	deliveries map[string]int             // "type subject" → deliveries
	events     map[string]map[string]bool // "type subject" → event ids
	first      map[string]time.Time       // "type subject" → first delivery
	types      map[string]int             // type → deliveries
}

func startReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{deliveries: map[string]int{}, events: map[string]map[string]bool{}, first: map[string]time.Time{}, types: map[string]int{}}
	r.url = serve(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var ev struct {
			ID   string `json:"id"`
			Type string `json:"type"`
			Data struct {
				Check struct {
					ID string `json:"id"`
				} `json:"check"`
				Region string `json:"region"` // of agent.region_unserved and agent.region_served
			} `json:"data"`
		}
		if err := json.NewDecoder(req.Body).Decode(&ev); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		subject := ev.Data.Check.ID
		if subject == "" {
			subject = ev.Data.Region
		}
		key := ev.Type + " " + subject
		r.mu.Lock()
		r.deliveries[key]++
		r.types[ev.Type]++
		if r.events[key] == nil {
			r.events[key] = map[string]bool{}
			r.first[key] = time.Now()
		}
		r.events[key][ev.ID] = true
		r.mu.Unlock()
	}))
	return r
}

// count is (deliveries, distinct events) of eventType for subject (a check id or a region).
func (r *receiver) count(eventType, subject string) (int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := eventType + " " + subject
	return r.deliveries[key], len(r.events[key])
}

// firstAt is when the first event of eventType for subject arrived (zero: none yet).
func (r *receiver) firstAt(eventType, subject string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first[eventType+" "+subject]
}

func (r *receiver) byType() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.types {
		out[k] = v
	}
	return out
}

// serve serves h on the test host's bridge address and returns its base URL.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", hostIP+":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + l.Addr().String()
}
