// expect: fail
// message: Timeout: 300ms
import { test, expect } from '@playwright/test';

const quick = expect.configure({ timeout: 300 });

test('a banner that never shows', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/home.html');
  await quick(page.getByText('Flash sale')).toBeVisible(); // fails here
});
