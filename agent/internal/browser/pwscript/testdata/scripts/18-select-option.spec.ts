// expect: pass
import { test, expect } from '@playwright/test';

test('select options by value, label and several', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/login.html');
  const country = page.getByLabel('Country');
  await country.selectOption('de');
  await expect(country).toHaveValue('de');
  await country.selectOption({ label: 'Japan' });
  await expect(country).toHaveValue('jp');
  expect(await country.selectOption('France')).toEqual(['fr']);
  await page.goto(process.env.BASE_URL + '/widgets.html');
  const colors = page.getByLabel('Colors');
  expect(await colors.selectOption(['r', 'b'])).toEqual(['r', 'b']);
  expect(await colors.evaluate((el: HTMLSelectElement) => [...el.selectedOptions].map((o) => o.label))).toEqual(['Red', 'Blue']);
  await expect(page.getByLabel('Size')).toHaveValue('m');
});
