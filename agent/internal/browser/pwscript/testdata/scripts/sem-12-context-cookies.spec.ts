// expect: pass
import { test, expect } from '@playwright/test';

test('a session cookie is sent', async ({ page, context }) => {
  await context.addCookies([{ name: 'session', value: 'abc123', url: process.env.BASE_URL! }]);
  await page.goto(process.env.BASE_URL + '/home.html');
  expect(await page.evaluate(() => document.cookie)).toContain('session=abc123');
  expect(await context.cookies()).toEqual([expect.objectContaining({ name: 'session', value: 'abc123' })]);
  await context.clearCookies();
  expect(await context.cookies()).toHaveLength(0);
});
test('the next test starts without it', async ({ context }) => {
  expect(await context.cookies()).toEqual([]);
});
