// expect: pass
import { test, expect } from '@playwright/test';

test('an embedded widget', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  await page.evaluate((base) => {
    const f = document.createElement('iframe');
    f.src = base + '/products.html';
    document.body.append(f);
  }, process.env.BASE_URL);
  await expect(page.frameLocator('iframe').getByRole('heading', { name: 'Products' })).toBeVisible();
});
