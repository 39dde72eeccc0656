// expect: pass
import { test, expect } from '@playwright/test';

test('the page data has the right shape', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/products.html');
  const data = await page.evaluate(() => ({
    title: document.title,
    items: [...document.querySelectorAll('.product h3')].map((h) => h.textContent),
    count: document.querySelectorAll('.product').length,
  }));
  expect(data).toEqual({
    title: expect.stringContaining('Products'),
    items: expect.arrayContaining(['Blue mug']),
    count: expect.any(Number),
  });
  expect(data).toMatchObject({ title: expect.stringMatching(/Shop$/) });
});
