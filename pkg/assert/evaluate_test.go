package assert

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/vantagehq/vantage/pkg/check"
)

const jsonDoc = `{
  "status": "ok", "code": 10, "version": "10", "ratio": 2.5, "neg": -3,
  "nothing": null, "flag": true, "off": false, "sflag": " TRUE ", "sfalse": "False",
  "tags": ["alpha", "beta"], "ids": [1, 2, 3], "mixed": [true, null, {"k": 1}],
  "empty": "", "emptyArr": [], "emptyObj": {},
  "items": [{"id": 1, "state": "up"}, {"id": 2, "state": "down"}],
  "nested": {"a": {"b": "c"}},
  "big": 123456789012345678901234567890,
  "text": "<b>bold</b> & co"
}`

const htmlDoc = `<!doctype html><html><head><title>Status</title></head><body>
<h1 class="title">  Hello
   <b>world</b> </h1>
<p id="empty"></p>
<ul><li>one</li><li>two</li></ul>
<span id="num">42</span>
<div id="flag">true</div>
</body></html>`

func httpObs(body string) HTTPObservation {
	return HTTPObservation{
		StatusCode: 200,
		Header: http.Header{
			"Content-Type":   {"application/json"},
			"Content-Length": {"250"},
			"X-Multi":        {"a", "b"},
			"X-Blank":        {""},
			"x-lower":        {"raw"}, // not canonical: set without Header.Set
		},
		Body:         []byte(body),
		ResponseTime: 120 * time.Millisecond,
	}
}

var dnsObs = DNSObservation{
	Rcode: "NOERROR",
	Answers: []string{
		"example.com.\t300\tIN\tA\t192.0.2.1",
		"example.com.\t300\tIN\tA\t192.0.2.2",
	},
	ParsedResponse: `[{"name":"example.com.","type":"A","ttl":300,"data":"192.0.2.1"},` +
		`{"name":"example.com.","type":"A","ttl":300,"data":"192.0.2.2"}]`,
}

var tcpObs = TCPObservation{Data: []byte("+OK ready\r\n"), ResponseTime: 120*time.Millisecond + 900*time.Microsecond}

type evalCase struct {
	name       string
	typ        string
	property   string
	comparison string
	expected   string
	obs        Observation
	pass       bool
	message    string // exact message, when given
	contains   string // substring of the message, when given
	actual     *string
}

func kindFor(typ string) check.Kind {
	switch typ {
	case check.DNSResponseCode, check.DNSTextAnswer, check.DNSJSONAnswer:
		return check.DNS
	case check.TCPResponseTime, check.TCPResponseData:
		return check.TCP
	}
	return check.Uptime
}

