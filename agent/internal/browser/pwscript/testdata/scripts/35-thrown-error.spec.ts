// expect: fail
// message: Error: price must be positive, got -3
import { test } from '@playwright/test';

function checkPrice(p: number) {
  if (p < 0) {
    throw new Error(`price must be positive, got ${p}`); // fails here
  }
}

test('an exception of the script fails the test', async () => {
  checkPrice(-3);
});
