// expect: fail
// message: expect(received).toBe(expected)
// message: Expected: 200
// message: Received: 500
import { test, expect } from '@playwright/test';

test('a failing API is caught by its response', async ({ page }) => {
  await page.route('**/api/orders.json', (route) => route.fulfill({ status: 500, json: { error: 'boom' } }));
  await page.goto(process.env.BASE_URL + '/network.html');
  const responsePromise = page.waitForResponse((r) => r.url().endsWith('/api/orders.json'));
  await page.getByRole('button', { name: 'Refresh' }).click();
  const response = await responsePromise;
  expect(response.status()).toBe(200); // fails here
});
