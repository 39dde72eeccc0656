// expect: pass
import { test, expect } from '@playwright/test';

test('a wrong password shows an alert', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/login.html');
  await page.getByPlaceholder('you@example.com').fill('ada@example.com');
  await page.getByLabel('Password').fill('wrong');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toHaveText('Invalid credentials');
  await expect(page).toHaveURL(/login\.html$/);
});
