package pwscript

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vantagehq/vantage/pkg/browserscript"
)

// runRequestOnly runs source without a browser, as a multistep check runs, against base.
func runRequestOnly(t testing.TB, source string, opts Options) *Report {
	t.Helper()
	prog, err := browserscript.Transform("api.spec.ts", source)
	if err != nil {
		t.Fatalf("transform: %v", err)
	}
	opts.RequestOnly = true
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.Timeout)
	defer cancel()
	return Run(ctx, prog, opts)
}

func apiServer(t testing.TB) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(apiSite())
	t.Cleanup(srv.Close)
	return srv
}

// TestRequestFixture runs each option of the request fixture and each method of APIResponse
// against a local server; a failing case names what its message must contain.
func TestRequestFixture(t *testing.T) {
	t.Parallel()
	srv := apiServer(t)
	cases := []struct {
		name string
		body string // the test's body; request and expect are in scope
		fail string // a fragment of the failure message; "" when the test must pass
	}{
		{"get json status headers", `
			const r = await request.get('/api/echo?a=1');
			expect(r.status()).toBe(200);
			expect(r.ok()).toBe(true);
			expect(r.statusText()).toBe('OK');
			expect(r.url()).toBe(process.env.BASE_URL + '/api/echo?a=1');
			expect(r.headers()['content-type']).toBe('application/json');
			expect(r.headers()['x-multi']).toBe('a, b');
			expect(await r.headerValue('X-Multi')).toBe('a, b');
			expect(await r.headerValue('x-none')).toBe(null);
			expect(r.headersArray().filter(h => h.name === 'x-multi').map(h => h.value)).toEqual(['a', 'b']);
			const j = await r.json();
			expect(j.method).toBe('GET');
			expect(j.query).toBe('a=1');
			expect(j.headers.accept).toBe('*/*');
			expect(JSON.parse(await r.text()).path).toBe('/api/echo');
			const b = await r.body();
			expect(b.length).toBeGreaterThan(10);
			expect(b[0]).toBe(123);`, ""},
		{"every method", `
			for (const m of ['get', 'post', 'put', 'patch', 'delete']) {
				const j = await (await request[m]('/api/echo')).json();
				expect(j.method).toBe(m.toUpperCase());
			}
			const h = await request.head('/api/echo');
			expect(h.status()).toBe(200);
			expect(await h.text()).toBe('');
			const f = await request.fetch('/api/echo', { method: 'put', data: 'x' });
			expect((await f.json()).method).toBe('PUT');
			expect((await (await request.fetch('/api/echo')).json()).method).toBe('GET');`, ""},
		{"data object is json", `
			const j = await (await request.post('/api/echo', { data: { a: 1, b: [true] } })).json();
			expect(j.headers['content-type']).toBe('application/json');
			expect(JSON.parse(j.body)).toEqual({ a: 1, b: [true] });`, ""},
		{"data string and bytes", `
			let j = await (await request.post('/api/echo', { data: 'plain text' })).json();
			expect(j.body).toBe('plain text');
			expect(j.headers['content-type']).toBe('application/octet-stream');
			j = await (await request.post('/api/echo', { data: 'not json', headers: { 'Content-Type': 'application/json' } })).json();
			expect(j.body).toBe('"not json"');
			j = await (await request.post('/api/echo', { data: new Uint8Array([104, 105]) })).json();
			expect(j.body).toBe('hi');`, ""},
		{"form", `
			const j = await (await request.post('/api/echo', { form: { user: 'ann', n: 2, ok: true } })).json();
			expect(j.headers['content-type']).toBe('application/x-www-form-urlencoded');
			expect(j.body).toBe('n=2&ok=true&user=ann');`, ""},
		{"multipart fields and files", `
			const j = await (await request.post('/api/echo', { multipart: {
				title: 'report', count: 3,
				file: { name: 'a.txt', mimeType: 'text/plain', buffer: new Uint8Array([97, 98, 99]) },
				other: { name: 'b.json', mimeType: 'application/json', buffer: '{"x":1}' },
			} })).json();
			expect(j.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
			expect(j.fields).toEqual({ title: 'report', count: '3' });
			expect(j.files.file).toEqual({ filename: 'a.txt', type: 'text/plain', content: 'abc' });
			expect(j.files.other.content).toBe('{"x":1}');`, ""},
		{"two bodies", `await request.post('/api/echo', { data: 'a', form: { b: 1 } });`, "only one of 'data', 'form' or 'multipart'"},
		{"headers and params", `
			const j = await (await request.get('/api/echo?keep=1&q=old', { headers: { 'X-Trace': 't1' }, params: { q: 'new', n: 5 } })).json();
			expect(j.headers['x-trace']).toBe('t1');
			expect(j.query).toBe('keep=1&n=5&q=new');
			const s = await (await request.get('/api/echo', { params: 'a=1&b=two' })).json();
			expect(s.query).toBe('a=1&b=two');`, ""},
		{"non-2xx resolves", `
			const r = await request.get('/api/status/404');
			expect(r.ok()).toBe(false);
			expect(r.status()).toBe(404);
			expect(r.statusText()).toBe('Not Found');
			await expect(r).not.toBeOK();`, ""},
		{"failOnStatusCode", `await request.get('/api/status/503', { failOnStatusCode: true });`,
			"apiRequestContext.get: 503 Service Unavailable\nResponse text:\nstatus 503 body"},
		{"toBeOK fails", `await expect(await request.get('/api/status/500')).toBeOK();`,
			"expect(response).toBeOK()\n\nCall log:\n  - → GET " /* the URL follows */},
		{"not toBeOK fails", `await expect(await request.get('/api/echo')).not.toBeOK();`, "expect(response).not.toBeOK()"},
		{"redirects followed", `
			const r = await request.get('/api/redirect/3');
			expect(r.url()).toBe(process.env.BASE_URL + '/api/redirect/0');
			expect((await r.json()).arrived).toBe('yes');`, ""},
		{"maxRedirects 0 returns the redirect", `
			const r = await request.get('/api/redirect/3', { maxRedirects: 0 });
			expect(r.status()).toBe(302);
			expect(r.headers()['location']).toBe('/api/redirect/2');`, ""},
		{"maxRedirects exceeded", `await request.get('/api/redirect/3', { maxRedirects: 2 });`, "apiRequestContext.get: Max redirect count exceeded"},
		{"timeout", `await request.get('/api/slow?ms=2000', { timeout: 200 });`, "apiRequestContext.get: Request timed out after 200ms"},
		{"timeout enough", `expect((await (await request.get('/api/slow?ms=50', { timeout: 2000 })).json()).waited).toBe(50);`, ""},
		{"cookies kept within the test", `
			await request.get('/api/cookie/set?v=s1');
			expect((await (await request.get('/api/cookie/get')).json()).session).toBe('s1');`, ""},
		{"dispose", `
			const r = await request.get('/api/echo');
			await r.dispose();
			await r.body();`, "apiResponse.body: Response has been disposed"},
		{"json of non-json", `await (await request.get('/api/status/200')).json();`, "SyntaxError"},
		{"response cap", `await request.get('/api/big?bytes=5000');`, "the response body is larger than the limit of 4096 bytes"},
		{"relative URL without base", `await request.get('relative', {});`, ""},
		{"unknown option", `await request.get('/api/echo', { maxRetries: 2 });`, "not supported: apiRequestContext.get({ maxRetries })"},
		{"fetch of a Request object", `await request.fetch({ url: 'x' });`, "not supported: apiRequestContext.fetch(request) with a Request object"},
		{"file URL", `await request.get('file:///etc/passwd');`, `unsupported protocol "file:"`},
		{"unreachable", `await request.get(process.env.DOWN_URL);`, "connection refused"},
		{"page fixture", `expect(1).toBe(1); }); test('uses page', async ({ page }) => { await page.goto('/');`,
			"not supported: the page fixture — a multistep check runs without a browser"},
		{"secret redacted", `await request.get('/api/status/500?key=' + process.env.SHOP_PASSWORD, { failOnStatusCode: true, headers: { a: process.env.SHOP_PASSWORD } });`, "500 Internal Server Error"},
	}
	env := corpusEnv(t, srv.URL)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src := "import { test, expect } from '@playwright/test';\ntest('t', async ({ request }) => {" + c.body + "\n});\n"
			opts := Options{Env: env, Secrets: []string{"hunter2-secret"}, BaseURL: srv.URL, Request: RequestOptions{AllowPrivate: true}}
			if c.name == "response cap" {
				opts.Request.MaxResponseBytes = 4096
			}
			if c.name == "relative URL without base" {
				opts.BaseURL = ""
				c.fail = "a relative URL needs a baseURL"
			}
			rep := runRequestOnly(t, src, opts)
			if c.fail == "" {
				if !rep.Passed {
					t.Fatalf("failed:\n%s", describeReport(rep))
				}
				return
			}
			if rep.Passed || rep.Failure == nil {
				t.Fatalf("passed, want a failure with %q:\n%s", c.fail, describeReport(rep))
			}
			if !strings.Contains(rep.Failure.Message, c.fail) {
				t.Errorf("message lacks %q:\n%s", c.fail, describeReport(rep))
			}
			if !strings.HasPrefix(rep.Failure.Location, "api.spec.ts:") {
				t.Errorf("location = %q, want a place in api.spec.ts", rep.Failure.Location)
			}
			if strings.Contains(describeReport(rep), "hunter2-secret") {
				t.Errorf("a secret is in the report:\n%s", describeReport(rep))
			}
		})
	}
}

