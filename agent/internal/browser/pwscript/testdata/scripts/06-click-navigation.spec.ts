// expect: pass
import { test, expect } from '@playwright/test';

test('clicking a link navigates', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  await page.getByRole('link', { name: 'Login' }).click();
  await expect(page).toHaveURL(/\/login\.html$/);
  expect(await page.title()).toBe('Sign in · Vantage Shop');
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
});
