package assert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

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
		// Only a JSON Expected can equal a structure; the encoding stops as soon as it is
		// longer than Expected, so large values cost little.
		if c.expectedJSON == "" {
			return false
		}
		s, complete := boundedJSON(v, len(c.expectedJSON))
		return complete && s == c.expectedJSON
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

// textOf renders a scalar as text: strings as they are, numbers, booleans and null in JSON
// spelling. Arrays and objects get their canonical JSON, cut after MaxActual bytes.
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
	s, _ := boundedJSON(v, MaxActual)
	return s
}

// canonicalJSON is v in compact JSON with object keys sorted and no HTML escaping.
func canonicalJSON(v any) string {
	s, _ := boundedJSON(v, math.MaxInt)
	return s
}

// boundedJSON is canonicalJSON(v) written only until it exceeds limit bytes; complete is false
// when it was cut. A value from a 1 MiB body can be huge and deeply nested, and its rendering is
// only ever needed up to a small size, so the cost stays proportional to the limit.
func boundedJSON(v any, limit int) (s string, complete bool) {
	w := jsonWriter{limit: limit}
	w.value(v)
	return string(w.buf), len(w.buf) <= limit
}

type jsonWriter struct {
	buf   []byte
	limit int
}

func (w *jsonWriter) full() bool { return len(w.buf) > w.limit }

func (w *jsonWriter) value(v any) {
	if w.full() {
		return
	}
	switch t := v.(type) {
	case string:
		w.str(t)
	case []any:
		w.buf = append(w.buf, '[')
		for i, e := range t {
			if w.full() {
				return
			}
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.value(e)
		}
		w.buf = append(w.buf, ']')
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		w.buf = append(w.buf, '{')
		for i, k := range keys {
			if w.full() {
				return
			}
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.str(k)
			w.buf = append(w.buf, ':')
			w.value(t[k])
		}
		w.buf = append(w.buf, '}')
	case nil, bool, int64, int, float64, json.Number:
		w.buf = append(w.buf, textOf(t)...)
	default:
		w.str(fmt.Sprint(t))
	}
}

// str writes s as a JSON string, escaping only what JSON requires.
func (w *jsonWriter) str(s string) {
	w.buf = append(w.buf, '"')
	for _, r := range s {
		if w.full() {
			return
		}
		switch {
		case r == '"' || r == '\\':
			w.buf = append(w.buf, '\\', byte(r))
		case r == '\n':
			w.buf = append(w.buf, '\\', 'n')
		case r == '\r':
			w.buf = append(w.buf, '\\', 'r')
		case r == '\t':
			w.buf = append(w.buf, '\\', 't')
		case r < 0x20:
			w.buf = fmt.Appendf(w.buf, "\\u%04x", r)
		default:
			w.buf = utf8.AppendRune(w.buf, r) // invalid UTF-8 comes out as U+FFFD
		}
	}
	w.buf = append(w.buf, '"')
}

// formatFloat spells f as JSON and JavaScript do: plain digits, with an exponent only for very
// large or very small magnitudes.
func formatFloat(f float64) string {
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// parseJSON decodes one JSON document (and nothing after it) strictly, with the standard
// library's well-tested decoder, into the generic form JSONPath works on: numbers become int64
// or float64 (json.Number when neither holds them), so that filter expressions compare them.
func parseJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return numbers(v), nil
}

// numbers replaces json.Number values in v with int64 or float64 where they fit.
func numbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		if f, err := t.Float64(); err == nil {
			return f
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = numbers(e)
		}
	case map[string]any:
		for k, e := range t {
			t[k] = numbers(e)
		}
	}
	return v
}
