package envconfigtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vantagehq/vantage/pkg/envconfig"
)

// recorder is a testing.TB that keeps the failures instead of failing.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); panic(r) }
func (r *recorder) Fatal(args ...any)                 { r.Fatalf("%s", fmt.Sprint(args...)) }

type config struct {
	Addr string
	Wait time.Duration
}

func TestCheckVars(t *testing.T) {
	t.Parallel()
	var other string
	for _, tt := range []struct {
		name string
		vars func(c *config) []envconfig.Var
		want []string // a part of each failure, in order
	}{
		{"every field bound", func(c *config) []envconfig.Var {
			return []envconfig.Var{
				{Name: "VANTAGE_ADDR", Default: ":1", Into: envconfig.Field(&c.Addr, envconfig.Addr), Help: "h"},
				{Name: "VANTAGE_WAIT", Unset: "(never)", Into: envconfig.Field(&c.Wait, envconfig.Duration("1s")), Help: "h"},
			}
		}, nil},
		{"a field without its variable, a variable bound elsewhere", func(c *config) []envconfig.Var {
			return []envconfig.Var{{Name: "VANTAGE_ADDR", Default: ":1", Into: envconfig.Field(&other, envconfig.Addr), Help: "h"}}
		}, []string{"VANTAGE_ADDR: bound to no field", "config.Addr: no variable sets it", "config.Wait: no variable sets it"}},
		{"malformed variables", func(c *config) []envconfig.Var {
			return []envconfig.Var{
				{Name: "ADDR", Default: ":1", Into: envconfig.Field(&c.Addr, envconfig.Addr), Help: "h"},
				{Name: "VANTAGE_WAIT", Default: "1s", Unset: "(never)", Into: envconfig.Field(&c.Wait, envconfig.Duration("1s")), Help: "h"},
				{Name: "VANTAGE_WAIT", Default: "1s", Into: envconfig.Field(&c.Wait, envconfig.Duration("1s")), Help: "h"},
				{Name: "VANTAGE_HELPLESS", Default: "1s", Into: envconfig.Field(&c.Wait, envconfig.Duration("1s"))},
			}
		}, []string{`"ADDR": not a VANTAGE_ variable`, "VANTAGE_WAIT: wants exactly one of Default, Unset and Required",
			"VANTAGE_WAIT: declared twice", "VANTAGE_HELPLESS: no meaning"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &recorder{TB: t}
			c := new(config)
			CheckVars(r, c, tt.vars(c))
			if len(r.failures) != len(tt.want) {
				t.Fatalf("failures %q, want %d", r.failures, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(r.failures[i], w) {
					t.Errorf("failure %q, want %q", r.failures[i], w)
				}
			}
		})
	}
}

func TestCheckDoc(t *testing.T) {
	t.Parallel()
	c := new(config)
	vars := []envconfig.Var{
		{Name: "VANTAGE_ADDR", Default: ":1", Into: envconfig.Field(&c.Addr, envconfig.Addr), Help: "where it listens"},
		{Name: "VANTAGE_WAIT", Unset: "(never)", Into: envconfig.Field(&c.Wait, envconfig.Duration("1s")), Help: "how long"},
	}
	path := filepath.Join(t.TempDir(), "ops.md")
	stale := "# Ops\n\n<!-- settings of app: generated -->\n| variable | default | meaning |\n|---|---|---|\n" +
		"| `VANTAGE_ADDR` | `:2` | where it listens |\n<!-- end of settings -->\n\nMore.\n"
	if err := os.WriteFile(path, []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	CheckDoc(r, path, "app", vars, false)
	got := strings.Join(r.failures, "\n")
	for _, want := range []string{"lacks the line\n| `VANTAGE_ADDR` | `:1` |", "lacks the line\n| `VANTAGE_WAIT` | (never) |",
		"no variable of app makes\n| `VANTAGE_ADDR` | `:2` |", "rewrite it with -update"} {
		if !strings.Contains(got, want) {
			t.Errorf("failures lack %q:\n%s", want, got)
		}
	}
	r = &recorder{TB: t}
	CheckDoc(r, path, "app", vars, true)
	CheckDoc(r, path, "app", vars, false)
	if len(r.failures) != 0 {
		t.Errorf("after -update: %q", r.failures)
	}
	doc, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(doc), "# Ops\n\n<!-- settings of app: generated -->\n") || !strings.HasSuffix(string(doc), "<!-- end of settings -->\n\nMore.\n") {
		t.Errorf("-update changed the document outside the table:\n%s", doc)
	}
}
