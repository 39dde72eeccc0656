// expect: pass
import { test, expect } from '@playwright/test';

test('history and reload', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  await page.locator('#inc').click();
  await expect(page.locator('#count')).toHaveText('1');
  await page.reload();
  await expect(page.locator('#count')).toHaveText('0');
  await page.goto(process.env.BASE_URL + '/products.html');
  await page.goBack();
  await expect(page).toHaveURL(/home\.html$/);
  await page.goForward();
  await expect(page).toHaveTitle('Products · Vantage Shop');
});
