// expect: fail
// message: the test awaits a promise that can never settle
// message: page.goto
// timeout: 5000
import { test } from '@playwright/test';

test('a promise that never settles', async ({ page }) => {
  test.setTimeout(3000);
  await page.goto(process.env.BASE_URL + '/home.html');
  await new Promise(() => {});
});
