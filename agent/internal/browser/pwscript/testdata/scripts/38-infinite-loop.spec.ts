// expect: fail
// message: kept running JavaScript without awaiting anything
// timeout: 3000
// parity: skip — Node.js cannot interrupt a synchronous loop; Playwright kills the worker
import { test } from '@playwright/test';

test('an endless loop is interrupted at the deadline', async () => {
  let n = 0;
  while (true) {
    n++;
  }
});
