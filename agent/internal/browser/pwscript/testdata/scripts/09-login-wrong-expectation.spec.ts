// expect: fail
// message: expect(locator).toBeVisible() failed
// message: Locator: getByRole('heading', { name: 'Hello' })
// message: Expected: visible
// message: Timeout: 1500ms
import { test, expect } from '@playwright/test';

test('the dashboard is expected after signing in', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/login.html');
  await page.getByLabel('Email').fill('ada@example.com');
  await page.getByLabel('Password').fill('wrong');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Hello' })).toBeVisible({ timeout: 1500 }); // fails here
});
