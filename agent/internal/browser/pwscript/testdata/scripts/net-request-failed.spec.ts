// expect: fail
// message: Expected: []
// message: Could not load orders
import { test, expect } from '@playwright/test';

test('no request fails while the page loads its orders', async ({ page }) => {
  const failed: string[] = [];
  page.on('requestfailed', (request) => failed.push(request.url() + ' ' + request.failure()?.errorText));
  await page.route('**/api/orders.json', (route) => route.abort('connectionrefused'));
  await page.goto(process.env.BASE_URL + '/network.html');
  await page.getByRole('button', { name: 'Refresh' }).click();
  await expect(page.locator('#status')).toContainText('Could not load orders');
  expect(failed.concat(await page.locator('#status').allTextContents())).toEqual([]); // fails here
});
