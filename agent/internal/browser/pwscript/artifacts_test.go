package pwscript

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func artifactNamed(rep *Report, name string) *Artifact {
	for i := range rep.Artifacts {
		if rep.Artifacts[i].Name == name {
			return &rep.Artifacts[i]
		}
	}
	return nil
}

func TestScreenshotPathKeepsAnArtifact(t *testing.T) {
	t.Parallel()
	srv := site(t)
	rep := runScript(t, "shots.spec.ts", `
import { test, expect } from '@playwright/test';
test('shots', async ({ page }) => {
  await page.goto('`+srv.URL+`/home.html');
  const full = await page.screenshot({ path: './shots/home.png' });
  expect(full.length).toBeGreaterThan(100);
  const heading = await page.getByRole('heading', { name: 'Welcome' }).screenshot({ path: 'heading.jpg' });
  expect(heading.length).toBeGreaterThan(100);
  await page.screenshot({ path: 'shots/home.png', type: 'jpeg' }); // same path: replaces
  const bytesOnly = await page.screenshot();
  expect(bytesOnly.length).toBeGreaterThan(100);
});`, Options{})
	if !rep.Passed {
		t.Fatalf("run failed:\n%s", describeReport(rep))
	}
	if len(rep.Artifacts) != 2 {
		t.Fatalf("artifacts = %d (%v), want shots-home.png and heading.jpg", len(rep.Artifacts), names(rep))
	}
	home, heading := artifactNamed(rep, "shots-home.png"), artifactNamed(rep, "heading.jpg")
	if home == nil || heading == nil {
		t.Fatalf("artifacts %v, want shots-home.png and heading.jpg", names(rep))
	}
	// The second screenshot to the path asked for a JPEG: it replaced the PNG.
	if home.ContentType != "image/jpeg" || !bytes.HasPrefix(home.Body, []byte{0xff, 0xd8}) {
		t.Errorf("shots-home.png: %s, starts %x; want the JPEG that replaced the PNG", home.ContentType, home.Body[:4])
	}
	if heading.ContentType != "image/jpeg" || !bytes.HasPrefix(heading.Body, []byte{0xff, 0xd8}) {
		t.Errorf("heading.jpg: %s, starts %x", heading.ContentType, heading.Body[:4])
	}
	if len(heading.Body) >= len(home.Body) {
		t.Errorf("the element's screenshot (%d bytes) is not smaller than the page's (%d)", len(heading.Body), len(home.Body))
	}
}

func names(rep *Report) []string {
	var out []string
	for _, a := range rep.Artifacts {
		out = append(out, a.Name)
	}
	return out
}

func TestTestInfo(t *testing.T) {
	t.Parallel()
	srv := site(t)
	rep := runScript(t, "info.spec.ts", `
import { test, expect } from '@playwright/test';
test.describe('shop', () => {
  test.beforeEach(async ({}, testInfo) => {
    testInfo.annotations.push({ type: 'issue', description: 'from the hook' });
  });
  test('home', async ({ page }, testInfo) => {
    testInfo.annotations.push({ type: 'owner', description: 'web team' });
    expect(test.info()).toBe(testInfo);
    await page.goto('`+srv.URL+`/home.html');
    await page.screenshot({ path: testInfo.outputPath('home.png') });
    await testInfo.attach('home page', { path: testInfo.outputPath('home.png') });
    await testInfo.attach('info.json', { body: JSON.stringify({
      title: testInfo.title, titlePath: testInfo.titlePath, status: testInfo.status,
      expectedStatus: testInfo.expectedStatus, retry: testInfo.retry, outputDir: testInfo.outputDir,
      annotations: testInfo.annotations.length, timeout: testInfo.timeout,
    }), contentType: 'application/json' });
    await test.info().attach('note', { body: 'plain text' });
    await test.info().attach('note', { body: new Uint8Array([1, 2, 3]) });
  });
  test.afterEach(async ({}, testInfo) => {
    await testInfo.attach('after.txt', { body: testInfo.status });
  });
});
test.fail('expected to fail', async ({}, testInfo) => {
  await testInfo.attach('expected.txt', { body: testInfo.expectedStatus });
  expect(1).toBe(2);
});`, Options{TestTimeout: 9 * time.Second})
	if !rep.Passed {
		t.Fatalf("run failed:\n%s", describeReport(rep))
	}
	var info struct {
		Title, Status, ExpectedStatus, OutputDir string
		TitlePath                                []string
		Retry, Annotations, Timeout              int
	}
	a := artifactNamed(rep, "info.json")
	if a == nil {
		t.Fatalf("no info.json among %v", names(rep))
	}
	if err := json.Unmarshal(a.Body, &info); err != nil {
		t.Fatal(err)
	}
	if info.Title != "home" || strings.Join(info.TitlePath, "|") != "info.spec.ts|shop|home" || info.Status != "passed" ||
		info.ExpectedStatus != "passed" || info.Retry != 0 || info.Annotations != 2 || info.Timeout != 9000 ||
		info.OutputDir != "test-results/info-shop-home-chromium" {
		t.Errorf("testInfo = %+v", info)
	}
	for name, want := range map[string]string{
		"test-results-info-shop-home-chromium-home.png": "image/png", "home page": "image/png",
		"note": "text/plain", "note-2": "application/octet-stream", "after.txt": "text/plain", "expected.txt": "text/plain",
	} {
		a := artifactNamed(rep, name)
		if a == nil || a.ContentType != want {
			t.Errorf("artifact %q = %+v, want one of type %s (have %v)", name, a, want, names(rep))
		}
	}
	if a := artifactNamed(rep, "note-2"); a != nil && !bytes.Equal(a.Body, []byte{1, 2, 3}) {
		t.Errorf("note-2 body = %v", a.Body)
	}
	if a := artifactNamed(rep, "after.txt"); a != nil && string(a.Body) != "passed" {
		t.Errorf("status in afterEach = %q", a.Body)
	}
	if a := artifactNamed(rep, "expected.txt"); a != nil && string(a.Body) != "failed" {
		t.Errorf("expectedStatus of test.fail = %q", a.Body)
	}
	want := []Annotation{{Type: "issue", Description: "from the hook"}, {Type: "owner", Description: "web team"}}
	if got := rep.Tests[0].Annotations; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("annotations = %+v, want %+v", got, want)
	}
}

