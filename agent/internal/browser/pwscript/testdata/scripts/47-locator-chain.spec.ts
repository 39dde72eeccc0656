// expect: pass
import { test, expect } from '@playwright/test';

test('chained locators search inside their parent', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/login.html');
  const form = page.locator('form#login');
  await expect(form.getByRole('button')).toHaveText('Sign in');
  await expect(form.locator('input')).toHaveCount(3);
  await expect(page.locator('main').locator(page.getByRole('heading'))).toHaveText('Sign in');
  await expect(page.locator('label', { hasText: 'Remember' }).locator('input')).not.toBeChecked();
  await expect(page.locator('xpath=//button[@type="submit"]')).toHaveText('Sign in');
  await expect(page.locator('text=Remember me')).toBeVisible();
  await expect(page.locator('form >> button')).toBeVisible();
  await expect(page.getByRole('textbox').and(page.locator('#email'))).toHaveCount(1);
  await expect(page.getByRole('heading').or(page.getByRole('button'))).toHaveCount(2);
  await page.goto(process.env.BASE_URL + '/widgets.html');
  await expect(page.getByRole('region', { name: 'Choices' }).getByRole('checkbox')).toHaveCount(2);
});
