package assert

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"

	"github.com/vantagehq/vantage/pkg/check"
)

// Outcome is the verdict of one assertion on one observation.
type Outcome struct {
	Assertion check.Assertion `json:"assertion"`
	Passed    bool            `json:"passed"`
	// Actual is the value that was judged, as text (at most MaxActual bytes): a string as it is,
	// a number, boolean or null in JSON spelling, an array or object (or several JSONPath
	// matches, as an array) in compact JSON with sorted keys, and "" when there was no value.
	Actual string `json:"actual"`
	// Message explains the verdict for people, e.g.
	// `$.status: expected EQUALS "ok", got "degraded"`.
	Message string `json:"message"`
}

// MaxActual caps Outcome.Actual; longer values end in "…".
const MaxActual = 1024

// maxQuoted caps a value quoted inside Outcome.Message.
const maxQuoted = 200

// Evaluate judges obs against the assertion.
//
// # What is judged
//
// Each assertion type extracts from the observation a list of values — none, one or several —
// and the comparison is applied to that list.
//
//	type               values
//	JSON_BODY          the matches of the JSONPath over the body parsed as JSON (none when
//	                   nothing matches; a JSON null match is a value, null). A body that is not
//	                   JSON (or is empty) fails every comparison, negative ones included.
//	TEXT_BODY          one string: the whole body.
//	RESPONSE_HEADERS   one string: the header's values joined with ", " (name matched without
//	                   regard to case); none when the header is absent.
//	HTML_BODY          one string: the text content of the first element matching the CSS
//	                   selector, white space collapsed and trimmed; none when nothing matches.
//	DNS_RESPONSE_CODE  one string: the rcode name (NOERROR, NXDOMAIN, SERVFAIL, ...).
//	DNS_TEXT_ANSWER    one string: the answer records in zone-file form, one per line ("" when
//	                   the answer section is empty).
//	DNS_JSON_ANSWER    the matches of the JSONPath over parsed_response, the JSON array of
//	                   {name, type, ttl, data} answer records.
//	TCP_RESPONSE_TIME  one number: the response time in whole milliseconds.
//	TCP_RESPONSE_DATA  one string: the data received (possibly "").
//
// # Comparisons
//
// A value is a string, a number, a boolean, null, an array or an object. A string "is a number"
// when, trimmed of white space, it is a plain decimal number ("10", "-2.5", "1e3"; not "NaN",
// "0x10" or "1_000"). Expected is always a string and follows the same rule.
//
//	comparison    passes when                                                no value
//	EQUALS        some value equals Expected: numerically when both are      fails
//	              numbers ("10" = "10.0"), as canonical JSON when the
//	              value is an array or object and Expected is JSON,
//	              otherwise as exact, case-sensitive text (true, false
//	              and null in their JSON spelling)
//	NOT_EQUALS    no value equals Expected (the negation of EQUALS)          passes
//	GREATER_THAN  some value is a number greater (less) than Expected;       fails
//	LESS_THAN     both sides must be numbers, so "10" > "9". A value that
//	              is not a number never passes and the message says so;
//	              Compile rejects a non-numeric Expected. There is no
//	              lexicographic ordering.
//	NULL          every value is null (the negation of NOT_NULL)             passes
//	NOT_NULL      some value is not null                                     fails
//	EMPTY         every value is empty: "", [], {} or null                   passes
//	NOT_EMPTY     some value is not empty (the negation of EMPTY)            fails
//	CONTAINS      some value contains Expected: a string (and the text of    fails
//	              a number or boolean) as a case-sensitive substring; an
//	              array when one of its elements contains Expected as a
//	              substring (string elements) or equals it (other
//	              elements, as EQUALS); an object when it has a key equal
//	              to Expected; null contains nothing
//	NOT_CONTAINS  no value contains Expected (the negation of CONTAINS)      passes
//	TRUE          some value is true: the JSON boolean, or a string equal    fails
//	              to "true" ignoring case and surrounding white space
//	FALSE         some value is false, in the same way                       fails
//
// So with several JSONPath matches the positive comparisons (EQUALS, GREATER_THAN, LESS_THAN,
// NOT_NULL, NOT_EMPTY, CONTAINS, TRUE, FALSE) pass when any match satisfies them, and the
// negative ones (NOT_EQUALS, NULL, EMPTY, NOT_CONTAINS) pass when no match contradicts them,
// which makes each negative comparison the exact complement of its positive one whenever the
// observation could be read. Expected is ignored by NULL, NOT_NULL, EMPTY, NOT_EMPTY, TRUE and
// FALSE. An assertion whose type does not belong to the observation's kind fails.
func (c *Compiled) Evaluate(obs Observation) Outcome {
	return c.evaluate(newView(obs))
}

