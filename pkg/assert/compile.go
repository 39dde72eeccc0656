// Package assert compiles assertions and evaluates them against a probe's observation. The
// control plane compiles at write time (a bad JSONPath or CSS selector is a 400); the agent
// compiles when it receives a job and evaluates after probing: probe first, judge after.
//
// The comparison semantics are documented on [Compiled.Evaluate].
package assert

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/andybalholm/cascadia"
	"github.com/ohler55/ojg/jp"

	"github.com/vantagehq/vantage/pkg/check"
)

// Compiled is an assertion ready for evaluation. It is immutable and safe for concurrent use.
type Compiled struct {
	check.Assertion
	path     jp.Expr      // JSON_BODY, DNS_JSON_ANSWER
	selector cascadia.Sel // HTML_BODY
	number   *float64     // Expected parsed as a number, when it is one
	// expectedJSON is Expected in canonical JSON form when Expected is a JSON array or object,
	// so that EQUALS can compare structured values regardless of spacing and key order.
	expectedJSON string
}

// FieldError says which of an assertion's fields breaks which rule.
type FieldError struct {
	Field   string // "type", "property", "comparison" or "expected"
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// numericOnly are the types whose value is a number.
var numericOnly = map[string]bool{check.TCPResponseTime: true}

// Compile checks a against the rules of kind and prepares it for evaluation.
func Compile(kind check.Kind, a check.Assertion) (*Compiled, error) {
	allowed := check.AssertionTypes[kind]
	if len(allowed) == 0 {
		return nil, &FieldError{"type", fmt.Sprintf("%s checks take no assertions: their own settings say what passes", kind)}
	}
	if !slices.Contains(allowed, a.Type) {
		return nil, &FieldError{"type", fmt.Sprintf("must be one of %s for %s checks", strings.Join(allowed, ", "), kind)}
	}
	if !slices.Contains(check.Comparisons, a.Comparison) {
		return nil, &FieldError{"comparison", "must be one of " + strings.Join(check.Comparisons, ", ")}
	}
	c := &Compiled{Assertion: a}
	if f, ok := parseNumber(a.Expected); ok {
		c.number = &f
	}
	if t := strings.TrimSpace(a.Expected); strings.HasPrefix(t, "[") || strings.HasPrefix(t, "{") {
		if v, err := parseJSON([]byte(t)); err == nil {
			c.expectedJSON = canonicalJSON(v)
		}
	}
	switch a.Type {
	case check.JSONBody, check.DNSJSONAnswer:
		if strings.TrimSpace(a.Property) == "" {
			return nil, &FieldError{"property", "must be a JSONPath expression such as $.status"}
		}
		p, err := jp.ParseString(a.Property)
		if err != nil {
			return nil, &FieldError{"property", "is not a valid JSONPath expression: " + err.Error()}
		}
		c.path = p
	case check.HTMLBody:
		sel, err := cascadia.Parse(a.Property)
		if err != nil {
			return nil, &FieldError{"property", "is not a valid CSS selector: " + err.Error()}
		}
		c.selector = sel
	case check.ResponseHeaders:
		if strings.TrimSpace(a.Property) == "" || strings.ContainsAny(a.Property, " \t\r\n:") {
			return nil, &FieldError{"property", "must be a header name"}
		}
	case check.DNSResponseCode:
		if a.Property != "status" {
			return nil, &FieldError{"property", `must be "status" for DNS_RESPONSE_CODE`}
		}
	case check.DNSTextAnswer, check.TCPResponseData:
		if a.Property != "" {
			return nil, &FieldError{"property", "must be an empty string for " + a.Type}
		}
	case check.TCPResponseTime:
		if a.Property != "responseTime" {
			return nil, &FieldError{"property", `must be "responseTime" for TCP_RESPONSE_TIME`}
		}
	}
	if numericOnly[a.Type] {
		switch a.Comparison {
		case check.Equals, check.NotEquals, check.GreaterThan, check.LessThan:
		default:
			return nil, &FieldError{"comparison", "must be EQUALS, NOT_EQUALS, GREATER_THAN or LESS_THAN for " + a.Type}
		}
		if c.number == nil {
			return nil, &FieldError{"expected", "must be a number (milliseconds) for " + a.Type}
		}
	}
	if (a.Comparison == check.GreaterThan || a.Comparison == check.LessThan) && c.number == nil {
		return nil, &FieldError{"expected", "must be a number for " + a.Comparison}
	}
	return c, nil
}

// CompileAll compiles every assertion of a check of kind, stopping at the first invalid one;
// the error names its index.
func CompileAll(kind check.Kind, as []check.Assertion) ([]*Compiled, error) {
	out := make([]*Compiled, 0, len(as))
	for i, a := range as {
		c, err := Compile(kind, a)
		if err != nil {
			return nil, fmt.Errorf("assertions[%d].%w", i, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// numberSyntax is a plain decimal number: optional sign, digits with an optional fraction, an
// optional exponent. It deliberately rejects what strconv.ParseFloat also accepts ("NaN", "Inf",
// hexadecimal, underscores), so that words like "nan" or "infinity" compare as text.
var numberSyntax = regexp.MustCompile(`^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)

// parseNumber reads s, ignoring surrounding white space, as a number when it is one.
func parseNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if !numberSyntax.MatchString(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil { // out of range: still a number, ParseFloat returns ±Inf
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	return f, true
}
