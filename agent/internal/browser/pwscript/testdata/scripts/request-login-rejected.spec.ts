// expect: fail
// message: expect(response).toBeOK()
// message: Response text:
// message: wrong password
// absent: hunter2-secret
// step: token is refused › log in
import { test, expect } from '@playwright/test';

test('token is refused', async ({ request }) => {
  await test.step('log in', async () => {
    const login = await request.post(process.env.BASE_URL + '/api/login', {
      data: { user: 'ann', password: process.env.SHOP_PASSWORD + '-typo' },
    });
    await expect(login).toBeOK(); // fails here
  });
});