// TestRequestAddressPolicy: without AllowPrivate, a call to 127.0.0.1 is refused where the
// socket connects, and the message names the host and the policy, never the address.
func TestRequestAddressPolicy(t *testing.T) {
	t.Parallel()
	srv := apiServer(t)
	src := "import { test, expect } from '@playwright/test';\ntest('t', async ({ request }) => {\n  await request.get(process.env.BASE_URL + '/api/echo');\n});\n"
	rep := runRequestOnly(t, src, Options{Env: map[string]string{"BASE_URL": srv.URL}})
	if rep.Passed || rep.Failure == nil {
		t.Fatalf("a private target was reached:\n%s", describeReport(rep))
	}
	if want := "refused by policy"; !strings.Contains(rep.Failure.Message, want) || rep.Failure.Cause != CauseRequest {
		t.Errorf("failure (%s) %q, want cause request and %q", rep.Failure.Cause, rep.Failure.Message, want)
	}
	if rep.Failure.Location != "api.spec.ts:3:20" {
		t.Errorf("location = %q", rep.Failure.Location)
	}
}

// TestRequestTestDeadline: a call still running when the test's time is up fails the test
// with the test's timeout, naming the call.
func TestRequestTestDeadline(t *testing.T) {
	t.Parallel()
	srv := apiServer(t)
	src := "import { test } from '@playwright/test';\ntest('t', async ({ request }) => {\n  test.setTimeout(300);\n  await request.get('/api/slow?ms=5000');\n});\n"
	start := time.Now()
	rep := runRequestOnly(t, src, Options{BaseURL: srv.URL, Request: RequestOptions{AllowPrivate: true}})
	if rep.Passed || rep.Failure == nil || rep.Failure.Cause != CauseTimeout {
		t.Fatalf("want a timeout:\n%s", describeReport(rep))
	}
	if !strings.Contains(rep.Failure.Message, "Test timeout of 300ms exceeded") {
		t.Errorf("message = %q", rep.Failure.Message)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the run took %s: the call was not stopped at the test's deadline", d)
	}
}

// TestPageRequestSharesCookies: page.request and the page share the browser context's
// cookies, both ways.
func TestPageRequestSharesCookies(t *testing.T) {
	t.Parallel()
	srv := site(t)
	src := `import { test, expect } from '@playwright/test';
test('t', async ({ page, request }) => {
  await page.goto(process.env.BASE_URL + '/api/cookie/set?v=from-page');
  const got = await (await page.request.get(process.env.BASE_URL + '/api/cookie/get')).json();
  expect(got.session).toBe('from-page');
  await page.request.get(process.env.BASE_URL + '/api/cookie/set?v=from-request');
  await page.goto(process.env.BASE_URL + '/api/cookie/get');
  await expect(page.locator('body')).toContainText('from-request');
  // The request fixture has cookies of its own.
  expect((await (await request.get(process.env.BASE_URL + '/api/cookie/get')).json()).session).toBe('');
});
`
	rep := runScript(t, "cookies.spec.ts", src, Options{Env: map[string]string{"BASE_URL": srv.URL}, Request: RequestOptions{AllowPrivate: true}})
	if !rep.Passed {
		t.Fatalf("failed:\n%s", describeReport(rep))
	}
}
