// expect: pass
import { test, expect } from '@playwright/test';

test('textarea, contenteditable, dates and clearing', async ({ page }) => {
  await page.goto(process.env.BASE_URL + '/widgets.html');
  const notes = page.getByLabel('Notes');
  await notes.fill('line one\nline two');
  await expect(notes).toHaveValue('line one\nline two');
  await notes.clear();
  await expect(notes).toHaveValue('');
  const editor = page.locator('#editor');
  await editor.fill('hello editor');
  await expect(editor).toHaveText('hello editor');
  await page.getByLabel('Date').fill('2024-02-29');
  await expect(page.getByLabel('Date')).toHaveValue('2024-02-29');
});
