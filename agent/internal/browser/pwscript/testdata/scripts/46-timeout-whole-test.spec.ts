// expect: fail
// message: Test timeout of 2000ms exceeded.
// message: page.waitForTimeout
// timeout: 5000
import { test } from '@playwright/test';

test('a test that takes too long', async ({ page }) => {
  test.setTimeout(2000);
  await page.goto(process.env.BASE_URL + '/home.html');
  await page.waitForTimeout(10000);
});
