// expect: fail
// message: locator.click: Timeout 800ms exceeded.
// message: intercepts pointer events
import { test } from '@playwright/test';

test('a covered button cannot be clicked', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/widgets.html');
  await page.getByRole('button', { name: 'Covered' }).click({ timeout: 800 }); // fails here
});
