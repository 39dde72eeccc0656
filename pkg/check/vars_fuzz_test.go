package check

import (
	"strings"
	"testing"
)

// FuzzVarRefs runs the {{NAME}} resolver on arbitrary text: it never panics, every name it
// reports is one the text references, replacing with a lookup that knows every name leaves no
// reference, and replacing with a lookup that knows none changes nothing.
func FuzzVarRefs(f *testing.F) {
	for _, s := range []string{"https://{{HOST}}/x", "{{ A }}{{A}}{{b_1}}", "{{", "}}{{}}", "{{{{X}}}}", "{{ \t X\n}}", "plain", "{{Ünïcode}}", strings.Repeat("{{A}}", 1000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names := VarRefs(s)
		if HasVarRef(s) != (len(names) > 0) {
			t.Fatalf("HasVarRef(%q) = %v with refs %v", s, HasVarRef(s), names)
		}
		for _, n := range names {
			if !strings.Contains(s, n) {
				t.Fatalf("VarRefs(%q) reports %q, which the text does not hold", s, n)
			}
		}
		if got := ReplaceVarRefs(s, func(string) (string, bool) { return "", false }); got != s {
			t.Fatalf("replacing with no values changed %q into %q", s, got)
		}
		// "·" cannot be part of a reference, so nothing referenced survives, and no new
		// reference can form across a replacement.
		if out := ReplaceVarRefs(s, func(string) (string, bool) { return "·", true }); HasVarRef(out) {
			t.Fatalf("%q still references %v after replacing every reference: %q", s, VarRefs(out), out)
		}
	})
}