func runEval(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := check.Assertion{Type: tc.typ, Property: tc.property, Comparison: tc.comparison, Expected: tc.expected}
			c, err := Compile(kindFor(tc.typ), a)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			got := c.Evaluate(tc.obs)
			if got.Passed != tc.pass {
				t.Errorf("Passed = %v, want %v (message %q)", got.Passed, tc.pass, got.Message)
			}
			if got.Assertion != a {
				t.Errorf("Assertion = %+v, want %+v", got.Assertion, a)
			}
			if tc.message != "" && got.Message != tc.message {
				t.Errorf("Message = %q, want %q", got.Message, tc.message)
			}
			if tc.contains != "" && !strings.Contains(got.Message, tc.contains) {
				t.Errorf("Message = %q, want it to contain %q", got.Message, tc.contains)
			}
			if tc.actual != nil && got.Actual != *tc.actual {
				t.Errorf("Actual = %q, want %q", got.Actual, *tc.actual)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestEvaluateJSONBody(t *testing.T) {
	t.Parallel()
	j := httpObs(jsonDoc)
	J := func(name, path, cmp, exp string, pass bool) evalCase {
		return evalCase{name: name, typ: check.JSONBody, property: path, comparison: cmp, expected: exp, obs: j, pass: pass}
	}
	cases := []evalCase{
		{name: "equals string", typ: check.JSONBody, property: "$.status", comparison: check.Equals, expected: "ok", obs: j, pass: true,
			message: `$.status: expected EQUALS "ok", got "ok"`, actual: ptr("ok")},
		{name: "equals string mismatch", typ: check.JSONBody, property: "$.status", comparison: check.Equals, expected: "degraded", obs: j,
			message: `$.status: expected EQUALS "degraded", got "ok"`},
		J("equals is case-sensitive", "$.status", check.Equals, "OK", false),
		J("equals number", "$.code", check.Equals, "10", true),
		J("equals number 10.0", "$.code", check.Equals, "10.0", true),
		J("equals number with spaces", "$.code", check.Equals, " 10 ", true),
		J("equals number mismatch", "$.code", check.Equals, "9", false),
		J("equals numeric string", "$.version", check.Equals, "10.0", true),
		J("equals float", "$.ratio", check.Equals, "2.5", true),
		J("equals boolean", "$.flag", check.Equals, "true", true),
		J("equals null spelling", "$.nothing", check.Equals, "null", true),
		J("equals array as JSON", "$.tags", check.Equals, `[ "alpha", "beta" ]`, true),
		J("equals array order matters", "$.tags", check.Equals, `["beta","alpha"]`, false),
		J("equals object ignores key order", "$.items[0]", check.Equals, `{"state":"up","id":1}`, true),
		J("equals nested object", "$.nested", check.Equals, `{"a": {"b": "c"}}`, true),
		J("equals big number", "$.big", check.Equals, "123456789012345678901234567890", true),
		J("equals html characters unescaped", "$.text", check.Equals, "<b>bold</b> & co", true),
		{name: "equals missing path", typ: check.JSONBody, property: "$.missing", comparison: check.Equals, expected: "ok", obs: j,
			message: `$.missing: expected EQUALS "ok", got no value`, actual: ptr("")},
		J("equals any of several matches", "$.items[*].state", check.Equals, "down", true),
		J("equals via filter", "$.items[?(@.id == 2)].state", check.Equals, "down", true),
		J("equals deep scan", "$..b", check.Equals, "c", true),

		J("not equals", "$.status", check.NotEquals, "degraded", true),
		J("not equals same", "$.status", check.NotEquals, "ok", false),
		J("not equals numeric", "$.code", check.NotEquals, "10.00", false),
		J("not equals missing passes", "$.missing", check.NotEquals, "ok", true),
		J("not equals needs every match", "$.items[*].state", check.NotEquals, "down", false),
		J("not equals no match among several", "$.items[*].state", check.NotEquals, "sideways", true),

		J("greater numeric not lexicographic", "$.code", check.GreaterThan, "9", true),
		J("greater numeric string", "$.version", check.GreaterThan, "9", true),
		J("greater equal is not greater", "$.code", check.GreaterThan, "10", false),
		J("greater float", "$.ratio", check.GreaterThan, "2.4", true),
		J("greater exponent", "$.big", check.GreaterThan, "1e29", true),
		J("less negative", "$.neg", check.LessThan, "0", true),
		J("less numeric", "$.code", check.LessThan, "9", false),
		J("less numeric wider", "$.code", check.LessThan, "100", true),
		J("greater any match", "$.items[*].id", check.GreaterThan, "1", true),
		J("less no match below", "$.items[*].id", check.LessThan, "1", false),
		J("greater missing", "$.missing", check.GreaterThan, "1", false),
		{name: "greater non-number", typ: check.JSONBody, property: "$.status", comparison: check.GreaterThan, expected: "1", obs: j,
			message: `$.status: expected GREATER_THAN 1, got "ok" (not a number)`},
		J("less boolean is not a number", "$.flag", check.LessThan, "2", false),

		J("null on JSON null", "$.nothing", check.Null, "", true),
		J("null on missing", "$.missing", check.Null, "", true),
		J("null on value", "$.status", check.Null, "", false),
		J("null on empty string", "$.empty", check.Null, "", false),
		J("not null on value", "$.status", check.NotNull, "", true),
		J("not null on JSON null", "$.nothing", check.NotNull, "", false),
		{name: "not null on missing", typ: check.JSONBody, property: "$.missing", comparison: check.NotNull, obs: j,
			message: `$.missing: expected NOT_NULL, got no value`},
		J("not null on false", "$.off", check.NotNull, "", true),

		J("empty string", "$.empty", check.Empty, "", true),
		J("empty array", "$.emptyArr", check.Empty, "", true),
		J("empty object", "$.emptyObj", check.Empty, "", true),
		J("empty null", "$.nothing", check.Empty, "", true),
		J("empty missing", "$.missing", check.Empty, "", true),
		J("empty on text", "$.status", check.Empty, "", false),
		J("empty on number", "$.code", check.Empty, "", false),
		J("empty on false", "$.off", check.Empty, "", false),
		J("not empty array", "$.tags", check.NotEmpty, "", true),
		J("not empty on empty array", "$.emptyArr", check.NotEmpty, "", false),
		J("not empty on missing", "$.missing", check.NotEmpty, "", false),
		J("not empty number zero-free", "$.code", check.NotEmpty, "", true),

		J("contains substring", "$.status", check.Contains, "o", true),
		J("contains case-sensitive", "$.status", check.Contains, "O", false),
		J("contains number text", "$.code", check.Contains, "1", true),
		J("contains array element substring", "$.tags", check.Contains, "alp", true),
		J("contains array element", "$.tags", check.Contains, "beta", true),
		J("contains array absent", "$.tags", check.Contains, "gamma", false),
		J("contains numeric element", "$.ids", check.Contains, "2.0", true),
		J("contains numeric element absent", "$.ids", check.Contains, "4", false),
		J("contains numeric elements not substrings", "$.ids", check.Contains, "", false),
		J("contains boolean element", "$.mixed", check.Contains, "true", true),
		J("contains object element as JSON", "$.mixed", check.Contains, `{"k":1}`, true),
		J("contains object key", "$.nested", check.Contains, "a", true),
		J("contains object key absent", "$.nested", check.Contains, "b", false),
		J("contains null", "$.nothing", check.Contains, "null", false),
		J("contains missing", "$.missing", check.Contains, "x", false),
		J("contains across matches", "$.items[*].state", check.Contains, "dow", true),
		J("not contains", "$.tags", check.NotContains, "gamma", true),
		J("not contains present", "$.tags", check.NotContains, "alpha", false),
		J("not contains missing", "$.missing", check.NotContains, "x", true),
		J("not contains across matches", "$.items[*].state", check.NotContains, "down", false),

		J("true boolean", "$.flag", check.True, "", true),
		J("true string any case", "$.sflag", check.True, "", true),
		J("true on false", "$.off", check.True, "", false),
		J("true on text", "$.status", check.True, "", false),
		J("true on number", "$.code", check.True, "", false),
		J("true on missing", "$.missing", check.True, "", false),
		J("false boolean", "$.off", check.False, "", true),
		J("false string", "$.sfalse", check.False, "", true),
		J("false on true", "$.flag", check.False, "", false),
		J("false on null", "$.nothing", check.False, "", false),

		{name: "several matches actual", typ: check.JSONBody, property: "$.items[*].state", comparison: check.Equals, expected: "gone", obs: j,
			message: `$.items[*].state: expected EQUALS "gone", got 2 values ["up","down"]`, actual: ptr(`["up","down"]`)},
		{name: "object actual is canonical", typ: check.JSONBody, property: "$.items[0]", comparison: check.Null, obs: j,
			actual: ptr(`{"id":1,"state":"up"}`)},

		J("root scalar string", "$", check.Equals, "just text", false),
		{name: "root string document", typ: check.JSONBody, property: "$", comparison: check.Equals, expected: "just text",
			obs: httpObs(`"just text"`), pass: true},
		{name: "root null document", typ: check.JSONBody, property: "$", comparison: check.Null, obs: httpObs(`null`), pass: true},
		{name: "root array document", typ: check.JSONBody, property: "$[1]", comparison: check.Equals, expected: "2",
			obs: httpObs(`[1, 2, 3]`), pass: true},
		{name: "path into scalar", typ: check.JSONBody, property: "$.a.b", comparison: check.Null, obs: httpObs(`{"a": 5}`), pass: true},
	}
	runEval(t, cases)
}

func TestEvaluateJSONBodyInvalid(t *testing.T) {
	t.Parallel()
	var cases []evalCase
	bodies := map[string]string{
		"truncated": `{"status": "ok"`,
		"html":      `<html>oops</html>`,
		"trailing":  `{"a":1} x`,
		"empty":     ``,
		"blank":     " \n ",
	}
	for name, body := range bodies {
		want := "body is not valid JSON"
		if strings.TrimSpace(body) == "" {
			want = "body is empty, not JSON"
		}
		for _, cmp := range check.Comparisons {
			cases = append(cases, evalCase{
				name: name + " " + cmp, typ: check.JSONBody, property: "$.status", comparison: cmp, expected: "1",
				obs: httpObs(body), pass: false, contains: want,
			})
		}
	}
	// The message names the read limit when the body was cut.
	cut := httpObs(`{"status": "o`)
	cut.BodyTruncated = true
	cases = append(cases, evalCase{name: "cut at limit", typ: check.JSONBody, property: "$.status", comparison: check.NotNull,
		obs: cut, contains: "cut at the read limit"})
	runEval(t, cases)
}

func TestEvaluateTextBody(t *testing.T) {
	t.Parallel()
	T := func(name, body, cmp, exp string, pass bool) evalCase {
		return evalCase{name: name, typ: check.TextBody, comparison: cmp, expected: exp, obs: httpObs(body), pass: pass}
	}
	runEval(t, []evalCase{
		T("contains", "hello world", check.Contains, "lo wo", true),
		T("contains absent", "hello world", check.Contains, "bye", false),
		{name: "contains message", typ: check.TextBody, comparison: check.Contains, expected: "bye", obs: httpObs("hello"),
			message: `body: expected CONTAINS "bye", got "hello"`},
		T("not contains", "hello world", check.NotContains, "bye", true),
		T("not contains present", "hello world", check.NotContains, "hello", false),
		T("equals whole body", "hello", check.Equals, "hello", true),
		T("equals not trimmed", "hello\n", check.Equals, "hello", false),
		T("equals numeric body", "10\n", check.Equals, "10", true),
		T("greater numeric body", "10", check.GreaterThan, "9", true),
		T("greater text body", "ten", check.GreaterThan, "9", false),
		T("empty body", "", check.Empty, "", true),
		T("empty on text", "x", check.Empty, "", false),
		T("not empty on empty body", "", check.NotEmpty, "", false),
		T("not empty", " ", check.NotEmpty, "", true),
		T("null never on a body", "", check.Null, "", false),
		T("not null always on a body", "", check.NotNull, "", true),
		T("true body", "True\n", check.True, "", true),
		T("false body", "false", check.False, "", true),
		T("true on other text", "yes", check.True, "", false),
	})
}

func TestEvaluateResponseHeaders(t *testing.T) {
	t.Parallel()
	o := httpObs("")
	H := func(name, header, cmp, exp string, pass bool) evalCase {
		return evalCase{name: name, typ: check.ResponseHeaders, property: header, comparison: cmp, expected: exp, obs: o, pass: pass}
	}
	runEval(t, []evalCase{
		H("equals any case name", "content-type", check.Equals, "application/json", true),
		{name: "equals mismatch message", typ: check.ResponseHeaders, property: "Content-Type", comparison: check.Equals, expected: "text/html", obs: o,
			message: `header Content-Type: expected EQUALS "text/html", got "application/json"`},
		H("contains", "CONTENT-TYPE", check.Contains, "json", true),
		H("multiple values joined", "x-multi", check.Equals, "a, b", true),
		H("multiple values contains", "X-Multi", check.Contains, "b", true),
		H("non-canonical key", "X-Lower", check.Equals, "raw", true),
		H("numeric header", "Content-Length", check.GreaterThan, "100", true),
		H("numeric header less", "Content-Length", check.LessThan, "100", false),
		H("absent null", "X-Absent", check.Null, "", true),
		H("absent not null", "X-Absent", check.NotNull, "", false),
		H("absent empty", "X-Absent", check.Empty, "", true),
		H("absent equals", "X-Absent", check.Equals, "", false),
		H("absent not equals", "X-Absent", check.NotEquals, "x", true),
		H("absent not contains", "X-Absent", check.NotContains, "x", true),
		H("blank present not null", "X-Blank", check.NotNull, "", true),
		H("blank present empty", "X-Blank", check.Empty, "", true),
		H("blank equals empty string", "X-Blank", check.Equals, "", true),
	})
}

func TestEvaluateHTMLBody(t *testing.T) {
	t.Parallel()
	o := httpObs(htmlDoc)
	H := func(name, sel, cmp, exp string, pass bool) evalCase {
		return evalCase{name: name, typ: check.HTMLBody, property: sel, comparison: cmp, expected: exp, obs: o, pass: pass}
	}
	runEval(t, []evalCase{
		{name: "text collapsed", typ: check.HTMLBody, property: "h1.title", comparison: check.Equals, expected: "Hello world", obs: o, pass: true,
			actual: ptr("Hello world")},
		H("title", "title", check.Equals, "Status", true),
		H("first match only", "li", check.Equals, "one", true),
		H("second match ignored", "li", check.Equals, "two", false),
		H("nth-child", "li:nth-child(2)", check.Equals, "two", true),
		H("contains", "h1", check.Contains, "world", true),
		H("numeric text", "#num", check.GreaterThan, "41", true),
		H("numeric text not lexicographic", "#num", check.LessThan, "100", true),
		H("boolean text", "#flag", check.True, "", true),
		H("no match null", "#missing", check.Null, "", true),
		{name: "no match not null", typ: check.HTMLBody, property: "#missing", comparison: check.NotNull, obs: o,
			message: `element #missing: expected NOT_NULL, got no value`},
		H("no match equals", "#missing", check.Equals, "x", false),
		H("no match empty", "#missing", check.Empty, "", true),
		H("empty element not null", "#empty", check.NotNull, "", true),
		H("empty element empty", "#empty", check.Empty, "", true),
		H("whole body text", "body", check.Contains, "one two 42", true),
		{name: "not html still parses", typ: check.HTMLBody, property: "body", comparison: check.Equals, expected: "plain text",
			obs: httpObs("plain text"), pass: true},
		{name: "empty body has no element", typ: check.HTMLBody, property: "h1", comparison: check.Null, obs: httpObs(""), pass: true},
	})
}

func TestEvaluateDNS(t *testing.T) {
	t.Parallel()
	nx := DNSObservation{Rcode: "NXDOMAIN", ParsedResponse: "[]"}
	D := func(name, typ, prop, cmp, exp string, obs Observation, pass bool) evalCase {
		return evalCase{name: name, typ: typ, property: prop, comparison: cmp, expected: exp, obs: obs, pass: pass}
	}
	runEval(t, []evalCase{
		D("rcode equals", check.DNSResponseCode, "status", check.Equals, "NOERROR", dnsObs, true),
		{name: "rcode mismatch message", typ: check.DNSResponseCode, property: "status", comparison: check.Equals, expected: "NXDOMAIN", obs: dnsObs,
			message: `response code: expected EQUALS "NXDOMAIN", got "NOERROR"`},
		D("rcode nxdomain", check.DNSResponseCode, "status", check.Equals, "NXDOMAIN", nx, true),
		D("rcode not equals", check.DNSResponseCode, "status", check.NotEquals, "SERVFAIL", dnsObs, true),
		D("rcode contains", check.DNSResponseCode, "status", check.Contains, "ERR", dnsObs, true),
		D("text contains", check.DNSTextAnswer, "", check.Contains, "192.0.2.2", dnsObs, true),
		{name: "text lines joined", typ: check.DNSTextAnswer, comparison: check.NotEmpty, obs: dnsObs, pass: true,
			actual: ptr("example.com.\t300\tIN\tA\t192.0.2.1\nexample.com.\t300\tIN\tA\t192.0.2.2")},
		D("text not contains", check.DNSTextAnswer, "", check.NotContains, "198.51.100.1", dnsObs, true),
		D("text empty answer", check.DNSTextAnswer, "", check.Empty, "", nx, true),
		D("text not empty on empty answer", check.DNSTextAnswer, "", check.NotEmpty, "", nx, false),
		D("json first data", check.DNSJSONAnswer, "$[0].data", check.Equals, "192.0.2.1", dnsObs, true),
		D("json any data", check.DNSJSONAnswer, "$[*].data", check.Equals, "192.0.2.2", dnsObs, true),
		D("json none data", check.DNSJSONAnswer, "$[*].data", check.NotEquals, "192.0.2.2", dnsObs, false),
		D("json ttl numeric", check.DNSJSONAnswer, "$[0].ttl", check.GreaterThan, "100", dnsObs, true),
		D("json type", check.DNSJSONAnswer, "$[1].type", check.Equals, "A", dnsObs, true),
		D("json out of range null", check.DNSJSONAnswer, "$[5].data", check.Null, "", dnsObs, true),
		D("json whole answer contains record", check.DNSJSONAnswer, "$", check.Contains,
			`{"data":"192.0.2.1","name":"example.com.","ttl":300,"type":"A"}`, dnsObs, true),
		D("json empty answer", check.DNSJSONAnswer, "$", check.Empty, "", nx, true),
		D("json unrecorded answer", check.DNSJSONAnswer, "$", check.Empty, "", DNSObservation{Rcode: "SERVFAIL"}, true),
		{name: "json invalid answer", typ: check.DNSJSONAnswer, property: "$[0]", comparison: check.Null,
			obs: DNSObservation{ParsedResponse: "[{"}, contains: "not valid JSON"},
	})
}

func TestEvaluateTCP(t *testing.T) {
	t.Parallel()
	runEval(t, []evalCase{
		{name: "time less", typ: check.TCPResponseTime, property: "responseTime", comparison: check.LessThan, expected: "500", obs: tcpObs, pass: true,
			actual: ptr("120")},
		{name: "time greater message", typ: check.TCPResponseTime, property: "responseTime", comparison: check.GreaterThan, expected: "500", obs: tcpObs,
			message: `response time (ms): expected GREATER_THAN 500, got 120`},
		{name: "time whole milliseconds", typ: check.TCPResponseTime, property: "responseTime", comparison: check.Equals, expected: "120", obs: tcpObs, pass: true},
		{name: "time not equals", typ: check.TCPResponseTime, property: "responseTime", comparison: check.NotEquals, expected: "121", obs: tcpObs, pass: true},
		{name: "data contains", typ: check.TCPResponseData, comparison: check.Contains, expected: "+OK", obs: tcpObs, pass: true},
		{name: "data equals exact", typ: check.TCPResponseData, comparison: check.Equals, expected: "+OK ready", obs: tcpObs},
		{name: "data not contains", typ: check.TCPResponseData, comparison: check.NotContains, expected: "-ERR", obs: tcpObs, pass: true},
		{name: "no data empty", typ: check.TCPResponseData, comparison: check.Empty, obs: TCPObservation{}, pass: true},
		{name: "no data not empty", typ: check.TCPResponseData, comparison: check.NotEmpty, obs: TCPObservation{},
			message: `response data: expected NOT_EMPTY, got ""`},
	})
}

func TestEvaluateWrongObservation(t *testing.T) {
	t.Parallel()
	runEval(t, []evalCase{
		{name: "json body on dns", typ: check.JSONBody, property: "$.a", comparison: check.Null, obs: dnsObs,
			message: "$.a: a JSON_BODY assertion cannot judge a DNS response"},
		{name: "dns code on http", typ: check.DNSResponseCode, property: "status", comparison: check.NotEquals, expected: "x", obs: httpObs(""),
			contains: "cannot judge an HTTP response"},
		{name: "tcp data on dns", typ: check.TCPResponseData, comparison: check.NotContains, expected: "x", obs: dnsObs,
			contains: "cannot judge a DNS response"},
		{name: "nothing observed", typ: check.TextBody, comparison: check.Empty, obs: nil, contains: "nothing was observed"},
		{name: "nil pointer", typ: check.TextBody, comparison: check.Empty, obs: (*HTTPObservation)(nil), contains: "nothing was observed"},
		{name: "pointer observation", typ: check.TextBody, comparison: check.Contains, expected: "hi", obs: &HTTPObservation{Body: []byte("hi")}, pass: true},
	})
}

func TestActualTruncated(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("é", 3000) // 2 bytes each, so the cut must respect rune boundaries
	c, err := Compile(check.Uptime, check.Assertion{Type: check.TextBody, Comparison: check.Equals, Expected: "x"})
	if err != nil {
		t.Fatal(err)
	}
	o := c.Evaluate(httpObs(body))
	if len(o.Actual) > MaxActual || !strings.HasSuffix(o.Actual, "…") {
		t.Errorf("Actual has %d bytes, suffix %q", len(o.Actual), o.Actual[len(o.Actual)-5:])
	}
	if !strings.HasPrefix(o.Actual, "éé") || strings.ContainsRune(o.Actual, '\uFFFD') {
		t.Errorf("Actual cut inside a rune")
	}
	if len(o.Message) > 400 {
		t.Errorf("Message has %d bytes, want a short one", len(o.Message))
	}
}

func TestEvaluateAll(t *testing.T) {
	t.Parallel()
	cs, err := CompileAll(check.Uptime, []check.Assertion{
		{Type: check.JSONBody, Property: "$.status", Comparison: check.Equals, Expected: "ok"},
		{Type: check.JSONBody, Property: "$.code", Comparison: check.LessThan, Expected: "5"},
		{Type: check.HTMLBody, Property: "p", Comparison: check.Null},
		{Type: check.ResponseHeaders, Property: "content-type", Comparison: check.Contains, Expected: "json"},
	})
	if err != nil {
		t.Fatal(err)
	}
	out := EvaluateAll(cs, httpObs(jsonDoc))
	got := []bool{out[0].Passed, out[1].Passed, out[2].Passed, out[3].Passed}
	want := []bool{true, false, true, true}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("outcome %d passed = %v, want %v (%s)", i, got[i], want[i], out[i].Message)
		}
	}
	if AllPassed(out) || !AllPassed(out[:1]) || !AllPassed(nil) {
		t.Error("AllPassed is wrong")
	}
}

func TestCompileRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		kind  check.Kind
		a     check.Assertion
		field string // "" = valid
	}{
		{"valid json", check.Uptime, check.Assertion{Type: check.JSONBody, Property: "$.a", Comparison: check.Equals, Expected: "x"}, ""},
		{"type of other kind", check.Uptime, check.Assertion{Type: check.DNSResponseCode, Property: "status", Comparison: check.Equals}, "type"},
		{"unknown comparison", check.DNS, check.Assertion{Type: check.DNSResponseCode, Property: "status", Comparison: "LIKE"}, "comparison"},
		{"bad jsonpath", check.Uptime, check.Assertion{Type: check.JSONBody, Property: "$[", Comparison: check.NotNull}, "property"},
		{"empty jsonpath", check.DNS, check.Assertion{Type: check.DNSJSONAnswer, Property: " ", Comparison: check.NotNull}, "property"},
		{"bad selector", check.Browser, check.Assertion{Type: check.HTMLBody, Property: "h1[", Comparison: check.NotNull}, "property"},
		{"bad header name", check.Uptime, check.Assertion{Type: check.ResponseHeaders, Property: "X: y", Comparison: check.NotNull}, "property"},
		{"greater needs number", check.Uptime, check.Assertion{Type: check.JSONBody, Property: "$.a", Comparison: check.GreaterThan, Expected: "abc"}, "expected"},
		{"less needs number", check.DNS, check.Assertion{Type: check.DNSTextAnswer, Comparison: check.LessThan, Expected: "NaN"}, "expected"},
		{"less number", check.DNS, check.Assertion{Type: check.DNSJSONAnswer, Property: "$[0].ttl", Comparison: check.LessThan, Expected: " 60 "}, ""},
		{"hex is not a number", check.Uptime, check.Assertion{Type: check.TextBody, Comparison: check.GreaterThan, Expected: "0x10"}, "expected"},
		{"tcp time needs number", check.TCP, check.Assertion{Type: check.TCPResponseTime, Property: "responseTime", Comparison: check.Equals, Expected: "fast"}, "expected"},
		{"tcp time comparison", check.TCP, check.Assertion{Type: check.TCPResponseTime, Property: "responseTime", Comparison: check.Contains, Expected: "1"}, "comparison"},
		{"tcp data property", check.TCP, check.Assertion{Type: check.TCPResponseData, Property: "x", Comparison: check.Contains, Expected: "1"}, "property"},
		{"dns code property", check.DNS, check.Assertion{Type: check.DNSResponseCode, Property: "rcode", Comparison: check.Equals, Expected: "NOERROR"}, "property"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Compile(tc.kind, tc.a)
			var fe *FieldError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("Compile: %v", err)
			case tc.field != "" && !errors.As(err, &fe):
				t.Fatalf("Compile error = %v, want a FieldError on %s", err, tc.field)
			case tc.field != "" && fe.Field != tc.field:
				t.Fatalf("FieldError on %s (%s), want %s", fe.Field, fe.Message, tc.field)
			}
		})
	}
	_, err := CompileAll(check.Uptime, []check.Assertion{
		{Type: check.TextBody, Comparison: check.NotEmpty},
		{Type: check.JSONBody, Property: "$[", Comparison: check.NotNull},
	})
	if err == nil || !strings.HasPrefix(err.Error(), "assertions[1].property:") {
		t.Errorf("CompileAll error = %v, want one naming assertions[1].property", err)
	}
}

