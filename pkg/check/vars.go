package check

import "regexp"

// VarNamePattern is the rule for environment variable names (api/openapi/environment-variables.yaml).
var VarNamePattern = regexp.MustCompile(`^[A-Z_][A-Z0-9_]{0,63}$`)

// varRef finds {{NAME}} references; whitespace inside the braces is tolerated.
var varRef = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_]+)\s*\}\}`)

// VarRefs returns the distinct variable names referenced as {{NAME}} in s, in order of first use.
func VarRefs(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range varRef.FindAllStringSubmatch(s, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}

// HasVarRef reports whether s references any variable.
func HasVarRef(s string) bool { return varRef.MatchString(s) }

// ReplaceVarRefs rewrites every {{NAME}} in s with lookup(NAME) when it reports ok.
func ReplaceVarRefs(s string, lookup func(name string) (string, bool)) string {
	return varRef.ReplaceAllStringFunc(s, func(m string) string {
		name := varRef.FindStringSubmatch(m)[1]
		if v, ok := lookup(name); ok {
			return v
		}
		return m
	})
}
