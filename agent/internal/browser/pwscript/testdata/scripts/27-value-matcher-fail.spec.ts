// expect: fail
// message: expect(received).toBe(expected) // Object.is equality
// message: Expected: 3
// message: Received: 2
import { test, expect } from '@playwright/test';

test('arithmetic is checked', async () => {
  const sum = 1 + 1;
  expect(sum).toBe(3); // fails here
});
