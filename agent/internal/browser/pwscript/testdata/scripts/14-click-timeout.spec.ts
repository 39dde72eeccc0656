// expect: fail
// message: locator.click: Timeout 500ms exceeded.
// message: waiting for getByRole('button', { name: 'Checkout' })
import { test } from '@playwright/test';

test('clicking a button that is not there times out', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  await page.getByRole('button', { name: 'Checkout' }).click({ timeout: 500 }); // fails here
});
