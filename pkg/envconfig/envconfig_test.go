package envconfig

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

type sample struct {
	Addr    string
	Wait    time.Duration
	Token   string
	Derived string
	List    []string
}

func sampleVars(c *sample) []Var {
	return []Var{
		{Name: "VANTAGE_ADDR", Default: ":8080", Into: Field(&c.Addr, Addr), Help: "listen address of `GET|POST /x`"},
		{Name: "VANTAGE_WAIT", Default: "15s", Into: Field(&c.Wait, PositiveDuration("15s")), Help: "see [the docs](docs.md)"},
		{Name: "VANTAGE_TOKEN", Required: "is required: a token", Into: Field(&c.Token, Secret(16)), Help: "a **secret**"},
		{Name: "VANTAGE_DERIVED", Unset: "the address", Into: Field(&c.Derived, Text), Help: "derived",
			Derive: func() { c.Derived = "from " + c.Addr }},
		{Name: "VANTAGE_LIST", Unset: "(none)", Into: Field(&c.List, func(s string) ([]string, error) {
			return strings.Split(s, ","), errorsOf(strings.Split(s, ","))
		}), Help: "a list"},
	}
}

// errorsOf joins an error for each item that is not "ok".
func errorsOf(items []string) error {
	var errs []error
	for _, it := range items {
		if it != "ok" {
			errs = append(errs, Errorf("item", "%q is not ok", it))
		}
	}
	return errors.Join(errs...)
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		want    sample
		wantErr []string
	}{
		{
			name: "unset variables take their defaults, parsed; Derive sees the other fields",
			env:  map[string]string{"VANTAGE_TOKEN": "0123456789abcdef"},
			want: sample{Addr: ":8080", Wait: 15 * time.Second, Token: "0123456789abcdef", Derived: "from :8080"},
		},
		{
			name: "set variables are parsed and a set variable is not derived",
			env: map[string]string{"VANTAGE_TOKEN": "0123456789abcdef", "VANTAGE_ADDR": "127.0.0.1:1", "VANTAGE_WAIT": "2m",
				"VANTAGE_DERIVED": "mine", "VANTAGE_LIST": "ok,ok"},
			want: sample{Addr: "127.0.0.1:1", Wait: 2 * time.Minute, Token: "0123456789abcdef", Derived: "mine", List: []string{"ok", "ok"}},
		},
		{
			name: "a blank variable is unset",
			env:  map[string]string{"VANTAGE_TOKEN": "0123456789abcdef", "VANTAGE_ADDR": "  "},
			want: sample{Addr: ":8080", Wait: 15 * time.Second, Token: "0123456789abcdef", Derived: "from :8080"},
		},
		{
			name:    "every error names its variable, a joined error each of its parts",
			env:     map[string]string{"VANTAGE_ADDR": "8080", "VANTAGE_WAIT": "-1s", "VANTAGE_LIST": "ok,bad,worse"},
			wantErr: []string{`VANTAGE_ADDR: must be host:port or :port, got "8080"`, `VANTAGE_WAIT: must be a positive duration such as 15s, got "-1s"`, "VANTAGE_TOKEN: is required: a token", `VANTAGE_LIST: item: "bad" is not ok`, `VANTAGE_LIST: item: "worse" is not ok`},
		},
		{
			name:    "a secret's error does not show it",
			env:     map[string]string{"VANTAGE_TOKEN": "hunter2"},
			wantErr: []string{"VANTAGE_TOKEN: must be at least 16 characters"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var c sample
			errs := Load(env(tt.env), sampleVars(&c))
			err := Join(errs)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if c.Addr != tt.want.Addr || c.Wait != tt.want.Wait || c.Token != tt.want.Token || c.Derived != tt.want.Derived ||
					strings.Join(c.List, ",") != strings.Join(tt.want.List, ",") {
					t.Errorf("got %+v, want %+v", c, tt.want)
				}
				return
			}
			if len(errs) != len(tt.wantErr) {
				t.Errorf("%d errors, want %d:\n%v", len(errs), len(tt.wantErr), err)
			}
			if !strings.HasPrefix(err.Error(), "invalid configuration:\n  ") {
				t.Errorf("error %q does not start with the heading and an indented line", err)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), "\n  "+w) {
					t.Errorf("error lacks the line %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error shows the secret: %v", err)
			}
		})
	}
}

