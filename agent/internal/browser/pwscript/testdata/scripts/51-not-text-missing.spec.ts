// expect: fail
// message: expect(locator).not.toHaveText(expected) failed
// message: Expected: not "Sold out"
// message: Error: element(s) not found
import { test, expect } from '@playwright/test';

test('a negated text assertion still needs the element', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/products.html');
  await expect(page.locator('#discount')).not.toHaveText('Sold out', { timeout: 500 }); // fails here
});
