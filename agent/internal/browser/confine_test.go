package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"golang.org/x/sys/unix"
)

// TestBrowserFileView checks the operating-system layer beneath the scheme guard: Chromium
// cannot read a file outside its file view even when asked over DevTools in a way no URL is
// involved in (a file input set by path, read by the page), while it still reads a file of the
// view; none of the agent's environment reaches the browser; and the agent's /proc entries are
// closed to it (non-dumpable).
func TestBrowserFileView(t *testing.T) {
	marker := fmt.Sprintf("vantage-secret-%d", time.Now().UnixNano())
	t.Setenv("VANTAGE_AGENT_TOKEN", marker) // as the agent's token reaches it
	secret := filepath.Join(t.TempDir(), "nats.creds")
	if err := os.WriteFile(secret, []byte(marker+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t, Config{})

	if d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || d != 0 {
		t.Errorf("the agent is dumpable (%d, %v): its /proc entries are open to its browser", d, err)
	}
	inst, err := b.current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if inst.proc.unconfined != nil {
		t.Fatalf("the browser is not confined: %v", inst.proc.unconfined)
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(inst.proc.pid()) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(env), marker) || strings.Contains(string(env), "VANTAGE_") {
		t.Errorf("the browser has the agent's environment: %q", env)
	}

	read := func(path string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := b.newSession(ctx, attached)
		if err != nil {
			t.Fatal(err)
		}
		defer s.close()
		tab, closeTab := s.page(ctx)
		defer closeTab()
		if _, err := chromedp.Run(tab, chromedp.NavigateResponse("data:text/html,<input type=file>")); err != nil {
			t.Fatal(err)
		}
		input, err := chromedp.Call(tab, runtime.Evaluate, runtime.EvaluateParams{Expression: "document.querySelector('input')"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Call(tab, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: []string{path}, ObjectID: input.Result.ObjectID}); err != nil {
			return "not set: " + err.Error()
		}
		got, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('input').files[0].text().catch(e => 'unreadable: ' + e.name)`,
			chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := read(secret); strings.Contains(got, marker) {
		t.Errorf("the browser read %s, outside its file view: %q", secret, got)
	} else {
		t.Logf("%s: %s", secret, got)
	}
	if got := read("/etc/hosts"); !strings.Contains(got, "localhost") {
		t.Errorf("the browser could not read /etc/hosts, inside its file view: %q", got)
	}
}
