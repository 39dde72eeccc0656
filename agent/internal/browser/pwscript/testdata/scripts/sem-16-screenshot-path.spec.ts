// expect: pass
import { test, expect } from '@playwright/test';

test('the home page, captured', async ({ page }, testInfo) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  await page.screenshot({ path: testInfo.outputPath('home.png'), fullPage: true });
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
});
