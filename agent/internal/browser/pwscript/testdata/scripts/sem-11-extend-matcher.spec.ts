// expect: fail
// message: expected 5 to be an even number of items
import { test, expect } from '@playwright/test';

expect.extend({
  toBeEven(received: number) {
    const pass = received % 2 === 0;
    return { pass, message: () => `expected ${received}${this.isNot ? ' not' : ''} to be an even number of items` };
  },
});

test('the listing is even', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/products.html');
  expect(await page.getByRole('listitem').count()).not.toBeEven();
  expect(5).toBeEven(); // fails here
});
