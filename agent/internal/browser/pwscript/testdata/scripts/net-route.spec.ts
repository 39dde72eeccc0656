// expect: pass
import { test, expect } from '@playwright/test';

test('the orders come from the API, and an outage is shown', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/network.html');
  const [response] = await Promise.all([
    page.waitForResponse('**/api/orders.json'),
    page.getByRole('button', { name: 'Refresh' }).click(),
  ]);
  expect(response.status()).toBe(200);
  expect(await response.json()).toHaveLength(2);
  await expect(page.locator('#orders li')).toHaveText(['A-1 shipped', 'A-2 paid']);

  await page.route('**/api/orders.json', (route) => route.fulfill({ status: 503, body: 'down' }));
  await page.getByRole('button', { name: 'Refresh' }).click();
  await expect(page.locator('#status')).toHaveText('Could not load orders: HTTP 503');
  await page.unrouteAll();
});
