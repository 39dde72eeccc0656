// expect: pass
import { test, expect } from '@playwright/test';

test.use({ viewport: { width: 390, height: 844 }, locale: 'fr-FR', timezoneId: 'Europe/Paris', userAgent: 'VantageMobile/1.0' });

test('the shop on a small screen', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/products.html');
  expect(page.viewportSize()).toEqual({ width: 390, height: 844 });
  expect(await page.evaluate(() => innerWidth)).toBe(390);
  expect(await page.evaluate(() => navigator.language)).toBe('fr-FR');
  expect(await page.evaluate(() => navigator.userAgent)).toBe('VantageMobile/1.0');
  expect(await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone)).toBe('Europe/Paris');
});
