package browserscript

import (
	"slices"
	"testing"
)

func TestEnvRefs(t *testing.T) {
	tests := []struct {
		name, source string
		want         []string
	}{
		{"dot", `await page.fill('#u', process.env.USERNAME);`, []string{"USERNAME"}},
		{"optional chaining", `const k = process.env?.API_KEY ?? '';`, []string{"API_KEY"}},
		{"brackets, every quote", "process.env['A'] + process.env[\"B\"] + process.env[`C`]", []string{"A", "B", "C"}},
		{"spaces", `process.env [ 'A' ] + process.env. B`, []string{"A", "B"}},
		{"destructuring", `const { USER, PASS: password, TOKEN = 'x', ...rest } = process.env;`, []string{"USER", "PASS", "TOKEN"}},
		{"each once, in order", `process.env.B; process.env.A; process.env['B'];`, []string{"B", "A"}},
		{"computed names are not found", "const n = 'X'; process.env[n]; process.env[`${n}`];", nil},
		{"other objects", `myprocess.env.W; myprocess.env['W2']; myprocess.env2.X; env.Y; process.envy.Z; const {V} = process.envy`, nil},
		{"through globalThis", `globalThis.process.env.G`, []string{"G"}},
		{"in a comment", `// uses process.env.OLD_NAME`, []string{"OLD_NAME"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := EnvRefs(tc.source); !slices.Equal(got, tc.want) {
				t.Errorf("EnvRefs = %q, want %q", got, tc.want)
			}
		})
	}
}
