// expect: fail
// message: expect(locator).toHaveCount(expected) failed
// message: Locator: getByRole('listitem')
// message: Expected: 5
// message: Received: 3
import { test, expect } from '@playwright/test';

test('the list has the wrong length', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/products.html');
  await expect(page.getByRole('listitem')).toHaveCount(5, { timeout: 1000 }); // fails here
});
