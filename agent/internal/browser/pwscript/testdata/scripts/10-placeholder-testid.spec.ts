// expect: pass
import { test, expect } from '@playwright/test';

test('other getBy locators', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  await expect(page.getByTestId('subscribe')).toHaveText('Subscribe to news');
  await expect(page.getByAltText('Shop logo')).toBeVisible();
  await expect(page.getByTitle('Opening hours')).toHaveText('9–17');
  await expect(page.getByText('Fresh deals, every day.')).toBeVisible();
  await expect(page.getByText('fresh deals')).toHaveCount(1);
  await expect(page.getByText('fresh deals', { exact: true })).toHaveCount(0);
  await expect(page.getByText(/every\s+day/)).toHaveId('intro');
  await page.goto(process.env.BASE_URL + '/login.html');
  await expect(page.getByPlaceholder('you@example.com')).toBeEditable();
  await expect(page.getByPlaceholder('YOU@EXAMPLE')).toHaveAttribute('type', 'email');
});
