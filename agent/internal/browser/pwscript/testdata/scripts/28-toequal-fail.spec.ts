// expect: fail
// message: expect(received).toEqual(expected) // deep equality
// message: "status": "down"
import { test, expect } from '@playwright/test';

test('objects are compared deeply', async () => {
  const result = { status: 'down', code: 503 };
  expect(result).toEqual({ status: 'up', code: 503 }); // fails here
});
