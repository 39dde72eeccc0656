// expect: pass
import { test, expect } from '@playwright/test';

test('screenshots come back as bytes', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  const png = await page.screenshot();
  expect(png.length).toBeGreaterThan(1000);
  expect([png[0], png[1], png[2], png[3]]).toEqual([0x89, 0x50, 0x4e, 0x47]);
  const jpeg = await page.screenshot({ type: 'jpeg', quality: 50, fullPage: true });
  expect(jpeg[0]).toBe(0xff);
  await page.setViewportSize({ width: 640, height: 480 });
  expect(page.viewportSize()).toEqual({ width: 640, height: 480 });
});
