package pwscript

import "testing"

func TestPageExtras(t *testing.T) {
	t.Parallel()
	srv, other, _ := pageSite(t)
	runPass(t, srv, other, `
test('page extras', async ({ page }) => {
  await page.addInitScript((name) => { window.injected = 'hello ' + name }, 'init');
  await page.addInitScript({ content: 'window.second = 2' });
  await page.goto(process.env.BASE_URL + '/page.html');
  expect(await page.evaluate(() => window.injected + ' ' + window.second)).toBe('hello init 2');

  // $, $$, $eval, $$eval and handles.
  const button = await page.$('#b1');
  expect(await button.textContent()).toBe('One');
  await button.click();
  expect(await button.getAttribute('data-n')).toBe('1');
  expect(await button.isVisible()).toBe(true);
  expect(await button.evaluate((e) => e.id)).toBe('b1');
  expect((await button.boundingBox()).width).toBeGreaterThan(0);
  expect(await page.$('#nothing')).toBeNull();
  const items = await page.$$('li');
  expect(items).toHaveLength(2);
  expect(await items[1].innerText()).toBe('Two');
  const list = await page.$('ul');
  expect(await (await list.$('li')).textContent()).toBe('One');
  expect(await list.$$('li')).toHaveLength(2);
  expect(await page.$eval('#b1', (e, suffix) => e.textContent + suffix, '!')).toBe('One!');
  expect(await page.$$eval('li', (els) => els.map((e) => e.textContent))).toEqual(['One', 'Two']);
  const field = await page.$('#name');
  await field.fill('Ada');
  expect(await page.inputValue('#name')).toBe('Ada');

  // waitForFunction, with an argument and polling.
  await page.evaluate(() => setTimeout(() => { window.ready = 42 }, 200));
  const handle = await page.waitForFunction((min) => window.ready >= min && window.ready, 40, { polling: 50 });
  expect(await handle.jsonValue()).toBe(42);
  await page.waitForFunction('window.ready === 42');

  // waitForSelector, with Puppeteer's { visible } accepted.
  const h = await page.waitForSelector('#b1', { visible: true });
  expect(await h.textContent()).toBe('One');
  expect(await page.waitForSelector('#gone', { state: 'detached' })).toBeNull();

  // setContent keeps the page's URL and waits for the load.
  await page.setContent('<title>Made</title><h1>Set content</h1><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">', { waitUntil: 'load' });
  await expect(page.getByRole('heading')).toHaveText('Set content');
  expect(await page.title()).toBe('Made');
  expect(page.url()).toBe(process.env.BASE_URL + '/page.html');

  // emulateMedia.
  await page.emulateMedia({ colorScheme: 'dark', reducedMotion: 'reduce' });
  expect(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches)).toBe(true);
  expect(await page.evaluate(() => matchMedia('(prefers-reduced-motion: reduce)').matches)).toBe(true);
  await page.emulateMedia({ media: 'print' });
  expect(await page.evaluate(() => matchMedia('print').matches)).toBe(true);
  expect(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches)).toBe(true);
  await page.emulateMedia({ colorScheme: null, media: null });
  expect(await page.evaluate(() => matchMedia('print').matches)).toBe(false);
});
`)
}

func TestMouseAndLocatorExtras(t *testing.T) {
	t.Parallel()
	srv, other, _ := pageSite(t)
	runPass(t, srv, other, `
test('mouse and locator extras', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/page.html');
  const box = await page.locator('#pad').boundingBox();
  await page.mouse.move(box.x + 10, box.y + 20, { steps: 3 });
  await page.mouse.down();
  await page.mouse.up();
  await expect(page.locator('#pad')).toHaveAttribute('data-down', Math.round(box.x + 10) + ',' + Math.round(box.y + 20));
  await expect(page.locator('#pad')).toHaveAttribute('data-up', 'yes');
  await page.mouse.dblclick(box.x + 5, box.y + 5);
  await expect(page.locator('#pad')).toHaveAttribute('data-dbl', 'yes');
  await page.evaluate(() => { document.body.style.height = '5000px' });
  await page.mouse.wheel(0, 300);
  await page.waitForFunction(() => scrollY >= 300);
  await page.evaluate(() => scrollTo(0, 0));

  await page.locator('#file').setInputFiles({ name: 'note.txt', mimeType: 'text/plain', buffer: 'hello' });
  await expect(page.locator('#files')).toHaveText('note.txt:5:text/plain');
  await page.locator('#file').setInputFiles([
    { name: 'a.json', mimeType: 'application/json', buffer: new Uint8Array([123, 125]) },
    { name: 'b.bin', mimeType: 'application/octet-stream', buffer: new Uint8Array([1, 2, 3]) },
  ]);
  await expect(page.locator('#files')).toHaveText('a.json:2:application/json,b.bin:3:application/octet-stream');
  await page.locator('#file').setInputFiles([]);
  await expect(page.locator('#files')).toHaveText('');

  await page.locator('#sel').selectText();
  expect(await page.evaluate(() => getSelection().toString())).toBe('Select this text');
  await page.locator('#sel').highlight();

  await page.locator('#src').dragTo(page.locator('#dst'));
  await expect(page.locator('#dst')).toHaveText('dropped');
});
`)
}

