package browser

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUnwrapLauncher: a launcher script that forks the browser (Debian's
// /usr/bin/chromium-headless-shell runs `/usr/lib/chromium/chromium-headless-shell "$@"`) is
// replaced by the browser itself, which the agent can then start with its death signal.
func TestUnwrapLauncher(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o700); err != nil { //nolint:gosec // an executable test file
			t.Fatal(err)
		}
		return p
	}
	browser := write("browser", "\x7fELF not really, but not a script either")
	for _, c := range []struct {
		name, script, want string
	}{
		{"forking launcher", "#!/bin/sh\n# comments\n\n" + browser + " \"$@\"\n", browser},
		{"exec launcher", "#!/bin/sh\nexport X=1\nexec " + browser + " \"$@\"\n", browser},
		{"launcher of a missing browser", "#!/bin/sh\n/nowhere/chromium \"$@\"\n", ""},
		{"other script", "#!/bin/sh\necho hello\n", ""},
	} {
		path := write(c.name, c.script)
		want := c.want
		if want == "" {
			want = path
		}
		if got := unwrap(path); got != want {
			t.Errorf("%s: unwrap = %s, want %s", c.name, got, want)
		}
	}
	if got := unwrap(browser); got != browser {
		t.Errorf("a binary: unwrap = %s, want itself", got)
	}
	// The browser found on this machine is never a launcher script.
	if p, err := FindExecutable(""); err == nil {
		b, err := os.ReadFile(p) //nolint:gosec // the machine's browser
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 2 && string(b[:2]) == "#!" {
			t.Errorf("FindExecutable returned the launcher script %s", p)
		}
	}
}
