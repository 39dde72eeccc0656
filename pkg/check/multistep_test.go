package check

import (
	"strings"
	"testing"
)

func TestValidateMultistep(t *testing.T) {
	t.Parallel()
	const head = "import { test, expect } from '@playwright/test'\n"
	cases := []struct {
		name, script, problem string
	}{
		{"request only", head + "test('a', async ({ request }) => {\n  await request.get('https://x')\n})\n", ""},
		{"a page variable is no fixture", head + "test('a', async ({ request }) => {\n  const page = 2\n  await request.get('https://x?page=' + page)\n})\n", ""},
		{"page fixture", head + "test('a', async ({ request }) => {})\ntest('b', async ({ request, page }) => {})\n", "line 3: uses the page fixture"},
		{"browser in a hook", head + "test.beforeAll(async function ({ browser }) {})\ntest('a', async () => {})\n", "line 2: uses the browser fixture"},
		{"renamed context", head + "test('a', { tag: '@x' }, async ({ context: c }) => {})\n", "line 2: uses the context fixture"},
		{"empty", "  ", "must not be empty"},
		{"no import", "test('a', async () => {})\n", "must import"},
		{"syntax", head + "test('a', async () => {\n", "line 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := Example(Multistep)
			s.Multistep.Script = c.script
			fe := s.Validate()
			if c.problem == "" {
				if len(fe) != 0 {
					t.Fatalf("want valid, got %v", fe)
				}
				return
			}
			if len(fe) != 1 || fe[0].Field != "script" || !strings.Contains(fe[0].Message, c.problem) {
				t.Fatalf("want one script error with %q, got %v", c.problem, fe)
			}
		})
	}
}
