// expect: pass
import { test, expect } from '@playwright/test';

test('checkboxes and radios', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/widgets.html');
  const terms = page.getByLabel('I accept the terms');
  await expect(terms).not.toBeChecked();
  await terms.check();
  await expect(terms).toBeChecked();
  expect(await terms.isChecked()).toBe(true);
  await page.getByRole('checkbox', { name: 'Newsletter' }).uncheck();
  await expect(page.getByRole('checkbox', { name: 'Newsletter' })).toBeChecked({ checked: false });
  await page.getByRole('radio', { name: 'Express' }).check();
  await expect(page.getByRole('radio', { name: 'Standard' })).not.toBeChecked();
  await expect(page.getByRole('radio', { checked: true })).toHaveCount(1);
});