// EvaluateAll judges obs against every assertion, in order, parsing the body once.
func EvaluateAll(cs []*Compiled, obs Observation) []Outcome {
	v := newView(obs)
	out := make([]Outcome, len(cs))
	for i, c := range cs {
		out[i] = c.evaluate(v)
	}
	return out
}

// AllPassed reports whether every outcome passed (true for none).
func AllPassed(outcomes []Outcome) bool {
	for _, o := range outcomes {
		if !o.Passed {
			return false
		}
	}
	return true
}

// view is an observation with its parsed forms, computed once and shared by the assertions
// judging it.
type view struct {
	obs Observation

	jsonDone bool
	jsonDoc  any
	jsonErr  error

	htmlDone bool
	htmlDoc  *html.Node
	htmlErr  error
}

// newView accepts observations by value or by pointer.
func newView(obs Observation) *view {
	switch o := obs.(type) {
	case *HTTPObservation:
		obs = nil
		if o != nil {
			obs = *o
		}
	case *DNSObservation:
		obs = nil
		if o != nil {
			obs = *o
		}
	case *TCPObservation:
		obs = nil
		if o != nil {
			obs = *o
		}
	}
	return &view{obs: obs}
}

func (c *Compiled) evaluate(v *view) Outcome {
	out := Outcome{Assertion: c.Assertion}
	values, err := c.extract(v)
	if err != nil {
		out.Message = c.subject() + ": " + err.Error()
		return out
	}
	test, negated := c.predicate()
	matched := false
	for _, x := range values {
		if test(x) {
			matched = true
			break
		}
	}
	out.Passed = matched != negated
	out.Actual = actualText(values)
	out.Message = fmt.Sprintf("%s: expected %s%s, got %s", c.subject(), c.Comparison, c.operand(), describe(values))
	if !out.Passed && (c.Comparison == check.GreaterThan || c.Comparison == check.LessThan) && len(values) > 0 && !anyNumber(values) {
		out.Message += " (not a number)"
	}
	return out
}

// extract returns the values the assertion judges; see Evaluate.
func (c *Compiled) extract(v *view) (values []any, err error) {
	switch obs := v.obs.(type) {
	case HTTPObservation:
		switch c.Type {
		case check.JSONBody:
			doc, err := v.json(obs.Body, obs.BodyTruncated)
			if err != nil {
				return nil, err
			}
			return c.query(doc)
		case check.TextBody:
			return []any{string(obs.Body)}, nil
		case check.ResponseHeaders:
			if s, ok := headerValue(obs.Header, c.Property); ok {
				return []any{s}, nil
			}
			return nil, nil
		case check.HTMLBody:
			doc, err := v.html(obs.Body)
			if err != nil {
				return nil, err
			}
			if n := cascadia.Query(doc, c.selector); n != nil {
				return []any{textContent(n)}, nil
			}
			return nil, nil
		}
	case DNSObservation:
		switch c.Type {
		case check.DNSResponseCode:
			return []any{obs.Rcode}, nil
		case check.DNSTextAnswer:
			return []any{strings.Join(obs.Answers, "\n")}, nil
		case check.DNSJSONAnswer:
			src := obs.ParsedResponse
			if strings.TrimSpace(src) == "" {
				src = "[]" // no answer section recorded
			}
			doc, err := v.json([]byte(src), false)
			if err != nil {
				return nil, err
			}
			return c.query(doc)
		}
	case TCPObservation:
		switch c.Type {
		case check.TCPResponseTime:
			return []any{obs.ResponseTime.Milliseconds()}, nil
		case check.TCPResponseData:
			return []any{string(obs.Data)}, nil
		}
	case nil:
		return nil, errors.New("nothing was observed")
	}
	return nil, fmt.Errorf("a %s assertion cannot judge %s", c.Type, v.obs.observedKind())
}

