package assert

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/ohler55/ojg"
	"github.com/ohler55/ojg/oj"

	"github.com/vantagehq/vantage/pkg/check"
)

// predicate returns the test one value is put to, and whether the comparison is the negation
// of "some value passes the test" (see Evaluate).
func (c *Compiled) predicate() (test func(any) bool, negated bool) {
	switch c.Comparison {
	case check.Equals:
		return c.equals, false
	case check.NotEquals:
		return c.equals, true
	case check.GreaterThan:
		return func(v any) bool { n, ok := numberOf(v); return ok && c.number != nil && n > *c.number }, false
	case check.LessThan:
		return func(v any) bool { n, ok := numberOf(v); return ok && c.number != nil && n < *c.number }, false
	case check.Null:
		return isNotNull, true
	case check.NotNull:
		return isNotNull, false
	case check.Empty:
		return isNotEmpty, true
	case check.NotEmpty:
		return isNotEmpty, false
	case check.Contains:
		return c.contains, false
	case check.NotContains:
		return c.contains, true
	case check.True:
		return func(v any) bool { return isBool(v, true) }, false
	case check.False:
		return func(v any) bool { return isBool(v, false) }, false
	}
	return func(any) bool { return false }, false // Compile admits no other comparison
}

// equals compares one value with Expected: numerically when both are numbers, structurally
// when the value is an array or object and Expected is JSON, else as exact text.
func (c *Compiled) equals(v any) bool {
	if c.number != nil {
		if n, ok := numberOf(v); ok {
			return n == *c.number
		}
	}
	switch v.(type) {
	case []any, map[string]any:
		if c.expectedJSON != "" {
			return canonicalJSON(v) == c.expectedJSON
		}
	}
	return textOf(v) == c.Expected
}

// contains tests one value for Expected; see Evaluate.
func (c *Compiled) contains(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok {
				if strings.Contains(s, c.Expected) {
					return true
				}
			} else if c.equals(e) {
				return true
			}
		}
		return false
	case map[string]any:
		_, ok := t[c.Expected]
		return ok
	}
	return strings.Contains(textOf(v), c.Expected)
}

func isNotNull(v any) bool { return v != nil }

func isNotEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case string:
		return t != ""
	case []any:
		return len(t) > 0
	case map[string]any:
		return len(t) > 0
	}
	return true
}

func isBool(v any, want bool) bool {
	switch t := v.(type) {
	case bool:
		return t == want
	case string:
		return strings.EqualFold(strings.TrimSpace(t), strconv.FormatBool(want))
	}
	return false
}

// numberOf reads v as a number: a JSON number, or a string that is a plain decimal number.
func numberOf(v any) (float64, bool) {
	switch t := v.(type) {
	case int64:
		return float64(t), true
	case int:
		return float64(t), true
	case float64:
		return t, true
	case json.Number: // what the JSON parser gives for numbers beyond int64 and float64 precision
		return parseNumber(string(t))
	case string:
		return parseNumber(t)
	}
	return 0, false
}

// textOf renders a value as text: strings as they are, everything else in JSON spelling.
func textOf(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(t)
	case int64:
		return strconv.FormatInt(t, 10)
	case int:
		return strconv.Itoa(t)
	case float64:
		return formatFloat(t)
	case json.Number:
		return string(t)
	}
	return canonicalJSON(v)
}

// canonicalJSON is v in compact JSON with object keys sorted and no HTML escaping.
func canonicalJSON(v any) string {
	o := ojg.DefaultOptions
	o.Sort = true
	o.HTMLUnsafe = true
	return oj.JSON(v, &o)
}

// formatFloat spells f as JSON and JavaScript do: plain digits, with an exponent only for very
// large or very small magnitudes.
func formatFloat(f float64) string {
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
