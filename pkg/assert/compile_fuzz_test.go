package assert

import (
	"errors"
	"slices"
	"testing"

	"github.com/vantagehq/vantage/pkg/check"
)

// FuzzCompile parses arbitrary assertions (type, property, comparison, expected) for every
// kind: the parser returns a compiled assertion or an error naming a field of the assertion
// (never both, never neither, never a panic); it accepts only the kind's types and the known
// comparisons, keeps the assertion as given, answers the same twice; and what it compiles
// evaluates to one outcome of that assertion, with a message.
func FuzzCompile(f *testing.F) {
	seeds := []check.Assertion{
		{Type: check.JSONBody, Property: "$.a[?(@.b == null)]", Comparison: check.Equals, Expected: "1"},
		{Type: check.JSONBody, Property: "$..*", Comparison: check.Contains, Expected: "{"},
		{Type: check.HTMLBody, Property: "div > p:first-child", Comparison: check.NotEquals, Expected: "x"},
		{Type: check.DNSJSONAnswer, Property: "$.answers[0]", Comparison: check.NotNull},
		{Type: check.TCPResponseData, Comparison: check.GreaterThan, Expected: "1e3"},
		{Type: check.ResponseHeaders, Property: "Content-Type", Comparison: check.Contains, Expected: "json"},
		{Type: check.TextBody, Comparison: "IS_EMPTY"},
		{Type: "DNS_RESPONSE_CODE", Property: "status", Comparison: check.Equals, Expected: "NOERROR"},
		{Type: "TCP_RESPONSE_TIME", Property: "responseTime", Comparison: check.LessThan, Expected: "500"},
		{Type: check.JSONBody, Property: "$[", Comparison: "MATCHES", Expected: "("},
	}
	for i, a := range seeds {
		f.Add(uint8(i), a.Type, a.Property, a.Comparison, a.Expected)
	}
	f.Fuzz(func(t *testing.T, kind uint8, typ, property, comparison, expected string) {
		k := check.Kinds[int(kind)%len(check.Kinds)]
		a := check.Assertion{Type: typ, Property: property, Comparison: comparison, Expected: expected}
		c, err := Compile(k, a)
		_, again := Compile(k, a)
		if (err == nil) != (again == nil) {
			t.Fatalf("Compile(%s, %+v) answered %v, then %v", k, a, err, again)
		}
		if err != nil {
			var fe *FieldError
			if c != nil || !errors.As(err, &fe) || !slices.Contains([]string{"type", "property", "comparison", "expected"}, fe.Field) {
				t.Fatalf("Compile(%s, %+v) = %v, %v: want no assertion and an error naming its field", k, a, c, err)
			}
			return
		}
		if !slices.Contains(check.AssertionTypes[k], typ) || !slices.Contains(check.Comparisons, comparison) {
			t.Fatalf("Compile(%s, %+v) accepted a type or comparison %s checks do not have", k, a, k)
		}
		if c.Assertion != a {
			t.Fatalf("compiled %+v from %+v", c.Assertion, a)
		}
		body := []byte(`{"a":[1,{"b":null}],"x":"` + expected + `"}`)
		out := EvaluateAll([]*Compiled{c}, HTTPObservation{StatusCode: 200, Body: body})
		if len(out) != 1 || out[0].Assertion != a || out[0].Message == "" {
			t.Fatalf("evaluating %+v gave %+v: want one outcome of it, with a message", a, out)
		}
	})
}
