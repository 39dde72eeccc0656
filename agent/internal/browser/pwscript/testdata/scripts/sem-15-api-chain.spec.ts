// expect: pass
import { test, expect } from '@playwright/test';

test('the API answers in a chain', async ({ request }) => {
  const home = await request.get(process.env.BASE_URL + '/home.html');
  await expect(home).toBeOK();
  const search = await request.get(process.env.BASE_URL + '/echo', { params: { q: 'mug' } });
  expect(search.status()).toBe(200);
  expect(await search.text()).toContain('mug');
});
