package browser

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"
)

func pageServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>ok</title><h1>Hello</h1>`)
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func (b *Browser) pid(t *testing.T) int {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.inst == nil {
		t.Fatal("no browser running")
	}
	return b.inst.proc.pid()
}

func visitOK(t *testing.T, b *Browser, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := b.Visit(ctx, VisitRequest{URL: url}, nil)
	if err != nil || p.Status != 200 {
		t.Fatalf("visit %s: %v, page %+v", url, err, p)
	}
}

// waitRestarted waits until the browser runs again under another process than old.
func waitRestarted(t *testing.T, b *Browser, old int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		b.mu.Lock()
		inst := b.inst
		b.mu.Unlock()
		if inst != nil && inst.proc.pid() != old && !inst.gone() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the browser was not restarted within 30s")
}

// A browser that crashes mid-check fails that check as the agent's (ErrBrowserLost), is
// started again, and the next check runs.
func TestBrowserRestartsAfterCrash(t *testing.T) {
	t.Parallel()
	b := startBrowser(t, Config{})
	srv := pageServer(t)
	visitOK(t, b, srv.URL)

	old := b.pid(t)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := b.Visit(ctx, VisitRequest{URL: srv.URL + "/hang"}, nil)
		done <- err
	}()
	time.Sleep(500 * time.Millisecond) // the visit waits for /hang
	if err := syscall.Kill(-old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrBrowserLost) {
			t.Fatalf("the check in flight ended with %v, want ErrBrowserLost", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the check in flight did not end when the browser crashed")
	}
	waitRestarted(t, b, old)
	visitOK(t, b, srv.URL)
}

// A browser that stops answering is killed and started again; its check ends as the agent's.
func TestBrowserRestartsWhenHung(t *testing.T) {
	t.Parallel()
	b := startBrowser(t, Config{HealthInterval: 200 * time.Millisecond, HealthTimeout: 300 * time.Millisecond})
	srv := pageServer(t)
	visitOK(t, b, srv.URL)
	old := b.pid(t)
	if err := syscall.Kill(-old, syscall.SIGSTOP); err != nil { // the browser and its renderers freeze
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := b.Visit(ctx, VisitRequest{URL: srv.URL}, nil)
	if !errors.Is(err, ErrBrowserLost) {
		t.Fatalf("a check on the hung browser ended with %v, want ErrBrowserLost", err)
	}
	waitRestarted(t, b, old)
	visitOK(t, b, srv.URL)
}

// Checks do not share cookies or storage: each gets a browser context of its own.
func TestChecksAreIsolated(t *testing.T) {
	t.Parallel()
	b := startBrowser(t, Config{})
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Cookie("visited")
		seen := "first visit"
		if c != nil {
			seen = "cookie " + c.Value
		}
		http.SetCookie(w, &http.Cookie{Name: "visited", Value: "yes"})
		fmt.Fprintf(w, `<!doctype html><p id=cookie>%s</p><p id=storage></p>
			<script>document.getElementById('storage').textContent = localStorage.getItem('k') || 'empty'; localStorage.setItem('k', 'set')</script>`, seen)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		p, err := b.Visit(ctx, VisitRequest{URL: srv.URL}, nil)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(p.HTML, "first visit") || !strings.Contains(p.HTML, `<p id="storage">empty</p>`) {
			t.Fatalf("visit %d saw state of an earlier check: %s", i+1, p.HTML)
		}
	}
}

// At most Concurrency checks use the browser at once; the others wait for a slot.
func TestConcurrencyBound(t *testing.T) {
	t.Parallel()
	b := startBrowser(t, Config{Concurrency: 1})
	srv := pageServer(t)
	hold, cancelHold := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancelHold()
	go b.Visit(hold, VisitRequest{URL: srv.URL + "/hang"}, nil) //nolint:errcheck // holds the slot until hold ends
	time.Sleep(300 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := b.Visit(ctx, VisitRequest{URL: srv.URL}, nil); !errors.Is(err, ErrBrowserLost) || !strings.Contains(err.Error(), "no browser slot") {
		t.Fatalf("a second check with the only slot taken: %v, want it to wait for a slot until its deadline", err)
	}
	cancelHold()
	visitOK(t, b, srv.URL)
}
