// expect: pass
import { test, expect } from '@playwright/test';

test('a user signs in', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/login.html');
  await page.getByLabel('Email').fill('ada@example.com');
  await page.getByLabel('Password').fill('secret');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/dashboard\.html/);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Hello, ada@example.com');
  await expect(page.getByRole('table', { name: 'Orders' }).getByRole('row')).toHaveCount(3);
});
