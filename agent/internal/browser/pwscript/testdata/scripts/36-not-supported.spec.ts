// expect: fail
// message: not supported: page.pdf()
// parity: skip — page.pdf is real Playwright API outside the supported subset
import { test } from '@playwright/test';

test('an API outside the subset fails clearly', async ({ page }) => {
  await page.pdf(); // fails here
});
