// expect: fail
// message: expect(locator).toBeVisible() failed
// message: Locator: getByRole('heading', { name: 'Results are in' })
// message: Timeout: 300ms
// message: Error: element(s) not found
import { test, expect } from '@playwright/test';

test('a timeout shorter than the page needs fails', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/delayed.html');
  await expect(page.getByRole('heading', { name: 'Results are in' })).toBeVisible({ timeout: 300 }); // fails here
});
