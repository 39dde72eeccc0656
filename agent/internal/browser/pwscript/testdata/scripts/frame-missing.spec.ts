// expect: fail
// message: locator('#payment').contentFrame().getByRole('button', { name: 'Pay later' })
// message: Timeout 500ms exceeded.
import { test } from '@playwright/test';

test('a button that is not in the frame', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/frames.html');
  await page.frameLocator('#payment').getByRole('button', { name: 'Pay later' }).click({ timeout: 500 }); // fails here
});
