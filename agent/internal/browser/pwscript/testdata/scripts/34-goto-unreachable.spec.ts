// expect: fail
// message: page.goto: net::ERR_CONNECTION_REFUSED at http://127.0.0.1:
import { test } from '@playwright/test';

test('a server that is down', async ({ page }) => {
  await page.goto(process.env.DOWN_URL!); // fails here
});
