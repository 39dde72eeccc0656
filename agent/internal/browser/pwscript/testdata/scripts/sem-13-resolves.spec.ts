// expect: pass
import { test, expect } from '@playwright/test';

test('titles resolve', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  await expect(page.title()).resolves.toContain('Vantage');
  await expect(Promise.reject(new Error('offline'))).rejects.toThrow('offline');
});