// query runs the compiled JSONPath over doc. The JSONPath library is not expected to panic on
// parsed data, but a check must never take the agent down, so a panic becomes a failure.
func (c *Compiled) query(doc any) (values []any, err error) {
	defer func() {
		if r := recover(); r != nil {
			values, err = nil, fmt.Errorf("JSONPath evaluation failed: %v", r)
		}
	}()
	return c.path.Get(doc), nil
}

func (v *view) json(body []byte, truncated bool) (any, error) {
	if !v.jsonDone {
		v.jsonDone = true
		switch {
		case len(bytes.TrimSpace(body)) == 0:
			v.jsonErr = errors.New("body is empty, not JSON")
		default:
			v.jsonDoc, v.jsonErr = parseJSON(body)
			if v.jsonErr != nil {
				msg := "body is not valid JSON: " + v.jsonErr.Error()
				if truncated {
					msg += " (the body was cut at the read limit)"
				}
				v.jsonErr = errors.New(msg)
			}
		}
	}
	return v.jsonDoc, v.jsonErr
}

func (v *view) html(body []byte) (*html.Node, error) {
	if !v.htmlDone {
		v.htmlDone = true
		v.htmlDoc, v.htmlErr = html.Parse(bytes.NewReader(body))
		if v.htmlErr != nil {
			v.htmlErr = fmt.Errorf("body is not parseable HTML: %w", v.htmlErr)
		}
	}
	return v.htmlDoc, v.htmlErr
}

// textContent is the DOM textContent of n with runs of white space collapsed to one space and
// the ends trimmed, which is how a reader sees the text.
func textContent(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteByte(' ') // text nodes of adjacent elements stay separate words
			return
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// subject names what the assertion looks at, for messages.
func (c *Compiled) subject() string {
	switch c.Type {
	case check.JSONBody:
		return c.Property
	case check.TextBody:
		return "body"
	case check.ResponseHeaders:
		return "header " + c.Property
	case check.HTMLBody:
		return "element " + c.Property
	case check.DNSResponseCode:
		return "response code"
	case check.DNSTextAnswer:
		return "answer"
	case check.DNSJSONAnswer:
		return "answer " + c.Property
	case check.TCPResponseTime:
		return "response time (ms)"
	case check.TCPResponseData:
		return "response data"
	}
	return c.Type
}

// operand renders Expected for messages, for the comparisons that use it.
func (c *Compiled) operand() string {
	switch c.Comparison {
	case check.GreaterThan, check.LessThan:
		return " " + strings.TrimSpace(c.Expected)
	case check.Equals, check.NotEquals, check.Contains, check.NotContains:
		return " " + quote(c.Expected)
	}
	return ""
}

// describe renders the judged values for messages.
func describe(values []any) string {
	switch len(values) {
	case 0:
		return "no value"
	case 1:
		return render(values[0])
	}
	s, _ := boundedJSON(values, maxQuoted)
	return fmt.Sprintf("%d values %s", len(values), truncate(s, maxQuoted))
}

func render(v any) string {
	if s, ok := v.(string); ok {
		return quote(s)
	}
	return truncate(textOf(v), maxQuoted)
}

func quote(s string) string { return strconv.Quote(truncate(s, maxQuoted)) }

func actualText(values []any) string {
	switch len(values) {
	case 0:
		return ""
	case 1:
		return truncate(textOf(values[0]), MaxActual)
	}
	s, _ := boundedJSON(values, MaxActual)
	return truncate(s, MaxActual)
}

// truncate cuts s to at most limit bytes on a rune boundary, marking the cut with "…".
func truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit - len("…")
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func anyNumber(values []any) bool {
	for _, v := range values {
		if _, ok := numberOf(v); ok {
			return true
		}
	}
	return false
}
