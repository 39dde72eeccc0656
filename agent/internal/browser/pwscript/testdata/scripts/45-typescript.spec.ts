// expect: pass
import { test, expect, type Page } from '@playwright/test';

interface Product { name: string; price: number }
enum Level { Low = 1, High = 2 }

class ProductsPage {
  constructor(private readonly page: Page) {}
  async open(): Promise<void> {
    await this.page.goto(`${process.env.BASE_URL}/products.html`);
  }
  heading(name: string) {
    return this.page.getByRole('heading', { name, exact: true });
  }
}

test('TypeScript features compile away', async ({ page }) => {
  const products = new ProductsPage(page);
  await products.open();
  await expect(products.heading('Blue mug')).toBeVisible();
  const list: Product[] = [{ name: 'mug', price: 12 }, { name: 'tea', price: 5 }];
  const total = list.reduce((sum, { price }) => sum + price, 0);
  expect(total).toBe(17);
  expect(Level.High).toBe(2);
  const [first, ...rest] = list;
  expect({ ...first, rest: rest.length }).toEqual({ name: 'mug', price: 12, rest: 1 });
  for await (const n of [1, 2]) expect(n).toBeGreaterThan(0);
  const label = (level: Level): string => (level === Level.Low ? 'low' : 'high');
  expect(label(Level.Low)).toBe('low');
});