func TestExposeFunction(t *testing.T) {
	t.Parallel()
	srv, other, _ := pageSite(t)
	runPass(t, srv, other, `
test('expose', async ({ page }) => {
  const calls = [];
  await page.exposeFunction('sum', (a, b) => { calls.push([a, b]); return a + b });
  await page.exposeFunction('later', async (s) => { await new Promise((r) => setTimeout(r, 20)); return s.toUpperCase() });
  await page.exposeFunction('broken', () => { throw new Error('nope') });
  await page.exposeBinding('whoami', (source, x) => (source.page === page) + ':' + x);
  await page.goto(process.env.BASE_URL + '/page.html');
  expect(await page.evaluate(() => window.sum(40, 2))).toBe(42);
  expect(await page.evaluate(() => window.later('abc'))).toBe('ABC');
  expect(await page.evaluate(() => window.broken().catch((e) => 'caught ' + e.message))).toContain('caught');
  expect(await page.evaluate(() => window.whoami('me'))).toBe('true:me');
  expect(calls).toEqual([[40, 2]]);
  await page.reload();
  expect(await page.evaluate(() => window.sum(1, 2))).toBe(3);
});
`)
}

func TestClock(t *testing.T) {
	t.Parallel()
	srv, other, _ := pageSite(t)
	runPass(t, srv, other, `
test('clock', async ({ page }) => {
  await page.clock.install({ time: new Date('2024-02-02T08:00:00Z') });
  await page.goto(process.env.BASE_URL + '/page.html');
  const year = await page.evaluate(() => new Date().getUTCFullYear());
  expect(year).toBe(2024);
  await page.clock.pauseAt(new Date('2024-02-02T10:00:00Z'));
  expect(await page.evaluate(() => new Date().toISOString())).toBe('2024-02-02T10:00:00.000Z');
  await page.evaluate(() => { window.fired = 0; setInterval(() => window.fired++, 1000); setTimeout(() => { window.once = true }, 5000) });
  await page.clock.runFor(3000);
  expect(await page.evaluate(() => window.fired)).toBe(3);
  expect(await page.evaluate(() => Date.now())).toBe(Date.parse('2024-02-02T10:00:03Z'));
  await page.clock.fastForward('00:10');
  expect(await page.evaluate(() => window.once)).toBe(true);
  expect(await page.evaluate(() => window.fired)).toBe(4); // fast-forward fires a due timer once
  await page.clock.setSystemTime(Date.parse('2030-01-01T00:00:00Z'));
  expect(await page.evaluate(() => new Date().getUTCFullYear())).toBe(2030);
  await page.clock.setFixedTime('2031-05-05T00:00:00Z');
  expect(await page.evaluate(() => new Date().toISOString())).toBe('2031-05-05T00:00:00.000Z');
  await page.clock.resume();
});
`)
}

func TestLocatorHandler(t *testing.T) {
	t.Parallel()
	srv, other, _ := pageSite(t)
	runPass(t, srv, other, `
test('cookie banner', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/page.html');
  await page.evaluate(() => {
    const show = () => {
      const d = document.createElement('div');
      d.id = 'banner';
      d.style = 'position:fixed;inset:0;background:#fff;z-index:10';
      d.innerHTML = '<button onclick="this.parentNode.remove()">Accept cookies</button>';
      document.body.append(d);
    };
    show();
    // The banner comes back once after the first click.
    document.querySelector('#b1').addEventListener('click', () => setTimeout(show, 0), { once: true });
  });
  let seen = 0;
  await page.addLocatorHandler(page.locator('#banner'), async (banner) => {
    seen++;
    await banner.getByRole('button', { name: 'Accept cookies' }).click();
  }, { times: 5 });
  await page.locator('#b1').click();
  await expect(page.locator('#banner')).toBeVisible();
  await page.locator('#b1').click();
  await expect(page.locator('#b1')).toHaveAttribute('data-n', '2');
  expect(seen).toBe(2);
  await page.removeLocatorHandler(page.locator('#banner'));
});
`)
}
