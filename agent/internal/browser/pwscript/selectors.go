package pwscript

import (
	"regexp"
	"strconv"
	"strings"
)

// The selector engines beyond CSS and XPath that Playwright accepts in locator() and in
// " >> " chains: "css=", "role=" (its public role engine) and the "internal:" engines that
// Playwright's own locators print as (internal:role=button[name="Buy"i],
// internal:text="Sign in"s, internal:control=enter-frame…), so that a selector copied from
// Playwright's output runs as it did there.

// roleAttr matches one [name=value flag] of a role selector.
var roleAttr = regexp.MustCompile(`\[\s*([\w-]+)\s*(?:=\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|/(?:[^/\\]|\\.)+/[a-z]*|[^\]\s]+)\s*([is])?)?\s*\]`)

// engineStep returns the steps of one part of a chain with an engine other than css, xpath,
// text, id, data-testid, nth and visible (parseSelector's own), or false.
func (r *run) engineStep(engine, body, sel string) ([]selStep, bool) {
	switch engine {
	case "css":
		return []selStep{{Kind: "css", Sel: body}}, true
	case "role", "internal:role":
		return []selStep{{Kind: "ax", ax: r.roleSelector(body, sel)}}, true
	case "internal:text":
		return []selStep{{Kind: "text", Match: r.quotedMatch(body, sel)}}, true
	case "internal:label":
		return []selStep{{Kind: "ax", ax: &axQuery{label: true, name: r.quotedMatch(body, sel)}}}, true
	case "internal:attr", "internal:testid":
		m := roleAttr.FindStringSubmatch(body)
		if m == nil || m[2] == "" {
			panic(r.typeError("locator(%s): %s= needs [name=value]", jsQuote(sel), engine))
		}
		return []selStep{{Kind: "attr", Attr: m[1], Match: r.quotedMatch(m[2]+m[3], sel)}}, true
	case "internal:has-text":
		return []selStep{{Kind: "filter", HasText: r.quotedMatch(body, sel)}}, true
	case "internal:has-not-text":
		return []selStep{{Kind: "filter", NoText: r.quotedMatch(body, sel)}}, true
	case "internal:has", "internal:has-not", "internal:and", "internal:or", "internal:chain":
		inner, err := strconv.Unquote(body)
		if err != nil {
			panic(r.typeError("locator(%s): %s= needs a quoted selector", jsQuote(sel), engine))
		}
		steps := r.parseSelector(inner)
		switch engine {
		case "internal:has":
			return []selStep{{Kind: "filter", Has: steps}}, true
		case "internal:has-not":
			return []selStep{{Kind: "filter", HasNot: steps}}, true
		case "internal:and":
			return []selStep{{Kind: "and", Other: steps}}, true
		case "internal:or":
			return []selStep{{Kind: "or", Other: steps}}, true
		default:
			return steps, true
		}
	case "internal:control":
		if body == "enter-frame" {
			return []selStep{{Kind: "frame"}}, true
		}
	}
	return nil, false
}

// quotedMatch reads Playwright's text argument: "text"i (a case-insensitive substring, also
// unquoted), "text"s (the whole text, case-sensitive) or /regexp/flags.
func (r *run) quotedMatch(body, sel string) *textMatch {
	body = strings.TrimSpace(body)
	if len(body) > 1 && body[0] == '/' {
		if i := strings.LastIndex(body, "/"); i > 0 {
			return &textMatch{Re: body[1:i], Flags: body[i+1:], isRe: true}
		}
	}
	flag := ""
	if n := len(body); n > 2 && (body[n-1] == 'i' || body[n-1] == 's') && (body[n-2] == '"' || body[n-2] == '\'') {
		flag, body = body[n-1:], body[:n-1]
	}
	if len(body) > 1 && (body[0] == '"' || body[0] == '\'') && body[len(body)-1] == body[0] {
		s := unescapeQuoted(body[1 : len(body)-1])
		return &textMatch{S: s, Exact: flag == "s"}
	}
	return &textMatch{S: body}
}

func unescapeQuoted(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// roleSelector reads role=button[name="Buy"][pressed] into the query getByRole makes.
func (r *run) roleSelector(body, sel string) *axQuery {
	i := strings.IndexByte(body, '[')
	role := body
	if i >= 0 {
		role = body[:i]
	}
	role = strings.TrimSpace(role)
	if role == "" {
		panic(r.typeError("locator(%s): role= needs a role", jsQuote(sel)))
	}
	q := &axQuery{role: role, states: map[string]string{}}
	if i < 0 {
		return q
	}
	rest := body[i:]
	for _, m := range roleAttr.FindAllStringSubmatch(rest, -1) {
		name, value, flag := m[1], m[2], m[3]
		switch name {
		case "name":
			q.name = r.quotedMatch(value+flag, sel)
		case "include-hidden":
			q.includeHidden = value == "" || value == "true"
		case "level":
			q.level, _ = strconv.Atoi(strings.Trim(value, `"'`))
		case "checked", "disabled", "expanded", "pressed", "selected":
			v := strings.Trim(value, `"'`)
			if v == "" {
				v = "true"
			}
			q.states[name] = v
		default:
			panic(r.notSupported("the attribute [" + name + "] of role= in locator(" + jsQuote(sel) + ")"))
		}
	}
	return q
}

// splitChain cuts a selector at its " >> " outside quotes: internal:has="a >> b" is one part.
func splitChain(sel string) []string {
	var out []string
	start := 0
	var quote byte
	for i := 0; i < len(sel); i++ {
		c := sel[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case strings.HasPrefix(sel[i:], " >> "):
			out = append(out, sel[start:i])
			start = i + 4
			i += 3
		}
	}
	return append(out, sel[start:])
}
