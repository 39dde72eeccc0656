// Package envconfigtest checks a binary's declared variables against its configuration struct
// and against the settings table of its documentation, for the binaries' config tests.
package envconfigtest

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vantagehq/vantage/pkg/envconfig"
)

// CheckVars fails t unless every Var of vars is well formed — a VANTAGE_ name of its own, a
// meaning, a default or what unset means — and binds a field of *cfg, and every field of *cfg is
// bound by a Var: a field added without its Var (or a Var pointing elsewhere) fails here.
func CheckVars(t testing.TB, cfg any, vars []envconfig.Var) {
	t.Helper()
	fields := reflect.ValueOf(cfg).Elem()
	bound := make([]bool, fields.NumField())
	seen := map[string]bool{}
	for _, v := range vars {
		switch {
		case !strings.HasPrefix(v.Name, "VANTAGE_"):
			t.Errorf("%q: not a VANTAGE_ variable", v.Name)
		case seen[v.Name]:
			t.Errorf("%s: declared twice", v.Name)
		case strings.TrimSpace(v.Help) == "":
			t.Errorf("%s: no meaning", v.Name)
		case count(v.Default, v.Unset, v.Required) != 1:
			t.Errorf("%s: wants exactly one of Default, Unset and Required", v.Name)
		}
		seen[v.Name] = true
		target := reflect.ValueOf(v.Into.Target())
		i := -1
		for f := range fields.NumField() {
			if addr := fields.Field(f).Addr(); target.IsValid() && addr.Type() == target.Type() && addr.Pointer() == target.Pointer() {
				i = f
			}
		}
		if i < 0 {
			t.Errorf("%s: bound to no field of %T", v.Name, cfg)
			continue
		}
		bound[i] = true
	}
	for f, ok := range bound {
		if !ok {
			t.Errorf("%T.%s: no variable sets it", cfg, fields.Type().Field(f).Name)
		}
	}
}

func count(s ...string) int {
	n := 0
	for _, x := range s {
		if x != "" {
			n++
		}
	}
	return n
}

// CheckDoc fails t when the settings table of id in the Markdown file at path is not the one
// vars make, naming the lines that differ; with update it writes vars' table there instead.
func CheckDoc(t testing.TB, path, id string, vars []envconfig.Var, update bool) {
	t.Helper()
	doc, err := os.ReadFile(path) //nolint:gosec // the repository's own docs page, named by the test
	if err != nil {
		t.Fatal(err)
	}
	want := envconfig.Markdown(vars)
	spliced, err := envconfig.Splice(string(doc), id, want)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if spliced == string(doc) {
		return
	}
	if update {
		if err := os.WriteFile(path, []byte(spliced), 0o644); err != nil { //nolint:gosec // a docs page in the repository, readable by all like its others
			t.Fatal(err)
		}
		return
	}
	// What the document holds now is what splicing it with its own table leaves unchanged.
	docLines := strings.Split(string(doc), "\n")
	wantLines := strings.Split(want, "\n")
	for _, l := range wantLines {
		if l != "" && !slices.Contains(docLines, l) {
			t.Errorf("%s lacks the line\n%s", path, l)
		}
	}
	splicedLines := strings.Split(spliced, "\n")
	for _, l := range docLines {
		if strings.HasPrefix(l, "| ") && !slices.Contains(splicedLines, l) {
			t.Errorf("%s has the line no variable of %s makes\n%s", path, id, l)
		}
	}
	t.Errorf("%s: the settings table of %s differs from its variables (lines above); rewrite it with -update", path, id)
}
