// Package checktest walks the fields of a check.Spec by reflection, for the tests that carry
// every field of every kind through every form of a check (the REST body, the stored check,
// the job an agent runs): a field added to the model is walked without anyone listing it, so a
// form that loses it fails a test that names the field.
package checktest

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/vantagehq/vantage/pkg/check"
)

// Field is one leaf of a Spec: a value users configure.
type Field struct {
	Path     string // Go path in Spec, e.g. "HTTP.VerifySSL"
	Name     string // API name (json tag), e.g. "verify_ssl"
	Job      bool   // carried by jobs: neither it nor its parent is tagged job:"-"
	Required bool   // tagged api:"required": a create body must give it
	value    reflect.Value
}

// Value is the field's value (a pointer stays a pointer).
func (f Field) Value() any { return f.value.Interface() }

// IsZero reports whether the field holds its type's zero value (nil, "", 0, false).
func (f Field) IsZero() bool { return f.value.IsZero() }

func (f Field) String() string { return f.Path + " (" + f.Name + ")" }

// Fields lists the leaves of s in declaration order: every field of Spec, of Alerts, and of
// the kind's specification s has (a nil HTTP, DNS or TCP has none). Kind is not a leaf.
func Fields(s check.Spec) []Field {
	var out []Field
	walk(reflect.ValueOf(s), "", true, &out)
	return out
}

func walk(v reflect.Value, prefix string, job bool, out *[]Field) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		fv := v.Field(i)
		path := prefix + sf.Name
		carried := job && sf.Tag.Get("job") != "-"
		switch {
		case sf.Type == reflect.TypeFor[check.Kind]():
		case sf.Type.Kind() == reflect.Struct:
			walk(fv, path+".", carried, out)
		case sf.Type.Kind() == reflect.Pointer && sf.Type.Elem().Kind() == reflect.Struct:
			if !fv.IsNil() {
				walk(fv.Elem(), path+".", carried, out)
			}
		default:
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			*out = append(*out, Field{Path: path, Name: name, Job: carried,
				Required: sf.Tag.Get("api") == "required", value: fv})
		}
	}
}

// Difference is a field whose value differs between two specs.
type Difference struct {
	Field
	Want, Got any
}

func (d Difference) String() string {
	return fmt.Sprintf("%s = %s, want %s", d.Field, show(d.Got), show(d.Want))
}

// Diff lists the fields of want that got does not hold with the same value, among those keep
// accepts (nil: all). A field of a kind got does not have counts as lost. With loose, an empty
// list or map equals nil (forms that cannot tell them apart, such as protobuf).
func Diff(want, got check.Spec, keep func(Field) bool, loose bool) []Difference {
	gotFields := map[string]Field{}
	for _, f := range Fields(got) {
		gotFields[f.Path] = f
	}
	var out []Difference
	for _, w := range Fields(want) {
		if keep != nil && !keep(w) {
			continue
		}
		g, ok := gotFields[w.Path]
		if ok && equal(w.value, g.value, loose) {
			continue
		}
		d := Difference{Field: w, Want: w.Value()}
		if ok {
			d.Got = g.Value()
		} else {
			d.Got = "(the field is missing)"
		}
		out = append(out, d)
	}
	return out
}

// JobFields keeps the fields jobs carry, for Diff.
func JobFields(f Field) bool { return f.Job }

func equal(a, b reflect.Value, loose bool) bool {
	if loose && (a.Kind() == reflect.Slice || a.Kind() == reflect.Map) && a.Len() == 0 && b.Len() == 0 {
		return true
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// show renders a value for messages, following pointers.
func show(v any) string {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return "nil"
		}
		return fmt.Sprintf("&%#v", rv.Elem().Interface())
	}
	return fmt.Sprintf("%#v", v)
}

// Minimal is the least a valid create body of kind k gives: Defaults(k) with Example(k)'s
// name, url, script and every field tagged api:"required".
func Minimal(k check.Kind) check.Spec {
	s := check.Defaults(k)
	ex := check.Example(k)
	s.Name = ex.Name
	if k.IsHTTP() {
		s.HTTP.URL = ex.HTTP.URL
		s.HTTP.Script = ex.HTTP.Script
	}
	copyRequired(reflect.ValueOf(&s).Elem(), reflect.ValueOf(ex))
	return s
}

func copyRequired(dst, src reflect.Value) {
	for i := range dst.NumField() {
		sf := dst.Type().Field(i)
		d, s := dst.Field(i), src.Field(i)
		switch {
		case sf.Tag.Get("api") == "required":
			d.Set(s)
		case sf.Type.Kind() == reflect.Pointer && sf.Type.Elem().Kind() == reflect.Struct && !d.IsNil() && !s.IsNil():
			copyRequired(d.Elem(), s.Elem())
		}
	}
}
