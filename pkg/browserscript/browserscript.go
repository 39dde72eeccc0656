// Package browserscript turns a browser check's script — a Playwright Test file written in
// TypeScript or JavaScript — into a program the agent's script runtime can run without Node.js.
//
// Transform compiles the script with esbuild into a CommonJS program for goja (the agent's
// JavaScript engine), lowering only the syntax goja lacks (async generators, for await), with an
// inline source map so that runtime positions point back into the user's file. The control plane
// calls it when a script is created or patched, so a syntax error is rejected with its line and
// column; the agent calls it again before each run.
package browserscript

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/evanw/esbuild/pkg/api"
)

// TestModule is the module every script imports its test, expect and fixtures from.
const TestModule = "@playwright/test"

// DefaultFilename names a script whose check gives no file name, in messages and locations.
const DefaultFilename = "check.spec.ts"

// Program is a transformed script.
type Program struct {
	// Filename is the name the user's source goes by in locations ("login.spec.ts").
	Filename string
	// Code is CommonJS JavaScript for goja; it ends with an inline source map whose source is
	// Filename, so goja reports positions in the user's file.
	Code string
	// Imports lists the module specifiers the script imports or requires, in source order,
	// each once ("@playwright/test", "fs").
	Imports []string
}

// SyntaxError is a script that does not compile. Line and Column are 1-based, Column counted
// in characters of the line.
type SyntaxError struct {
	Line, Column int
	Message      string
}

func (e *SyntaxError) Error() string {
	if e.Line == 0 {
		return e.Message
	}
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Message)
}

// unsupported lists the syntax goja does not run, which esbuild lowers (or, for regular
// expression features it cannot lower, turns into a RegExp constructor call that fails with a
// clear message at run time rather than at parse time).
var unsupported = map[string]bool{
	"async-generator":                 false,
	"dynamic-import":                  false, // import() becomes a require() the runtime answers
	"for-await":                       false,
	"regexp-match-indices":            false,
	"regexp-set-notation":             false,
	"regexp-unicode-property-escapes": false,
}

// Transform compiles source, named filename in locations, into a Program. Files ending in .js,
// .mjs, .cjs or .jsx are JavaScript; any other name (.ts, none) is TypeScript. A source that does
// not compile returns a *SyntaxError for its first error.
func Transform(filename, source string) (*Program, error) {
	if filename == "" {
		filename = DefaultFilename
	}
	var (
		mu      sync.Mutex
		imports []string
	)
	recordImports := api.Plugin{
		Name: "imports",
		Setup: func(b api.PluginBuild) {
			// Every import stays an import: the runtime resolves them (and refuses all but
			// TestModule) when the program runs.
			b.OnResolve(api.OnResolveOptions{Filter: ".*"}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
				mu.Lock()
				if !slices.Contains(imports, a.Path) {
					imports = append(imports, a.Path)
				}
				mu.Unlock()
				return api.OnResolveResult{Path: a.Path, External: true}, nil
			})
		},
	}
	res := api.Build(api.BuildOptions{
		Stdin: &api.StdinOptions{
			Contents:   sourceMapComment.ReplaceAllString(source, ""),
			Sourcefile: filename,
			Loader:     loaderFor(filename),
		},
		Bundle:         true,
		Write:          false,
		Format:         api.FormatCommonJS,
		Platform:       api.PlatformNeutral,
		Target:         api.ES2022,
		Supported:      unsupported,
		Sourcemap:      api.SourceMapInline,
		SourcesContent: api.SourcesContentExclude,
		Charset:        api.CharsetUTF8,
		// Keep an import whose bindings go unused (or are types only), so that an import of
		// TestModule is seen however the script uses it.
		TsconfigRaw: `{"compilerOptions": {"verbatimModuleSyntax": true}}`,
		LogLevel:    api.LogLevelSilent,
		Plugins:     []api.Plugin{recordImports},
	})
	if len(res.Errors) > 0 {
		return nil, syntaxError(res.Errors[0])
	}
	if len(res.OutputFiles) != 1 {
		return nil, errors.New("transform produced no program")
	}
	return &Program{Filename: filename, Code: string(res.OutputFiles[0].Contents), Imports: imports}, nil
}

// sourceMapComment matches a source map reference in the user's script. It is blanked before
// compiling (the line stays, so positions do not move): the compiler would otherwise read the
// file it names, or chain the map it embeds into the program's own.
var sourceMapComment = regexp.MustCompile(`(?m)//[#@]\s*sourceMappingURL=.*$`)

func loaderFor(filename string) api.Loader {
	switch strings.ToLower(path.Ext(filename)) {
	case ".js", ".mjs", ".cjs", ".jsx":
		return api.LoaderJS
	case ".tsx":
		return api.LoaderTSX
	default:
		return api.LoaderTS
	}
}

func syntaxError(m api.Message) *SyntaxError {
	e := &SyntaxError{Message: m.Text}
	if loc := m.Location; loc != nil {
		e.Line = loc.Line
		col := min(max(loc.Column, 0), len(loc.LineText))
		e.Column = utf8.RuneCountInString(loc.LineText[:col]) + 1
	}
	return e
}

// envRef finds process.env.NAME, process.env?.NAME and process.env['NAME'] (any quote), not
// as part of a longer name.
var envRef = regexp.MustCompile(`(?:^|[^\w$])process\.env(?:\??\.\s*([A-Za-z_$][\w$]*)|\s*(?:\?\.)?\[\s*(?:'([^'\\]+)'|"([^"\\]+)"|` + "`([^`\\\\$]+)`" + `)\s*\])`)

// envDestructure finds `{ A, B: b, C = 'x' } = process.env`.
var envDestructure = regexp.MustCompile(`\{([^{}]*)\}\s*=\s*process\.env(?:[^\w$]|$)`)

// EnvRefs returns the names a script reads from process.env — process.env.NAME,
// process.env['NAME'] and destructuring such as const { NAME } = process.env — each once, in
// order of first use. It is an exact scan of the source text, not of the program: a name
// that appears only in a comment counts too, which costs nothing but handing the script a
// value it does not read. A name computed at run time (process.env[name]) cannot be found.
func EnvRefs(source string) []string {
	var out []string
	add := func(name string) {
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	type hit struct {
		at    int
		names []string
	}
	var hits []hit
	for _, m := range envRef.FindAllStringSubmatchIndex(source, -1) {
		for g := 1; g <= 4; g++ {
			if m[2*g] >= 0 {
				hits = append(hits, hit{m[0], []string{source[m[2*g]:m[2*g+1]]}})
			}
		}
	}
	for _, m := range envDestructure.FindAllStringSubmatchIndex(source, -1) {
		var names []string
		for _, part := range strings.Split(source[m[2]:m[3]], ",") {
			name, _, _ := strings.Cut(part, ":")
			name, _, _ = strings.Cut(name, "=")
			name = strings.Trim(strings.TrimSpace(name), `'"`)
			if !strings.HasPrefix(name, "...") {
				names = append(names, name)
			}
		}
		hits = append(hits, hit{m[0], names})
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return a.at - b.at })
	for _, h := range hits {
		for _, n := range h.names {
			add(n)
		}
	}
	return out
}
