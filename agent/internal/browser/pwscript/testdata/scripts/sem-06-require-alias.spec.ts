// expect: pass
const { test: base, expect } = require('@playwright/test');

const test = base.extend({
  shop: async ({ page }, use) => {
    await page.goto(process.env.BASE_URL + '/products.html');
    await use(page);
  },
});

test('products are priced', async ({ shop }) => {
  await expect(shop.locator('.price').first()).toHaveText('€12');
});
