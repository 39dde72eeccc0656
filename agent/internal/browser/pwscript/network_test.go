package pwscript

import (
	"testing"
)

func TestPageEvents(t *testing.T) {
	t.Parallel()
	srv, other, _ := pageSite(t)
	runPass(t, srv, other, `
const path = (u) => u.replace(/^https?:\/\/[^/]+/, '');
test('events', async ({ page }) => {
  const requests = [], responses = [], finished = [], console = [], errors = [], loads = [];
  page.on('request', (r) => requests.push(r.method() + ' ' + path(r.url()) + ' ' + r.resourceType() + ' ' + r.isNavigationRequest()));
  page.on('response', (r) => responses.push(r.status() + ' ' + path(r.url())));
  page.on('requestfinished', (r) => finished.push(path(r.url())));
  page.on('console', (m) => console.push(m.type() + ': ' + m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  page.once('load', (p) => loads.push(p === page));
  page.on('domcontentloaded', () => loads.push('dcl'));
  const resp = await page.goto(process.env.BASE_URL + '/net.html');
  expect(resp.status()).toBe(200);
  expect(resp.request().isNavigationRequest()).toBe(true);
  expect(await resp.text()).toContain('<title>Net</title>');
  await page.reload();
  expect(loads.filter((l) => l === true)).toHaveLength(1); // once: the first load only
  expect(loads.filter((l) => l === 'dcl').length).toBeGreaterThanOrEqual(2);

  const [api] = await Promise.all([
    page.waitForResponse('**/api/data'),
    page.locator('#load').click(),
  ]);
  expect(api.status()).toBe(200);
  expect(api.ok()).toBe(true);
  expect(await api.headerValue('x-source')).toBe('server');
  expect(api.headers()['content-type']).toBe('application/json');
  expect(await api.json()).toEqual({ from: 'server', method: 'POST' });
  expect(api.request().method()).toBe('POST');
  expect(api.request().postData()).toBe('hello');
  expect(api.request().resourceType()).toBe('fetch');
  expect(api.request().frame()).toBe(page.mainFrame());
  expect(await api.request().response()).toBe(api);
  await expect(page.locator('#out')).toHaveText('server');
  expect(requests).toContain('POST /api/data fetch false');
  expect(requests).toContain('GET /net.html document true');
  expect(responses).toContain('200 /api/data');

  const warned = page.waitForEvent('console', (m) => m.type() === 'warning');
  await page.locator('#log').click();
  expect((await warned).text()).toBe('careful');
  expect(console).toContain('log: clicked 42 Object');

  const err = page.waitForEvent('pageerror');
  await page.locator('#boom').click();
  expect((await err).message).toContain('kaboom');
  expect(errors.join()).toContain('kaboom');

  const reqP = page.waitForRequest((r) => r.url().endsWith('/api/data'));
  await page.locator('#hop').click();
  const hopped = await reqP;
  expect(path(hopped.redirectedFrom().url())).toBe('/hop');
  expect(hopped.redirectedFrom().redirectedTo()).toBe(hopped);
  await expect(page.locator('#out')).toHaveText(/from/);

  const failed = page.waitForEvent('requestfailed', { timeout: 5000 });
  await page.route('**/api/gone', (route) => route.abort('connectionrefused'));
  await page.locator('#missing').click();
  expect((await failed).failure().errorText).toContain('ERR_CONNECTION_REFUSED');
  expect(finished).toContain('/api/data');
});
`)
}

func TestPageEventsOff(t *testing.T) {
	t.Parallel()
	srv, other, _ := pageSite(t)
	runPass(t, srv, other, `
test('off', async ({ page }) => {
  let n = 0;
  const count = () => { n++ };
  page.on('request', count);
  await page.goto(process.env.BASE_URL + '/net.html');
  const seen = n;
  expect(seen).toBeGreaterThan(0);
  page.off('request', count);
  page.removeListener('request', count);
  await page.reload();
  expect(n).toBe(seen);
});
`)
}

