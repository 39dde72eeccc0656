// expect: pass
import { test, expect } from '@playwright/test';

test('Playwright CSS extensions and selector engines', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/network.html');
  await page.locator('button:has-text("refresh")').click();
  await expect(page.locator('li:text-is("A-2 paid")')).toBeVisible();
  await expect(page.locator('#orders li:visible')).toHaveCount(2);
  await expect(page.locator(':nth-match(#orders li, 2)')).toHaveText('A-2 paid');
  await expect(page.locator('ul:has(li:text("shipped"))')).toHaveCount(1);
  await expect(page.locator('role=heading[name="Orders"]')).toBeVisible();
  await expect(page.locator('#orders >> text=/A-\\d shipped/')).toHaveCount(1);
});
