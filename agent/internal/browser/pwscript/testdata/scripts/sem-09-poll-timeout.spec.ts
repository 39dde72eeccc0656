// expect: fail
// message: Timeout 500ms exceeded while waiting on the predicate
import { test, expect } from '@playwright/test';

test('a count that never comes', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/products.html');
  await expect.poll(() => page.getByRole('listitem').count(), { timeout: 500 }).toBe(10); // fails here
});
