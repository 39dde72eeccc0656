// expect: pass
import { test, expect } from '@playwright/test';

test('pay inside the payment frame', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/frames.html');
  const payment = page.frameLocator('#payment');
  await expect(payment.getByRole('heading')).toHaveText('Card details');
  await payment.getByLabel('Card number').fill('4242424242424242');
  await payment.getByRole('button', { name: 'Pay now' }).click();
  await expect(page.locator('#paid')).toHaveText('Paid with 4242');
  expect(page.frame('payment').url()).toContain('/payment.html');
});
