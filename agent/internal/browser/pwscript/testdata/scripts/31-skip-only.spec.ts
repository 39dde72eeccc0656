// expect: pass
import { test, expect } from '@playwright/test';

test('not focused, so not run', async () => {
  expect(1).toBe(2);
});

test.only('focused test runs', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  await expect(page).toHaveTitle('Vantage Shop');
});

test.describe.only('focused group', () => {
  test('runs too', async () => {
    expect(true).toBeTruthy();
  });
  test.skip('skipped by declaration', async () => {
    expect(1).toBe(2);
  });
  test('skips itself', async () => {
    test.skip(true, 'not today');
    expect(1).toBe(2);
  });
  test.fixme('fixme is skipped', async () => {
    expect(1).toBe(2);
  });
});
