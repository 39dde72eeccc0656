// Package assert compiles assertions and evaluates them against a probe's observation. The
// control plane compiles at write time (a bad JSONPath or CSS selector is a 400); the agent
// compiles when it receives a job and evaluates after probing.
package assert

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/andybalholm/cascadia"
	"github.com/ohler55/ojg/jp"

	"github.com/vantagehq/vantage/pkg/check"
)

// Compiled is an assertion ready for evaluation.
type Compiled struct {
	check.Assertion
	path     jp.Expr          // JSON_BODY, DNS_JSON_ANSWER
	selector cascadia.Sel     // HTML_BODY
	number   *float64         // Expected parsed as a number, when it is one
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
	if !slices.Contains(allowed, a.Type) {
		return nil, &FieldError{"type", fmt.Sprintf("must be one of %s for %s checks", strings.Join(allowed, ", "), kind)}
	}
	if !slices.Contains(check.Comparisons, a.Comparison) {
		return nil, &FieldError{"comparison", "must be one of " + strings.Join(check.Comparisons, ", ")}
	}
	c := &Compiled{Assertion: a}
	if f, err := strconv.ParseFloat(strings.TrimSpace(a.Expected), 64); err == nil {
		c.number = &f
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
			if c.number == nil {
				return nil, &FieldError{"expected", "must be a number (milliseconds) for " + a.Type}
			}
		default:
			return nil, &FieldError{"comparison", "must be EQUALS, NOT_EQUALS, GREATER_THAN or LESS_THAN for " + a.Type}
		}
	}
	return c, nil
}
