package browser

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/agent/internal/browser/scriptworker"
)

// startBrowser starts the agent's browser for t with cfg (real Chromium; a missing Chromium
// fails the test) and stops it when t ends.
func startBrowser(t testing.TB, cfg Config) *Browser {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Chromium; skipped under -short (make test-short)")
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 2
	}
	if cfg.WorkerCommand == nil {
		cfg.WorkerCommand = []string{os.Args[0], scriptworker.Command}
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	b, err := New(cfg, Deps{Logger: log, Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatalf("Chromium is required (apt-get install chromium-headless-shell): %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := b.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := b.Run(ctx); err != nil {
			t.Errorf("browser: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the browser did not stop within 30s")
		}
	})
	return b
}
