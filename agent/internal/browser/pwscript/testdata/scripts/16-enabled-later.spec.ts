// expect: pass
import { test, expect } from '@playwright/test';

test('a click waits for the button to be enabled', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/delayed.html');
  const button = page.getByRole('button', { name: 'Continue' });
  await button.click();
  await expect(button).toBeEnabled();
  await expect(page.locator('#status')).toHaveText('continued');
});