func TestParsersSayWhatTheValueMustBe(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, value, want string
		parse             func(string) error
	}{
		{"bool", "maybe", `must be true or false, got "maybe"`, func(s string) error { _, err := Bool(s); return err }},
		{"level", "loud", `must be debug, info, warn or error, got "loud"`, func(s string) error { _, err := Level(s); return err }},
		{"duration", "-1s", `must be a duration such as 2m, got "-1s"`, func(s string) error { _, err := Duration("2m")(s); return err }},
		{"at least", "9s", `must be a duration of at least 10s such as 5m, got "9s"`,
			func(s string) error { _, err := DurationAtLeast(10*time.Second, "5m")(s); return err }},
		{"from to", "2m", `must be a duration from 1s to 1m0s, got "2m"`,
			func(s string) error { _, err := DurationFrom(time.Second, time.Minute)(s); return err }},
		{"int from", "6", `must be a whole number from 1 to 5, got "6"`, func(s string) error { _, err := IntFrom(1, 5)(s); return err }},
		{"int at least", "x", `must be a whole number of at least 1, got "x"`, func(s string) error { _, err := IntAtLeast(1)(s); return err }},
	} {
		if err := tt.parse(tt.value); err == nil || err.Error() != tt.want {
			t.Errorf("%s(%q) = %v, want %q", tt.name, tt.value, err, tt.want)
		}
	}
	if d, err := DurationFrom(-time.Hour, time.Hour)("-30m"); err != nil || d != -30*time.Minute {
		t.Errorf("DurationFrom(-1h, 1h)(-30m) = %v, %v", d, err)
	}
}

func TestTables(t *testing.T) {
	t.Parallel()
	vars := sampleVars(new(sample))
	md := Markdown(vars)
	for _, want := range []string{
		"| variable | default | meaning |\n|---|---|---|\n",
		"| `VANTAGE_ADDR` | `:8080` | listen address of `GET\\|POST /x` |\n",
		"| `VANTAGE_TOKEN` | (required) | a **secret** |\n",
		"| `VANTAGE_DERIVED` | the address | derived |\n",
		"| `VANTAGE_WAIT` | `15s` | see [the docs](docs.md) |\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	var text bytes.Buffer
	if err := WriteText(&text, vars); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(text.String(), "\n"), "\n")
	if len(lines) != len(vars) {
		t.Fatalf("%d lines, want one per variable:\n%s", len(lines), text.String())
	}
	col := strings.Index(lines[0], ":8080")
	for i, want := range []string{"listen address of GET|POST /x", "see the docs", "a secret", "derived", "a list"} {
		if !strings.HasSuffix(lines[i], want) {
			t.Errorf("line %q does not end with the plain meaning %q", lines[i], want)
		}
		if !strings.HasPrefix(lines[i], vars[i].Name+" ") || lines[i][col-1] != ' ' || lines[i][col] == ' ' {
			t.Errorf("line %q: the default column does not start at %d", lines[i], col)
		}
	}
}

func TestSplice(t *testing.T) {
	t.Parallel()
	doc := "# Ops\n\n<!-- settings of a: generated from x -->\n| old |\n<!-- end of settings -->\n\n<!-- settings of b: y -->\n| b |\n<!-- end of settings -->\n"
	got, err := Splice(doc, "a", "| new |\n| rows |\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "# Ops\n\n<!-- settings of a: generated from x -->\n| new |\n| rows |\n<!-- end of settings -->\n\n<!-- settings of b: y -->\n| b |\n<!-- end of settings -->\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := Splice(doc, "c", ""); err == nil {
		t.Error("a table without its marks: no error")
	}
	if _, err := Splice("<!-- settings of a: x -->\n| rows |\n", "a", ""); err == nil {
		t.Error("a table without its end mark: no error")
	}
}
