// expect: pass
import { test, expect } from '@playwright/test';

test('assertions wait for content that comes later', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/delayed.html');
  await expect(page.getByRole('heading', { name: 'Results are in' })).toBeVisible();
  await expect(page.getByText('Loading…')).toHaveCount(0);
  await expect(page.locator('#fading')).toBeHidden();
});
