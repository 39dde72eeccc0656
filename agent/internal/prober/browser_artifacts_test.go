package prober

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A scripted check's screenshot taken with a path and its attachments leave the worker
// process as artifacts of the result; a failing run's timeout names the check's configured
// timeout, not the deadline the worker was given.
func TestBrowserScriptArtifacts(t *testing.T) {
	t.Parallel()
	p := NewBrowser(testBrowser(t, false))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Shop</title><h1>Welcome</h1>`)
	}))
	t.Cleanup(srv.Close)

	res := run(t, p, scriptJob(scriptHead+`test('home', async ({ page }, testInfo) => {
  await page.goto('`+srv.URL+`');
  await page.screenshot({ path: 'shots/home.png' });
  await testInfo.attach('token.txt', { body: 'token=' + process.env.TOKEN });
});
`, 15*time.Second, nil), 15*time.Second)
	if !res.Passing {
		t.Fatalf("failed: %s", res.ResultSummary)
	}
	if len(res.Artifacts) != 2 || res.Artifacts[0].Name != "shots-home.png" || res.Artifacts[0].ContentType != "image/png" ||
		!bytes.HasPrefix(res.Artifacts[0].Body, []byte("\x89PNG")) || res.Artifacts[1].Name != "token.txt" {
		t.Fatalf("artifacts: %+v", res.Artifacts)
	}

	res = run(t, p, scriptJob(scriptHead+`test('stuck', async ({ page }) => {
  await page.goto('`+srv.URL+`');
  await page.getByRole('button', { name: 'Add to cart' }).click();
});
`, 4*time.Second, nil), 4*time.Second)
	if res.Passing || !strings.Contains(res.ResultSummary, "Test timeout of 4000ms exceeded.") {
		t.Errorf("summary %q, want the check's 4000ms timeout named", res.ResultSummary)
	}
}
