// expect: pass
import { test, expect } from '@playwright/test';

test('the shop works without images', async ({ page }) => {
  await page.route('**/*.{png,jpg,jpeg,svg}', (route) => route.abort());
  await page.goto(process.env.BASE_URL + '/products.html');
  await expect(page.getByRole('listitem')).toHaveCount(3);
});
