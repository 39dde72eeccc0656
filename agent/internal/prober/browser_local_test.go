package prober

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBrowserChecksCannotReadTheAgentsFiles tries every way a browser check could load a file
// of the agent's host (or another non-web URL) in real Chromium: each check fails as the
// script's (or its URL's) fault with "not allowed: <scheme>:", and nothing of the file — a
// marker only it holds — is anywhere in the result.
func TestBrowserChecksCannotReadTheAgentsFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker := fmt.Sprintf("vantage-secret-%d", time.Now().UnixNano())
	secret := filepath.Join(dir, "nats.creds")
	if err := os.WriteFile(secret, []byte(marker+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fileURL := "file://" + secret
	dirURL := "file://" + dir + "/"

	mux := http.NewServeMux()
	page := func(path, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "<!doctype html><title>page</title>"+body)
		})
	}
	page("/location", `<script>location.href = '`+fileURL+`'</script>`)
	page("/link", `<a href="`+fileURL+`">the file</a>`)
	page("/open", `<script>window.open('`+fileURL+`')</script>`)
	page("/iframe", `<iframe src="`+fileURL+`"></iframe>`)
	page("/fetch", `<script>fetch('`+fileURL+`').then(r => r.text()).then(t => document.title = t, e => document.title = 'refused')</script>`)
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, fileURL, http.StatusFound) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	// read ends every script: whatever the page (or its frames) shows fails the check with it,
	// so that a file that loaded would be in the result.
	const read = `
  const shown = await page.evaluate(() => [document.title, document.body ? document.body.innerText : '',
    ...[...document.querySelectorAll('iframe')].map(f => { try { return f.contentDocument.body.innerText } catch (e) { return '' } })].join(' '));
  expect(shown).toBe('nothing of the file');
`
	script := func(body string) string {
		return scriptHead + "test('reach', async ({ page }) => {\n" + body + read + "});\n"
	}
	p := NewBrowser(testBrowser(t, false))
	tests := []struct {
		name, script, scheme string
	}{
		{"goto file", script(`  await page.goto('` + fileURL + `');`), "file"},
		{"goto a directory", script(`  await page.goto('` + dirURL + `');`), "file"},
		{"goto view-source", script(`  await page.goto('view-source:` + fileURL + `');`), "view-source"},
		{"goto chrome", script(`  await page.goto('chrome://version');`), "chrome"},
		{"location.href from a web page", script(`  await page.goto('` + srv.URL + `/location');
  await page.waitForTimeout(300);`), "file"},
		{"location.href from page.evaluate", script(`  await page.goto('` + srv.URL + `/link');
  await page.evaluate(u => { location.href = u }, '` + fileURL + `');
  await page.waitForTimeout(300);`), "file"},
		{"link click", script(`  await page.goto('` + srv.URL + `/link');
  await page.getByText('the file').click();
  await page.waitForTimeout(300);`), "file"},
		{"window.open", script(`  await page.goto('` + srv.URL + `/open');
  await page.waitForTimeout(300);`), "file"},
		{"iframe src", script(`  await page.goto('` + srv.URL + `/iframe');
  await page.waitForTimeout(300);`), "file"},
		{"redirect", script(`  await page.goto('` + srv.URL + `/redirect');`), "file"},
		{"fetch", script(`  await page.goto('` + srv.URL + `/fetch');
  await page.waitForTimeout(300);`), "file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := probeJob(t, p, scriptJob(tc.script, 15*time.Second, nil))
			t.Logf("%s: %s", tc.name, res.ResultSummary)
			wantNothingOf(t, res, marker)
			wantFail(t, res, SourceAssertion, ScriptError)
			wantSummary(t, res, "not allowed: "+tc.scheme+":")
		})
	}
	t.Run("URL check", func(t *testing.T) {
		// The control plane refuses such a check (400), and the prober refuses the job before
		// the browser sees it; the browser refuses it as well (TestGuardRefusesNonWebLoads).
		t.Parallel()
		res := probeJob(t, p, browserURLJob(fileURL, 15*time.Second, nil))
		wantNothingOf(t, res, marker)
		wantFail(t, res, SourceTransport, InvalidRequest)
		wantSummary(t, res, "the scheme must be http or https")
	})
	t.Run("URL check redirected to a file", func(t *testing.T) {
		t.Parallel()
		res := probeJob(t, p, browserURLJob(srv.URL+"/redirect", 15*time.Second, nil))
		wantNothingOf(t, res, marker)
		wantFail(t, res, SourceAssertion, ForbiddenTarget)
		wantSummary(t, res, "not allowed: file:")
	})
}

// TestBrowserScriptWebSchemesStillLoad: data: and about:blank pages, and web pages with frames,
// still work under the scheme guard.
func TestBrowserScriptWebSchemesStillLoad(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>web</title><p>web page</p><iframe srcdoc="<p>inner</p>"></iframe>`)
	}))
	t.Cleanup(srv.Close)
	p := NewBrowser(testBrowser(t, false))
	res := probeJob(t, p, scriptJob(scriptHead+`test('web', async ({ page }) => {
  await page.goto('data:text/html,<p id=d>from data</p>');
  await expect(page.locator('#d')).toHaveText('from data');
  await page.goto('about:blank');
  await page.goto('`+srv.URL+`');
  await expect(page.locator('p')).toHaveText('web page');
  expect(await page.evaluate(() => fetch(location.href).then(r => r.status))).toBe(200);
});
`, 15*time.Second, nil))
	wantPass(t, res)
}

// wantNothingOf fails the test when marker is anywhere in the result.
func wantNothingOf(t *testing.T, res Result, marker string) {
	t.Helper()
	if all := fmt.Sprintf("%+v", res); strings.Contains(all, marker) {
		t.Fatalf("the file's content is in the result: %s", all)
	}
}
