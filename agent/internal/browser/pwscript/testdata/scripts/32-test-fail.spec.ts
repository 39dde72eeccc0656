// expect: pass
import { test, expect } from '@playwright/test';

test.fail('a known bug is expected to fail', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Bienvenue', { timeout: 300 });
});

test('fail() inside a test', async () => {
  test.fail();
  expect(1).toBe(2);
});
