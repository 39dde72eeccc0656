// expect: pass
import { test, expect } from '@playwright/test';

test('texts of several elements', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/products.html');
  await expect(page.locator('.product h3')).toHaveText(['Red mug', 'Blue mug', 'Green tea']);
  await expect(page.locator('.product h3')).toHaveText([/red/i, 'Blue mug', /tea$/]);
  await expect(page.locator('.product .price')).toContainText(['12', '14', '5']);
  await expect(page.getByRole('heading', { name: 'Products' })).toContainText('Prod');
  expect(await page.locator('.product h3').allTextContents()).toEqual(['Red mug', 'Blue mug', 'Green tea']);
  await expect(page.getByRole('heading', { name: 'Products' })).not.toHaveText('Welcome');
});
