// expect: fail
// message: not supported: page.route()
// parity: skip — page.route is real Playwright API outside the supported subset
import { test } from '@playwright/test';

test('an API outside the subset fails clearly', async ({ page }) => {
  await page.route('**/*', (route) => route.continue()); // fails here
});
