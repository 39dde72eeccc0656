// Package envconfig reads a binary's configuration from environment variables, each declared
// once: a Var binds a variable's name, default and help to one field of the binary's typed
// configuration and to the parser of its value. Loading, the `config` subcommand's table and the
// settings tables of docs/operations.md are all derived from the same list of Vars, so they
// cannot disagree.
package envconfig

import (
	"errors"
	"fmt"
	"strings"
)

// Var declares one environment variable.
type Var struct {
	// Name is the variable, VANTAGE_….
	Name string
	// Default is the value an unset variable takes, read by the same parser as a set value (so a
	// default is as valid as any value an operator may write). "" leaves the field at its zero
	// value, or to Derive.
	Default string
	// Unset says, in Markdown, what an unset variable means when it has no Default value:
	// "(unset)", "(embedded)", "host name". Shown in the default column.
	Unset string
	// Required, when not "", makes an unset variable an error with this text ("is required: …").
	Required string
	// Help is the variable's meaning, in Markdown (code spans and links are shown plain in the
	// terminal).
	Help string
	// Into is the field the value is parsed into.
	Into Binding
	// Derive computes the value of an unset variable that has no fixed default (the host name,
	// the number of CPUs, another setting). It runs after every variable has been read, so it
	// may use the other fields.
	Derive func()
}

// Binding is a field of the configuration and how a variable's value is parsed into it.
type Binding struct {
	target any
	set    func(string) error
}

// Target is the pointer to the bound field; tests use it to prove every field is bound.
func (b Binding) Target() any { return b.target }

// Field binds the field *dst to parse. A value parse refuses leaves the field as it was.
func Field[T any](dst *T, parse func(string) (T, error)) Binding {
	return Binding{target: dst, set: func(s string) error {
		v, err := parse(s)
		if err != nil {
			return err
		}
		*dst = v
		return nil
	}}
}

// Load reads every variable of vars through getenv into the fields they are bound to: a set
// variable is parsed, an unset one (empty or blank) takes its Default, and then each Derive of an
// unset variable runs. It returns every error, each naming its variable as "NAME: …". A value
// never appears in an error unless its parser puts it there, which the parsers of secrets don't.
func Load(getenv func(string) string, vars []Var) []error {
	var errs []error
	unset := make([]bool, len(vars))
	for i, v := range vars {
		s := getenv(v.Name)
		if strings.TrimSpace(s) == "" {
			unset[i] = true
			if v.Required != "" {
				errs = append(errs, Errorf(v.Name, "%s", v.Required))
				continue
			}
			if s = v.Default; s == "" {
				continue
			}
		}
		if err := v.Into.set(s); err != nil {
			errs = append(errs, named(v.Name, err)...)
		}
	}
	for i, v := range vars {
		if unset[i] && v.Derive != nil {
			v.Derive()
		}
	}
	return errs
}

// named prefixes err, or each error joined in it, with the variable's name.
func named(name string, err error) []error {
	var out []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, named(name, e)...)
		}
		return out
	}
	return []error{Errorf(name, "%v", err)}
}

// Errorf is an error about the variable name, in the form Load gives every error: "NAME: …".
// Rules that involve several variables report with it.
func Errorf(name, format string, args ...any) error {
	return fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...))
}

// Join makes one start-up error of errs, one variable a line; nil when there are none.
func Join(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("invalid configuration:")
	for _, e := range errs {
		b.WriteString("\n  ")
		b.WriteString(e.Error())
	}
	return errors.New(b.String())
}

// Lookup returns the Var named name.
func Lookup(vars []Var, name string) (Var, bool) {
	for _, v := range vars {
		if v.Name == name {
			return v, true
		}
	}
	return Var{}, false
}
