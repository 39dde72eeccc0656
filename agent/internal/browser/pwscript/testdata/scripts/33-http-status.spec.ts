// expect: pass
import { test, expect } from '@playwright/test';

test('responses of navigations', async ({ page }) => {
  const missing = await page.goto(process.env.BASE_URL + '/status/404');
  expect(missing!.status()).toBe(404);
  expect(missing!.ok()).toBe(false);
  await expect(page.getByRole('heading')).toHaveText('Status 404');
  const redirected = await page.goto(process.env.BASE_URL + '/redirect?to=/home.html');
  expect(redirected!.status()).toBe(200);
  expect(redirected!.url()).toMatch(/\/home\.html$/);
  expect(redirected!.headers()['content-type']).toContain('text/html');
  await expect(page).toHaveURL(/\/home\.html$/);
});
