// expect: pass
import { test, expect } from '@playwright/test';

test('log in, pass the token on, assert on JSON', async ({ request }) => {
  const token = await test.step('log in', async () => {
    const login = await request.post(process.env.BASE_URL + '/api/login', {
      data: { user: 'ann', password: process.env.SHOP_PASSWORD },
    });
    await expect(login).toBeOK();
    const body = await login.json();
    expect(body.user).toEqual({ name: 'ann' });
    return body.token;
  });
  await test.step('list items', async () => {
    const items = await request.get(process.env.BASE_URL + '/api/items', {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(items.status()).toBe(200);
    expect(items.headers()['content-type']).toContain('application/json');
    const list = await items.json();
    expect(list).toHaveLength(2);
    expect(list.map((i: { name: string }) => i.name)).toContain('pear');
  });
  await test.step('create one', async () => {
    const created = await request.post(process.env.BASE_URL + '/api/items', {
      headers: { Authorization: `Bearer ${token}` },
      form: { name: 'plum' },
    });
    expect(created.status()).toBe(201);
    expect(await created.json()).toMatchObject({ name: 'created' });
  });
});

test('page.request shares the page cookies', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/api/cookie/set?v=shared');
  const got = await page.request.get(process.env.BASE_URL + '/api/cookie/get');
  expect((await got.json()).session).toBe('shared');
});