func TestParseNumber(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"10": true, "-2.5": true, "+3": true, ".5": true, "5.": true, "1e3": true, "1E-3": true, " 7\n": true, "1e400": true,
		"": false, "NaN": false, "inf": false, "Infinity": false, "0x10": false, "1_000": false, "1,5": false, "1.2.3": false, "e3": false, "-": false,
	} {
		if _, got := parseNumber(s); got != want {
			t.Errorf("parseNumber(%q) = %v, want %v", s, got, want)
		}
	}
}

// FuzzEvaluate feeds arbitrary bodies to every body assertion type and comparison: whatever
// the target sends, evaluation gives one outcome per assertion, in order, each with a
// message, never a panic; and on the body's text the verdicts are right: the complementary
// comparisons (EQUALS and NOT_EQUALS, CONTAINS and NOT_CONTAINS, EMPTY and NOT_EMPTY) disagree,
// and CONTAINS "1" passes exactly when the body holds a "1".
func FuzzEvaluate(f *testing.F) {
	for _, seed := range []string{jsonDoc, htmlDoc, "", "null", "[", `{"a":[1,{"b":null}]}`, "\xff\xfe", `{"a":1e999}`, strings.Repeat("[", 10000)} {
		f.Add([]byte(seed))
	}
	var compiled []*Compiled
	for _, a := range []check.Assertion{
		{Type: check.JSONBody, Property: "$..*"},
		{Type: check.JSONBody, Property: "$.a[?(@.b == null)]"},
		{Type: check.TextBody},
		{Type: check.HTMLBody, Property: "div > p:first-child"},
		{Type: check.ResponseHeaders, Property: "X-Any"},
	} {
		for _, cmp := range check.Comparisons {
			a.Comparison, a.Expected = cmp, "1"
			c, err := Compile(check.Uptime, a)
			if err != nil {
				f.Fatal(err)
			}
			compiled = append(compiled, c)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		out := EvaluateAll(compiled, HTTPObservation{StatusCode: 200, Header: http.Header{"X-Any": {string(body)}}, Body: body})
		if len(out) != len(compiled) {
			t.Fatalf("%d outcomes for %d assertions", len(out), len(compiled))
		}
		text := map[string]bool{} // TEXT_BODY's verdicts by comparison
		for i, o := range out {
			if o.Message == "" {
				t.Fatalf("no message for %+v", o.Assertion)
			}
			if o.Assertion != compiled[i].Assertion {
				t.Fatalf("outcome %d is of %+v, want %+v", i, o.Assertion, compiled[i].Assertion)
			}
			if o.Assertion.Type == check.TextBody {
				text[o.Assertion.Comparison] = o.Passed
			}
		}
		for _, pair := range [][2]string{{check.Equals, check.NotEquals}, {check.Contains, check.NotContains}, {check.Empty, check.NotEmpty}} {
			if text[pair[0]] == text[pair[1]] {
				t.Fatalf("TEXT_BODY %s and %s both %v on %q", pair[0], pair[1], text[pair[0]], body)
			}
		}
		if utf8.Valid(body) && text[check.Contains] != bytes.Contains(body, []byte("1")) {
			t.Fatalf("TEXT_BODY CONTAINS \"1\" = %v on %q", text[check.Contains], body)
		}
	})
}

