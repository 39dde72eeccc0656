// expect: pass
import { test as base, expect, type Page } from '@playwright/test';

type Fixtures = { loggedIn: Page; email: string };

const test = base.extend<Fixtures>({
  email: ['ada@example.com', { option: true }],
  loggedIn: async ({ page, email }, use) => {
    await page.goto(process.env.BASE_URL + '/login.html');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('secret');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page).toHaveURL(/dashboard\.html/);
    await use(page);
  },
});

test('the dashboard greets the user', async ({ loggedIn }) => {
  await expect(loggedIn.getByRole('heading', { level: 1 })).toHaveText('Hello, ada@example.com');
});

test.describe('another user', () => {
  test.use({ email: 'grace@example.com' });
  test('is greeted by name', async ({ loggedIn }) => {
    await expect(loggedIn.getByRole('heading', { level: 1 })).toHaveText('Hello, grace@example.com');
  });
});