func TestDialogs(t *testing.T) {
	t.Parallel()
	srv, other, _ := pageSite(t)
	runPass(t, srv, other, `
test('dialogs', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/net.html');
  // No handler: dismissed.
  await page.locator('#ask').click();
  await expect(page.locator('#answer')).toHaveText('false');
  page.once('dialog', async (d) => {
    expect(d.type()).toBe('confirm');
    expect(d.message()).toBe('Sure?');
    await d.accept();
  });
  await page.locator('#ask').click();
  await expect(page.locator('#answer')).toHaveText('true');
  page.once('dialog', (d) => d.accept('Ada'));
  await page.locator('#prompt').click();
  await expect(page.locator('#answer')).toHaveText('Ada');
  // The handler is gone again: dismissed.
  await page.locator('#prompt').click();
  await expect(page.locator('#answer')).toHaveText('null');
});
`)
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	srv, other, hits := pageSite(t)
	runPass(t, srv, other, `
test('route', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/net.html');
  await page.route('**/api/data', (route) => route.fulfill({ json: { from: 'route' } }));
  await page.locator('#load').click();
  await expect(page.locator('#out')).toHaveText('route');

  // The last route registered is tried first; fallback hands the request on.
  const seen = [];
  await page.route(/\/api\/data$/, async (route, request) => {
    seen.push(request.method());
    await route.fallback();
  });
  await page.locator('#load').click();
  await expect(page.locator('#out')).toHaveText('route');
  expect(seen).toEqual(['POST']);

  await page.unrouteAll();
  await page.locator('#load').click();
  await expect(page.locator('#out')).toHaveText('server');

  // continue with another URL and a header.
  await page.route('**/api/data', (route) => route.continue({ url: process.env.BASE_URL + '/api/echo', headers: { 'x-added': 'yes' } }));
  const [resp] = await Promise.all([page.waitForResponse(/api/), page.locator('#load').click()]);
  expect(await resp.json()).toEqual({ path: '/api/echo', header: 'yes' });
  await page.unroute('**/api/data');

  // fulfill a whole document, with a status and a body.
  await page.route((url) => url.pathname === '/made-up.html', (route) =>
    route.fulfill({ status: 201, contentType: 'text/html', body: '<title>Made up</title><h1>Served by the route</h1>' }));
  const made = await page.goto(process.env.BASE_URL + '/made-up.html');
  expect(made.status()).toBe(201);
  await expect(page.getByRole('heading')).toHaveText('Served by the route');
  await expect(page).toHaveTitle('Made up');

  // abort the navigation.
  await page.route('**/aborted.html', (route) => route.abort());
  let aborted = '';
  try { await page.goto(process.env.BASE_URL + '/aborted.html'); } catch (e) { aborted = e.message; }
  expect(aborted).toContain('ERR_FAILED');
});
`)
	if hits.Load() < 1 {
		t.Errorf("the server saw %d requests for /api/data: continue and unroute must reach it", hits.Load())
	}
}

func TestRouteContinueRefusesOtherSchemes(t *testing.T) {
	t.Parallel()
	srv, other, _ := pageSite(t)
	runFail(t, srv, other, `
test('continue to file:', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/net.html');
  let thrown = '';
  await page.route('**/api/data', async (route) => {
    try { await route.continue({ url: 'file:///etc/passwd' }); } catch (e) { thrown = e.message; await route.abort(); }
  });
  await page.locator('#load').click();
  for (let i = 0; i < 50 && !thrown; i++) await page.waitForTimeout(50);
  throw new Error(thrown);
});
`, "not allowed: file:")
}

func TestWaitForResponseTimeout(t *testing.T) {
	t.Parallel()
	srv, other, _ := pageSite(t)
	runFail(t, srv, other, `
test('never', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/net.html');
  await page.waitForResponse('**/never', { timeout: 300 });
});
`, `page.waitForResponse: Timeout 300ms exceeded`)
}

func TestCDPSession(t *testing.T) {
	t.Parallel()
	srv, other, _ := pageSite(t)
	runFail(t, srv, other, `
test('cdp', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/net.html');
  const client = await page.context().newCDPSession(page);
  await client.send('Network.enable');
  await client.send('Network.emulateNetworkConditions', { offline: false, latency: 200, downloadThroughput: -1, uploadThroughput: -1 });
  await client.send('Performance.enable');
  const { metrics } = await client.send('Performance.getMetrics');
  expect(metrics.map((m) => m.name)).toContain('JSHeapUsedSize');
  const start = Date.now();
  await page.reload();
  expect(Date.now() - start).toBeGreaterThanOrEqual(200);
  let refused = '';
  try { await client.send('Target.createTarget', { url: 'about:blank' }); } catch (e) { refused = e.message; }
  expect(refused).toContain('not allowed in a check: CDP method Target.createTarget');
  await client.send('Runtime.evaluate', { expression: '1' }); // fails here
});
`, "not allowed in a check: CDP method Runtime.evaluate")
}