// TestEvaluateLargeBodies guards against work that grows faster than the body: a 1 MiB body
// from a hostile or broken target must be judged in about the time it takes to parse it.
func TestEvaluateLargeBodies(t *testing.T) {
	t.Parallel()
	bodies := map[string]string{
		"deep arrays":  strings.Repeat("[", 9000) + strings.Repeat("]", 9000),
		"deep objects": strings.Repeat(`{"a":`, 9000) + "1" + strings.Repeat("}", 9000),
		"wide array":   "[" + strings.Repeat(`"x",`, 200000) + `"x"]`,
		"deep html":    strings.Repeat("<div><p>", 100000),
		"brackets":     strings.Repeat("[", 1<<20),
	}
	as := []check.Assertion{
		{Type: check.JSONBody, Property: "$..*", Comparison: check.Equals, Expected: `{"a":1}`},
		{Type: check.JSONBody, Property: "$..a", Comparison: check.Contains, Expected: "1"},
		{Type: check.JSONBody, Property: "$", Comparison: check.NotEquals, Expected: "1"},
		{Type: check.HTMLBody, Property: "div > p:first-child", Comparison: check.Equals, Expected: "1"},
		{Type: check.TextBody, Comparison: check.NotContains, Expected: "y"},
	}
	cs, err := CompileAll(check.Uptime, as)
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			out := EvaluateAll(cs, HTTPObservation{Body: []byte(body)})
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %s", took)
			}
			for _, o := range out {
				if len(o.Message) > 600 || len(o.Actual) > MaxActual {
					t.Errorf("%s: message of %d bytes, actual of %d", o.Assertion.Property, len(o.Message), len(o.Actual))
				}
			}
		})
	}
}

func TestCanonicalJSON(t *testing.T) {
	t.Parallel()
	v, err := parseJSON([]byte(`{"z":[1,2.5,1e400,null,true],"a":"q\"b\\\n\t<>&é\u0001","m":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":"q\"b\\\n\t<>&é\u0001","m":{},"z":[1,2.5,1e400,null,true]}`
	if got := canonicalJSON(v); got != want {
		t.Errorf("canonicalJSON = %s, want %s", got, want)
	}
	if s, complete := boundedJSON(v, 10); complete || len(s) > 20 {
		t.Errorf("boundedJSON(10) = %q, %v", s, complete)
	}
	for _, bad := range []string{`{"a":1} {"b":2}`, `{"":f}`, `[1,]`, `{'a':1}`, `NaN`, ``} {
		if _, err := parseJSON([]byte(bad)); err == nil {
			t.Errorf("parseJSON(%q) accepted it", bad)
		}
	}
}
