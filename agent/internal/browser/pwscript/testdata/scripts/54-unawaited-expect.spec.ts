// expect: fail
// message: expect(locator).toBeVisible() failed
// message: Locator: getByText('Not on the page')
import { test, expect } from '@playwright/test';

test('an assertion that is not awaited still fails the test', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  expect(page.getByText('Not on the page')).toBeVisible({ timeout: 300 }); // fails here
  await page.waitForTimeout(1000);
});
