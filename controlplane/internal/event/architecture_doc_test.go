package event_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// repoRoot is the repository's root seen from this package's directory.
const repoRoot = "../../.."

// TestArchitectureDocListsEveryPackageAndEvent: docs/architecture.md is the map of the tree, so
// every package directory under controlplane/internal, agent/internal and pkg has a row in its
// section's package table, and every event type of this package is named in it. A package or
// event added without a line there fails here, naming it.
func TestArchitectureDocListsEveryPackageAndEvent(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{ // source tree → its section's heading in the doc
		"controlplane/internal": "### `controlplane/`",
		"agent/internal":        "### `agent/`",
		"pkg":                   "### `proto/`, `pkg/`",
	}
	for tree, heading := range sections {
		section := docSection(t, string(doc), heading)
		for _, dir := range goPackageDirs(t, tree) {
			// The controlplane and agent tables name packages from their module's root
			// (`internal/api`); the pkg table from the repository's (`pkg/check`).
			name := dir
			if tree != "pkg" {
				name = strings.TrimPrefix(dir, strings.SplitN(tree, "/", 2)[0]+"/")
			}
			if !strings.Contains(section, "| `"+name+"` |") {
				t.Errorf("docs/architecture.md, section %s: no row for package %s (want a line starting | `%s` |)", heading, dir, name)
			}
		}
	}
	types := eventTypes(t)
	if len(types) < 18 {
		t.Fatalf("found %d event types in event.go, want at least 18: the parser lost them", len(types))
	}
	for _, typ := range types {
		if !strings.Contains(string(doc), "`"+typ+"`") {
			t.Errorf("docs/architecture.md does not name the event type `%s`", typ)
		}
	}
}

// docSection is doc from heading to the next heading of the same or a higher level.
func docSection(t *testing.T, doc, heading string) string {
	t.Helper()
	i := strings.Index(doc, heading+"\n")
	if i < 0 {
		t.Fatalf("docs/architecture.md has no heading %q", heading)
	}
	rest := doc[i+len(heading):]
	for _, next := range []string{"\n### ", "\n## "} {
		if j := strings.Index(rest, next); j >= 0 {
			rest = rest[:j]
		}
	}
	return rest
}

// goPackageDirs lists the directories under tree (relative to the repository) that hold Go
// files, as slash paths from the repository's root.
func goPackageDirs(t *testing.T, tree string) []string {
	t.Helper()
	seen := map[string]bool{}
	var dirs []string
	err := filepath.WalkDir(filepath.Join(repoRoot, tree), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, err := filepath.Rel(repoRoot, filepath.Dir(path))
		if err != nil {
			return err
		}
		if rel = filepath.ToSlash(rel); !seen[rel] {
			seen[rel] = true
			dirs = append(dirs, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatalf("no Go package under %s: the walk is wrong", tree)
	}
	return dirs
}

// eventTypes are the values of the Type… constants of event.go.
func eventTypes(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "event.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "Type") || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					types = append(types, v)
				}
			}
		}
	}
	return types
}
