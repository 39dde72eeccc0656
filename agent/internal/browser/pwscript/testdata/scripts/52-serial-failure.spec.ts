// expect: fail
// message: Expected: "Nope"
// step: checkout › step one fails
import { test, expect } from '@playwright/test';

test.describe.serial('checkout', () => {
  test('step one fails', async ({ page }) => {
    await page.goto(process.env.BASE_URL + '/home.html');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Nope', { timeout: 300 }); // fails here
  });
  test('step two is not run after it', async () => {
    expect(1).toBe(1);
  });
});
