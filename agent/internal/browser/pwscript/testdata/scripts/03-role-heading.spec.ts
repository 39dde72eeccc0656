// expect: pass
import { test, expect } from '@playwright/test';

test('roles and names come from the accessibility tree', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  await expect(page.getByRole('heading', { name: 'Welcome' })).toBeVisible();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Welcome');
  await expect(page.getByRole('heading')).toHaveCount(2);
  await expect(page.getByRole('link', { name: 'Login' })).toHaveAttribute('href', '/login.html');
  await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link')).toHaveCount(4);
  await expect(page.getByRole('img', { name: 'Shop logo' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Subscribe' })).toHaveText('Subscribe to news');
  // Hidden elements are not in the accessibility tree.
  await expect(page.getByRole('paragraph').filter({ hasText: 'hidden' })).toHaveCount(0);
});
