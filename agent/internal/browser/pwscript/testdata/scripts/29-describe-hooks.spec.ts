// expect: pass
import { test, expect } from '@playwright/test';

const order: string[] = [];

test.describe('shop', () => {
  test.beforeAll(async () => { order.push('beforeAll'); });
  test.beforeEach(async ({ page }) => {
    order.push('beforeEach');
    await page.goto(process.env.BASE_URL + '/home.html');
  });
  test.afterEach(async () => { order.push('afterEach'); });
  test.afterAll(async () => { order.push('afterAll'); });

  test('first', async ({ page }) => {
    order.push('first');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Welcome');
  });

  test.describe('nested', () => {
    test.beforeEach(async () => { order.push('nested beforeEach'); });
    test('second', async ({ page }) => {
      order.push('second');
      await page.locator('#inc').click();
      await page.locator('#inc').click();
      await expect(page.locator('#count')).toHaveText('2');
      expect(order).toEqual(['beforeAll', 'beforeEach', 'first', 'afterEach', 'beforeEach', 'nested beforeEach', 'second']);
    });
  });
});
