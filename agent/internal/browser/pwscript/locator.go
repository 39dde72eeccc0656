package pwscript

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/dop251/goja"
)

// locator is an immutable description of how to find elements, resolved anew by every
// operation, as Playwright's locators are.
type locator struct {
	steps []selStep
	desc  string // Playwright's toString: "getByRole('button', { name: 'Buy' })"
}

// selStep is one step of a locator. It is sent to the page engine as JSON; an ax step is
// resolved by the runtime first (Chromium's accessibility tree) and sent as a range of the
// elements passed along.
type selStep struct {
	Kind    string          `json:"t"`
	Sel     string          `json:"s,omitempty"`
	Match   *textMatch      `json:"m,omitempty"`
	Attr    string          `json:"a,omitempty"`
	Index   int             `json:"i"`
	Count   int             `json:"n"`
	HasText *textMatch      `json:"ht,omitempty"`
	HasNot  []selStep       `json:"hasNot,omitempty"`
	Has     []selStep       `json:"has,omitempty"`
	NoText  *textMatch      `json:"hnt,omitempty"`
	Visible *bool           `json:"vis,omitempty"`
	Other   []selStep       `json:"o,omitempty"`
	Path    []framePathStep `json:"path,omitempty"` // framepath: the frame's document (frames.go)
	ax      *axQuery
	frame   cdp.FrameID // framepath: the frame whose path is looked up when the locator is resolved
}

// textMatch matches a text as Playwright does: a string case-insensitively as a substring
// after normalizing white space, or whole and case-sensitively when exact; or a RegExp.
type textMatch struct {
	S     string `json:"s"`
	Re    string `json:"re,omitempty"`
	Flags string `json:"f,omitempty"`
	Exact bool   `json:"x,omitempty"`
	isRe  bool
}

// axQuery is a getByRole or getByLabel query, answered from Chromium's accessibility tree.
type axQuery struct {
	role          string // ARIA role; "" for getByLabel
	label         bool   // getByLabel: match the names that come from labels
	name          *textMatch
	includeHidden bool
	states        map[string]string // AX property → wanted value ("checked": "true")
	level         int
}

func (l *locator) with(desc string, steps ...selStep) *locator {
	out := &locator{steps: append(append([]selStep{}, l.steps...), steps...)}
	if l.desc == "" {
		out.desc = desc
	} else {
		out.desc = l.desc + "." + desc
	}
	return out
}

// jsQuote writes s as a single-quoted JS string, as Playwright prints selectors.
func jsQuote(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch r {
		case '\'':
			b.WriteString(`\'`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

func (m *textMatch) String() string {
	if m.isRe {
		if m.S != "" {
			return jsQuote(m.S) // a URL glob
		}
		return "/" + m.Re + "/" + m.Flags
	}
	return jsQuote(m.S)
}

// textArg reads a string-or-RegExp argument.
func (r *run) textArg(v goja.Value, fn string) *textMatch {
	if re, ok := r.regexpOf(v); ok {
		return re
	}
	if s, ok := v.Export().(string); ok {
		return &textMatch{S: s}
	}
	panic(r.typeError("%s: expected a string or a regular expression, got %s", fn, describeType(v)))
}

// regexpOf returns v's source and flags when v is a RegExp.
func (r *run) regexpOf(v goja.Value) (*textMatch, bool) {
	o, ok := v.(*goja.Object)
	if !ok || o.ClassName() != "RegExp" {
		return nil, false
	}
	return &textMatch{Re: o.Get("source").String(), Flags: o.Get("flags").String(), isRe: true}, true
}

// exactOption applies { exact } to m.
func (r *run) exactOption(m *textMatch, opts map[string]goja.Value) string {
	if v, ok := opts["exact"]; ok && v.ToBoolean() && !m.isRe {
		m.Exact = true
		return ", { exact: true }"
	}
	return ""
}

// engineName matches a Playwright selector engine prefix ("xpath=", "text=").
var engineName = regexp.MustCompile(`^([a-zA-Z_0-9-]+(?::[a-zA-Z_0-9-]+)*)=`)

// parseSelector turns a page.locator() selector into steps: CSS (with Playwright's
// extensions), XPath ("xpath=", "//"), "text=", "id=", "data-testid=", "nth=", "visible=",
// "role=" and the "internal:" engines (selectors.go), chained with " >> ".
func (r *run) parseSelector(sel string) []selStep {
	var steps []selStep
	for _, part := range splitChain(sel) {
		part = strings.TrimSpace(part)
		engine, body := "css", part
		if m := engineName.FindStringSubmatch(part); m != nil {
			engine, body = m[1], part[len(m[0]):]
		} else if strings.HasPrefix(part, "//") || strings.HasPrefix(part, "..") {
			engine = "xpath"
		} else if len(part) > 1 && (part[0] == '"' || part[0] == '\'') && part[len(part)-1] == part[0] {
			engine = "text"
		}
		switch engine {
		case "css":
			// Playwright's CSS extensions (:has-text(), :visible…) are the page engine's.
			steps = append(steps, selStep{Kind: "css", Sel: body})
		case "xpath":
			steps = append(steps, selStep{Kind: "xpath", Sel: body})
		case "text":
			m := &textMatch{S: body}
			if len(body) > 1 && (body[0] == '"' || body[0] == '\'') && body[len(body)-1] == body[0] {
				m.S, m.Exact = body[1:len(body)-1], true
			} else if len(body) > 1 && body[0] == '/' && strings.LastIndex(body, "/") > 0 {
				i := strings.LastIndex(body, "/")
				m = &textMatch{Re: body[1:i], Flags: body[i+1:], isRe: true}
			}
			steps = append(steps, selStep{Kind: "text", Match: m})
		case "id":
			steps = append(steps, selStep{Kind: "attr", Attr: "id", Match: &textMatch{S: body, Exact: true}})
		case "data-testid", "data-test-id", "data-test":
			steps = append(steps, selStep{Kind: "attr", Attr: engine, Match: &textMatch{S: body, Exact: true}})
		case "nth":
			i, err := strconv.Atoi(body)
			if err != nil {
				panic(r.typeError("locator(%s): nth= needs a number", jsQuote(sel)))
			}
			steps = append(steps, selStep{Kind: "nth", Index: i})
		case "visible":
			v := body == "true"
			steps = append(steps, selStep{Kind: "filter", Visible: &v})
		default:
			step, ok := r.engineStep(engine, body, sel)
			if !ok {
				panic(r.notSupported(fmt.Sprintf("the %s= selector engine in locator(%s)", engine, jsQuote(sel))))
			}
			steps = append(steps, step...)
		}
	}
	return steps
}

// ariaToChromium maps the ARIA roles whose name differs in Chromium's accessibility tree.
var ariaToChromium = map[string]string{"img": "image"}
