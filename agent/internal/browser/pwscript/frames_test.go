package pwscript

import "testing"

func TestFrames(t *testing.T) {
	t.Parallel()
	srv, other, _ := pageSite(t)
	runPass(t, srv, other, `
test('frames', async ({ page }) => {
  const attached = [];
  page.on('frameattached', (f) => attached.push(f.name()));
  await page.goto(process.env.BASE_URL + '/frames.html');
  // A frame of the page's own origin: locators enter it, clicks land in it.
  const child = page.frameLocator('#same');
  await expect(child.getByRole('heading')).toHaveText('Inside');
  await child.getByRole('button', { name: 'Inner' }).click();
  await expect(child.locator('button')).toHaveText('Clicked inside');
  await child.getByPlaceholder('Inner field').fill('typed');
  await expect(child.getByPlaceholder('Inner field')).toHaveValue('typed');
  await expect(child.frameLocator('iframe').getByText('Deep text')).toBeVisible();
  await expect(page.locator('#same').contentFrame().locator('h2')).toHaveText('Inside');
  await expect(child.owner()).toHaveAttribute('name', 'child');
  await expect(page.locator('iframe').first().contentFrame().locator('h2')).toHaveCount(1);
  await expect(page.locator('#same >> internal:control=enter-frame >> h2')).toHaveText('Inside');

  // Frame objects.
  const main = page.mainFrame();
  expect(main.parentFrame()).toBeNull();
  expect(main.url()).toBe(process.env.BASE_URL + '/frames.html');
  const names = page.frames().map((f) => f.name());
  expect(names).toContain('child');
  expect(names).toContain('grandchild');
  expect(names).toContain('far');
  const frame = page.frame('child');
  expect(frame.url()).toBe(process.env.BASE_URL + '/child.html');
  expect(frame.parentFrame()).toBe(main);
  expect(frame.childFrames().map((f) => f.name())).toEqual(['grandchild']);
  expect(page.frame({ url: /grandchild/ }).name()).toBe('grandchild');
  expect(page.frame({ name: 'nope' })).toBeNull();
  await expect(frame.locator('h2')).toHaveText('Inside');
  await expect(frame.getByRole('button')).toHaveText('Clicked inside');
  expect(await frame.evaluate(() => document.title)).toBe('Child');
  expect(await page.frame('grandchild').locator('p').textContent()).toBe('Deep text');
  expect(await frame.title()).toBe('Child');
  await frame.waitForSelector('h2');

  // Another origin: listed, evaluated in its own world, but locators do not enter it.
  const far = page.frame('far');
  expect(far.url()).toBe(process.env.OTHER_URL + '/far.html');
  expect(await far.evaluate(() => document.title)).toBe('Other');
  expect(await page.frameLocator('#far').locator('h1').count()).toBe(0);

  await frame.goto(process.env.BASE_URL + '/grandchild.html');
  await expect(page.frameLocator('#same').locator('p')).toHaveText('Deep text');
  expect(attached.length).toBeGreaterThanOrEqual(3); // child, grandchild, far
});
`)
}
