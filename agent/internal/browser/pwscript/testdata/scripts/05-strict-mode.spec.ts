// expect: fail
// message: strict mode violation: getByRole('button') resolved to 4 elements
// message: <button type="button">Buy</button>
// message: <button type="button">Sell</button>
import { test } from '@playwright/test';

test('an action needs exactly one element', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  await page.getByRole('button').click({ timeout: 2000 }); // fails here
});
