// expect: fail
// message: expect(locator).toHaveText(expected) failed
// message: Locator: getByRole('heading', { level: 1 })
// message: Expected: "Welcome back"
// message: Received: "Welcome"
import { test, expect } from '@playwright/test';

test('the greeting changed', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Welcome back', { timeout: 1000 }); // fails here
});
