package badge

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the example badges of docs/console.md")

// TestDocsBadges keeps the example badges of docs/console.md as this package draws them;
// -update rewrites them.
func TestDocsBadges(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "docs", "img")
	for name, b := range map[string]Badge{
		"badge-status.svg":   Status("UP"),
		"badge-uptime.svg":   Uptime("30d", 99.98, true),
		"badge-response.svg": Response("24h", 123*time.Millisecond, 1),
	} {
		path := filepath.Join(dir, name)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b.SVG(), 0o644); err != nil { //nolint:gosec // a public document
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path) //nolint:gosec // a path of this repository
		if err != nil || !bytes.Equal(got, b.SVG()) {
			t.Errorf("%s is not the badge this package draws (%v): go test ./controlplane/internal/badge -run TestDocsBadges -update", path, err)
		}
	}
}
