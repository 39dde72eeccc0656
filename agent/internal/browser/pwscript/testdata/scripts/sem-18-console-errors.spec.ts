// expect: pass
import { test, expect } from '@playwright/test';

test('the page logs no errors', async ({ page }) => {
  const errors: string[] = [];
  page.on('console', (msg) => { if (msg.type() === 'error') errors.push(msg.text()); });
  await page.goto(process.env.BASE_URL + '/products.html');
  await page.getByRole('button', { name: 'Add to cart' }).first().click();
  expect(errors).toEqual([]);
});
