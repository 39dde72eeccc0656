// expect: fail
// message: expect(page).toHaveTitle(expected) failed
// message: Expected: "Vantage Store"
// message: Received: "Vantage Shop"
// message: Timeout: 1000ms
import { test, expect } from '@playwright/test';

test('title is checked', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  await expect(page).toHaveTitle('Vantage Store', { timeout: 1000 }); // fails here
});
