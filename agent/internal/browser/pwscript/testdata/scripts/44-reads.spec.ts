// expect: pass
import { test, expect } from '@playwright/test';

test('reading the page', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  const intro = page.locator('#intro');
  expect(await intro.getAttribute('data-kind')).toBe('intro');
  expect(await intro.getAttribute('data-missing')).toBeNull();
  expect(await intro.innerText()).toBe('Fresh deals, every day.');
  expect(await intro.textContent()).toContain('Fresh   deals');
  expect(await page.getByRole('button').allInnerTexts()).toEqual(['Buy', 'Sell', 'Subscribe to news', 'Add one']);
  await expect(intro).toHaveClass('lead intro');
  await expect(intro).toHaveAttribute('data-kind', /int/);
  await expect(intro).toHaveAttribute('data-kind');
  expect(await page.getByRole('button', { name: 'Buy' }).isEnabled()).toBe(true);
  const box = await page.getByRole('button', { name: 'Buy' }).boundingBox();
  expect(box!.width).toBeGreaterThan(0);
  await page.goto(process.env.BASE_URL + '/widgets.html');
  expect(await page.getByLabel('Read only').inputValue()).toBe('fixed');
  await expect(page.getByLabel('Disabled')).toBeDisabled();
  expect(await page.getByLabel('Read only').isEditable()).toBe(false);
  const content = await page.content();
  expect(content).toContain('<h1>Widgets</h1>');
});
