package assert

import (
	"testing"

	"github.com/vantagehq/vantage/pkg/check"
)

// FuzzCompile parses arbitrary assertions (type, property, comparison, expected) for every
// kind: the parser returns a compiled assertion or an error, never panics, and what it
// compiles evaluates without panicking either.
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
		if err != nil {
			return
		}
		body := []byte(`{"a":[1,{"b":null}],"x":"` + expected + `"}`)
		EvaluateAll([]*Compiled{c}, HTTPObservation{StatusCode: 200, Body: body})
	})
}
