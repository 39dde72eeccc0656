// expect: fail
// message: Error: the test data could not be set up
import { test, expect } from '@playwright/test';

test.describe('with setup', () => {
  test.beforeAll(async () => {
    throw new Error('the test data could not be set up'); // fails here
  });
  test('a', async () => {
    expect(1).toBe(1);
  });
  test('b', async () => {
    expect(2).toBe(2);
  });
});
