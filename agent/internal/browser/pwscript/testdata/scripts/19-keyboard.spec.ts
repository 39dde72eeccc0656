// expect: pass
import { test, expect } from '@playwright/test';

test('keys: press, type, submit with Enter', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/widgets.html');
  const keys = page.getByLabel('Keys');
  await keys.press('ArrowDown');
  await expect(page.locator('#lastkey')).toHaveText('key:ArrowDown');
  await keys.press('Control+a');
  await expect(page.locator('#lastkey')).toHaveText('key:a+ctrl');
  await keys.pressSequentially('hi!');
  await expect(keys).toHaveValue('hi!');
  await page.keyboard.type(' there');
  await expect(keys).toHaveValue('hi! there');
  await page.goto(process.env.BASE_URL + '/products.html');
  await page.getByRole('searchbox', { name: 'Search products' }).fill('mug');
  await page.getByRole('searchbox', { name: 'Search products' }).press('Enter');
  await expect(page).toHaveURL(/\/echo\?q=mug$/);
  await expect(page.getByTestId('echo-q')).toHaveText('mug');
});
