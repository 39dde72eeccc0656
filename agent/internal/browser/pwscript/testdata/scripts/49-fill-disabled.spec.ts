// expect: fail
// message: locator.fill: Timeout 600ms exceeded.
// message: element is not enabled
import { test } from '@playwright/test';

test('a disabled field cannot be filled', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/widgets.html');
  await page.getByLabel('Disabled').fill('x', { timeout: 600 }); // fails here
});
