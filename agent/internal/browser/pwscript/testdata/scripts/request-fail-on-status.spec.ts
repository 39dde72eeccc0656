// expect: fail
// message: apiRequestContext.get: 503 Service Unavailable
// message: status 503 body
import { test } from '@playwright/test';

test('an API that is down', async ({ request }) => {
  await request.get(process.env.BASE_URL + '/api/status/503', { failOnStatusCode: true }); // fails here
});