func TestAttachFailures(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, body, want string }{
		{"unknown path", `await testInfo.attach('x', { path: 'never-written.png' });`, `testInfo.attach: ENOENT: no such file "never-written.png"`},
		{"no body", `await testInfo.attach('x', {});`, "testInfo.attach: expected { body } or { path }"},
		{"bad body", `await testInfo.attach('x', { body: 42 });`, "testInfo.attach: body: expected a string or a Uint8Array, got int64"},
		{"screenshot path", `await page.screenshot({ path: 'a.gif' });`, `page.screenshot: path: unsupported mime type of "a.gif"`},
		{"outside the output dir", `testInfo.outputPath('../../x');`, "testInfo.outputPath: the path must stay inside"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rep := runScript(t, "bad.spec.ts", `
import { test } from '@playwright/test';
test('t', async ({ page }, testInfo) => {
  `+c.body+`
});`, Options{})
			if rep.Passed || rep.Failure == nil || !strings.Contains(rep.Failure.Message, c.want) || !strings.HasPrefix(rep.Failure.Location, "bad.spec.ts:4:") {
				t.Errorf("failure:\n%s\nwant a message with %q at line 4", describeReport(rep), c.want)
			}
		})
	}
}

func TestArtifactCaps(t *testing.T) {
	t.Parallel()
	rep := runScript(t, "caps.spec.ts", `
import { test } from '@playwright/test';
test('t', async ({}, testInfo) => {
  await testInfo.attach('a.txt', { body: 'x'.repeat(600) });
  await testInfo.attach('big.txt', { body: 'y'.repeat(600) }); // 1200 > 1000 bytes: dropped
  await testInfo.attach('b.txt', { body: 'z'.repeat(300) });
  await testInfo.attach('c.txt', { body: 'w' });              // a fourth: over the count
  await testInfo.attach('token.txt', { body: 'token=' + process.env.TOKEN }); // over the count too
});`, Options{ArtifactMaxBytes: 1000, ArtifactMaxCount: 3, Env: map[string]string{"TOKEN": "s3cr3t"}, Secrets: []string{"s3cr3t"}})
	if !rep.Passed {
		t.Fatalf("a cap failed the run:\n%s", describeReport(rep))
	}
	if got := strings.Join(names(rep), ","); got != "a.txt,b.txt,c.txt" {
		t.Errorf("kept %s, want a.txt,b.txt,c.txt", got)
	}
	if len(rep.ArtifactsDropped) != 2 ||
		!strings.Contains(rep.ArtifactsDropped[0], `"big.txt" dropped: its 600 bytes would take the run's artifacts over their cap of 1000 bytes`) ||
		!strings.Contains(rep.ArtifactsDropped[1], `"token.txt" dropped: a run keeps at most 3 artifacts`) {
		t.Errorf("dropped = %q", rep.ArtifactsDropped)
	}
}

func TestTextArtifactsAreRedacted(t *testing.T) {
	t.Parallel()
	rep := runScript(t, "redact.spec.ts", `
import { test } from '@playwright/test';
test('t', async ({}, testInfo) => {
  await testInfo.attach('log.txt', { body: 'token=' + process.env.TOKEN });
  testInfo.annotations.push({ type: 'token', description: process.env.TOKEN });
});`, Options{Env: map[string]string{"TOKEN": "s3cr3t"}, Secrets: []string{"s3cr3t"}})
	if !rep.Passed {
		t.Fatalf("run failed:\n%s", describeReport(rep))
	}
	if a := artifactNamed(rep, "log.txt"); a == nil || string(a.Body) != "token=[REDACTED]" {
		t.Errorf("log.txt = %+v", a)
	}
	if d := rep.Tests[0].Annotations[0].Description; d != "[REDACTED]" {
		t.Errorf("annotation = %q", d)
	}
}

func TestArtifactName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"shot.png": "shot.png", "./shots/home.png": "shots-home.png", "/abs/x.png": "abs-x.png",
		"../../etc/passwd": "etc-passwd", `a\b.png`: "a-b.png", "a?b#c%.txt": "a_b_c_.txt", ".hidden": "hidden",
		"": "", "..": "",
	} {
		if got := artifactName(in); got != want {
			t.Errorf("artifactName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := artifactName(strings.Repeat("d/", 100) + "end.png"); len(got) > maxArtifactName || !strings.HasSuffix(got, "end.png") {
		t.Errorf("a long name = %q", got)
	}
}
