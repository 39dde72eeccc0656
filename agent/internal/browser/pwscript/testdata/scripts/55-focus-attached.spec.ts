// expect: pass
import { test, expect } from '@playwright/test';

test('focus and attachment', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/login.html');
  await page.getByLabel('Email').focus();
  await expect(page.getByLabel('Email')).toBeFocused();
  await expect(page.getByLabel('Password')).not.toBeFocused();
  await expect(page.locator('#error')).toBeAttached();
  await expect(page.locator('#error')).toBeHidden();
  await expect(page.locator('#nothing')).not.toBeAttached();
  await page.getByLabel('Email').blur();
  await expect(page.getByLabel('Email')).not.toBeFocused();
  await expect(page.locator('label', { hasText: 'Remember' })).toHaveCount(1);
  await expect(page.getByRole('checkbox', { name: 'Remember me' })).not.toBeChecked();
  await page.locator('label', { hasText: 'Remember' }).click();
  await expect(page.getByRole('checkbox', { name: 'Remember me' })).toBeChecked();
});
