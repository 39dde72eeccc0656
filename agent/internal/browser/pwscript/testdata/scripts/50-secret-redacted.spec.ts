// expect: fail
// message: Expected: "[REDACTED]"
// absent: hunter2-secret
// parity: skip — redaction is this runtime's own
import { test, expect } from '@playwright/test';

test('secrets never reach the report', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/login.html');
  console.log('typing', process.env.SHOP_PASSWORD);
  await page.getByLabel('Password').fill('not it');
  await expect(page.getByLabel('Password')).toHaveValue(process.env.SHOP_PASSWORD!, { timeout: 300 });
});
