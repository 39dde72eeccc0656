// expect: fail
// message: not supported: require('fs')
// parity: skip — Node.js has fs
import { test } from '@playwright/test';
import { readFileSync } from 'fs'; // fails here

test('no file system', async () => {
  readFileSync('/etc/passwd');
});
