// expect: pass
import { test, expect } from '@playwright/test';

test('hovering opens a menu', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/widgets.html');
  await expect(page.getByRole('link', { name: 'Profile' })).toBeHidden();
  await page.getByRole('button', { name: 'Account' }).hover();
  await expect(page.getByRole('link', { name: 'Profile' })).toBeVisible();
  await page.getByRole('link', { name: 'Log out' }).click();
  await expect(page).toHaveURL(/#logout$/);
  await page.getByRole('button', { name: 'Double me' }).dblclick();
  await expect(page.locator('#dbl')).toHaveText('yes');
});
