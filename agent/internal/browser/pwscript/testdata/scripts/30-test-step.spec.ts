// expect: fail
// message: expect(locator).toHaveValue(expected) failed
// message: Expected: "grace@example.com"
// step: a user signs in › fill the form › check the email
import { test, expect } from '@playwright/test';

test('a user signs in', async ({ page }) => {
  await test.step('open the page', async () => {
    await page.goto(process.env.BASE_URL + '/login.html');
  });
  await test.step('fill the form', async () => {
    await page.getByLabel('Email').fill('ada@example.com');
    await test.step('check the email', async () => {
      await expect(page.getByLabel('Email')).toHaveValue('grace@example.com', { timeout: 500 }); // fails here
    });
  });
});
