package browserscript

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestTransform(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, filename, source string
		imports                []string
		code                   []string // fragments the program must contain
		absent                 []string // fragments it must not
	}{
		{
			name:     "typescript with type annotations and a type-only import binding",
			filename: "login.spec.ts",
			source:   "import { test, expect, type Page } from '@playwright/test'\ntest('a', async ({ page }: { page: Page }) => {\n  await page.goto('/')\n})\n",
			imports:  []string{"@playwright/test"},
			code:     []string{`require("@playwright/test")`, "async ({ page }) =>", "await page.goto"},
			absent:   []string{": Page"},
		},
		{
			name:     "an unused import is kept, so the runtime sees it",
			filename: "a.spec.ts",
			source:   "import { test } from '@playwright/test'\nimport fs from 'fs'\n",
			imports:  []string{"@playwright/test", "fs"},
			code:     []string{`require("fs")`},
		},
		{
			name:     "commonjs javascript",
			filename: "a.spec.js",
			source:   "const { test } = require('@playwright/test');\ntest('a', () => {})",
			imports:  []string{"@playwright/test"},
		},
		{
			name:     "for await is lowered (goja has no async iteration), async functions are not",
			filename: "a.spec.ts",
			source:   "import { test } from '@playwright/test'\ntest('a', async () => { for await (const x of []) {} })",
			imports:  []string{"@playwright/test"},
			code:     []string{"async () =>", "await iter.next()"},
			absent:   []string{"for await"},
		},
		{
			name:    "no file name",
			source:  "import '@playwright/test'\nconst x: number = 1",
			imports: []string{"@playwright/test"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Transform(tc.filename, tc.source)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.filename
			if want == "" {
				want = DefaultFilename
			}
			if p.Filename != want {
				t.Errorf("Filename = %q, want %q", p.Filename, want)
			}
			if !slices.Equal(p.Imports, tc.imports) {
				t.Errorf("Imports = %q, want %q", p.Imports, tc.imports)
			}
			for _, f := range tc.code {
				if !strings.Contains(p.Code, f) {
					t.Errorf("code lacks %q:\n%s", f, p.Code)
				}
			}
			for _, f := range tc.absent {
				if strings.Contains(p.Code, f) {
					t.Errorf("code has %q:\n%s", f, p.Code)
				}
			}
			if got := sourceMapSources(t, p.Code); !slices.Equal(got, []string{want}) {
				t.Errorf("source map sources = %q, want [%q]", got, want)
			}
		})
	}
}

// sourceMapSources decodes the inline source map at the end of code.
func sourceMapSources(t *testing.T, code string) []string {
	t.Helper()
	const prefix = "//# sourceMappingURL=data:application/json;base64,"
	i := strings.LastIndex(code, prefix)
	if i < 0 {
		t.Fatalf("no inline source map in:\n%s", code)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(code[i+len(prefix):]))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Sources []string `json:"sources"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m.Sources
}

func TestTransformSyntaxError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, filename, source string
		line, column           int
		message                string
	}{
		{"missing operand", "a.spec.ts", "import '@playwright/test'\ntest('a', () => {\n    const x = 1 +;\n})", 3, 18, `Unexpected ";"`},
		{"column counts characters, not bytes", "a.spec.ts", "const é = 'ü' +;", 1, 16, `Unexpected ";"`},
		{"unclosed block", "a.spec.js", "test('a', () => {\n", 2, 1, "Unexpected end of file"},
		{"typescript syntax in a javascript file", "a.spec.js", "const x: number = 1", 1, 8, "Expected"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Transform(tc.filename, tc.source)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *SyntaxError", err)
			}
			if se.Line != tc.line || se.Column != tc.column || !strings.Contains(se.Message, tc.message) {
				t.Errorf("got line %d column %d %q, want line %d column %d containing %q", se.Line, se.Column, se.Message, tc.line, tc.column, tc.message)
			}
			if want := "line "; !strings.HasPrefix(se.Error(), want) {
				t.Errorf("Error() = %q", se.Error())
			}
		})
	}
}

func TestTransformIgnoresSourceMapComments(t *testing.T) {
	t.Parallel()
	for _, ref := range []string{"/etc/hostname", "data:application/json;base64,eyJ2ZXJzaW9uIjozLCJzb3VyY2VzIjpbIi9ldGMvcGFzc3dkIl0sIm1hcHBpbmdzIjoiQUFBQSJ9"} {
		p, err := Transform("a.spec.ts", "import '@playwright/test'\n//# sourceMappingURL="+ref+"\nconst x = 1\n")
		if err != nil {
			t.Fatal(err)
		}
		if got := sourceMapSources(t, p.Code); !slices.Equal(got, []string{"a.spec.ts"}) {
			t.Errorf("%s: source map sources = %q", ref, got)
		}
		if strings.Count(p.Code, "sourceMappingURL") != 1 {
			t.Errorf("%s: the script's own reference survived:\n%s", ref, p.Code)
		}
	}
}
