package prober

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// uaTarget records the User-Agent of every request it gets, by path.
type uaTarget struct {
	*httptest.Server
	mu  sync.Mutex
	got map[string]string
}

func newUATarget(t *testing.T) *uaTarget {
	t.Helper()
	u := &uaTarget{got: map[string]string{}}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.got[r.URL.Path] = r.UserAgent()
		u.mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>ua</title><h1>ok</h1>`))
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *uaTarget) ua(path string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.got[path]
}

// TestUserAgent: HTTP probes, browser URL checks and browser scripts send
// "Vantage/<version> (+region <region>)" to a local target; a check's own User-Agent header
// wins.
func TestUserAgent(t *testing.T) {
	t.Parallel()
	const region, want = "cloud:eu-central-1", "Vantage/1.4.0 (+region cloud:eu-central-1)"
	target := newUATarget(t)
	inRegion := func(j *vantagev1.CheckJob) *vantagev1.CheckJob { j.Region = region; return j }

	t.Run("http", func(t *testing.T) {
		t.Parallel()
		p := NewHTTP(WithVersion("v1.4.0"))
		wantPass(t, run(t, p, inRegion(uptime(target.URL+"/http")), 5*time.Second))
		if got := target.ua("/http"); got != want {
			t.Errorf("HTTP probe User-Agent = %q, want %q", got, want)
		}
		own := inRegion(uptime(target.URL + "/http-own"))
		own.GetHttp().Headers = map[string]string{"user-agent": "mine/2"}
		wantPass(t, run(t, p, own, 5*time.Second))
		if got := target.ua("/http-own"); got != "mine/2" {
			t.Errorf("HTTP probe with its own header: User-Agent = %q, want mine/2", got)
		}
	})
	t.Run("browser url", func(t *testing.T) {
		t.Parallel()
		p := NewBrowser(testBrowser(t, false), WithVersion("v1.4.0"))
		wantPass(t, probeJob(t, p, inRegion(browserURLJob(target.URL+"/page", 20*time.Second, nil))))
		if got := target.ua("/page"); got != want {
			t.Errorf("browser URL check User-Agent = %q, want %q", got, want)
		}
		own := inRegion(browserURLJob(target.URL+"/page-own", 20*time.Second, func(j *vantagev1.CheckJob) {
			j.GetBrowser().Headers = map[string]string{"User-Agent": "mine/3"}
		}))
		wantPass(t, probeJob(t, p, own))
		if got := target.ua("/page-own"); got != "mine/3" {
			t.Errorf("browser URL check with its own header: User-Agent = %q, want mine/3", got)
		}
	})
	t.Run("browser script", func(t *testing.T) {
		t.Parallel()
		p := NewBrowser(testBrowser(t, false), WithVersion("v1.4.0"))
		script := `import { test, expect } from '@playwright/test';
test('ua', async ({ page }) => {
  await page.goto('` + target.URL + `/script');
  await expect(page.locator('h1')).toHaveText('ok');
});`
		wantPass(t, probeJob(t, p, inRegion(scriptJob(script, 30*time.Second, nil))))
		if got := target.ua("/script"); got != want {
			t.Errorf("browser script User-Agent = %q, want %q", got, want)
		}
	})
}
