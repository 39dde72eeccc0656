package pwscript

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/dop251/goja"
)

// locator.ariaSnapshot and expect(locator).toMatchAriaSnapshot, in Playwright's YAML form,
// built from Chromium's accessibility tree of the element:
//
//	- heading "Plans" [level=2]
//	- list:
//	  - listitem: Apple pie
//	- button "Buy"
//
// Roles, accessible names, text, nesting and the states checked, disabled, expanded, level,
// pressed and selected. A template matches when its nodes appear in the snapshot in order
// (others may come between), names and texts equal after white space is normalized, or
// match a /regexp/. Not done: /url and other properties, "- text:" regexps across
// several nodes, and the strict (=) form of children lists.

// ariaNode is a node of a snapshot.
type ariaNode struct {
	role     string // "text" for text
	name     string
	attrs    []string // "level=2", "checked"…
	children []*ariaNode
	nameRe   *textMatch // templates only: a /regexp/ name
}

// chromiumRoles maps Chromium's role names to ARIA's where they differ.
var chromiumRoles = map[string]string{"image": "img", "StaticText": "text"}

// ariaLifted are roles that do not appear in a snapshot; their children take their place.
var ariaLifted = map[string]bool{
	"generic": true, "none": true, "presentation": true, "LineBreak": true, "LabelText": true,
	"RootWebArea": true, "WebArea": true, "Section": true, "": true, "Iframe": true,
}

// ariaSnapshotOf builds the snapshot of the single element l matches.
// With wait, it first waits for the element as actions do; without, a missing element is
// an error a web-first assertion tries again after.
func (r *run) ariaSnapshotOf(ctx context.Context, b budget, own, wait bool, l *locator, method string) ([]*ariaNode, error) {
	if wait {
		if _, err := r.resolveOne(ctx, b, own, l, method, "read", map[string]string{"k": "tag"}, "", nil); err != nil {
			return nil, err
		}
	} else if res, err := r.browser.query(ctx, l, "count", nil, "", nil); err != nil || res.N != 1 {
		if err == nil && res.N > 1 {
			err = opErr(CauseAssertion, "%s", strictViolation(l, res))
		} else if err == nil {
			return nil, nil
		}
		return nil, err
	}
	var res accessibility.QueryAXTreeResult
	err := r.browser.withElement(ctx, l, func(obj runtime.RemoteObjectID) error {
		var err error
		res, err = chromedp.Call(ctx, accessibility.QueryAXTree, accessibility.QueryAXTreeParams{ObjectID: obj})
		return err
	})
	if err != nil {
		return nil, pageError(method, err)
	}
	byID := map[accessibility.NodeID]*accessibility.Node{}
	isChild := map[accessibility.NodeID]bool{}
	for _, n := range res.Nodes {
		byID[n.NodeID] = n
		for _, c := range n.ChildIDs {
			isChild[c] = true
		}
	}
	var out []*ariaNode
	for _, n := range res.Nodes {
		if !isChild[n.NodeID] {
			out = append(out, buildAria(n, byID)...)
		}
	}
	return out, nil
}

// buildAria turns an accessibility node into snapshot nodes: itself, or its children when
// its role is not shown.
func buildAria(n *accessibility.Node, byID map[accessibility.NodeID]*accessibility.Node) []*ariaNode {
	var kids []*ariaNode
	for _, c := range n.ChildIDs {
		if cn := byID[c]; cn != nil {
			kids = append(kids, buildAria(cn, byID)...)
		}
	}
	kids = mergeText(kids)
	role := axString(n.Role)
	if mapped, ok := chromiumRoles[role]; ok {
		role = mapped
	}
	if role == "InlineTextBox" || role == "ListMarker" {
		return nil
	}
	if n.Ignored || ariaLifted[role] {
		return kids
	}
	if role == "text" {
		t := normalizeSpace(axString(n.Name))
		if t == "" {
			return nil
		}
		return []*ariaNode{{role: "text", name: t}}
	}
	a := &ariaNode{role: role, name: normalizeSpace(axString(n.Name))}
	for _, p := range n.Properties {
		if p.Value == nil {
			continue
		}
		v := strings.Trim(string(p.Value.Value), `"`)
		switch string(p.Name) {
		case "checked", "pressed":
			if v == "true" {
				a.attrs = append(a.attrs, string(p.Name))
			} else if v == "mixed" {
				a.attrs = append(a.attrs, string(p.Name)+"=mixed")
			}
		case "disabled", "expanded", "selected":
			if v == "true" {
				a.attrs = append(a.attrs, string(p.Name))
			}
		case "level":
			if role == "heading" { // Chromium gives list items a level too; Playwright shows headings'
				a.attrs = append(a.attrs, "level="+v)
			}
		}
	}
	// Text that only repeats the name is not shown again.
	if len(kids) == 1 && kids[0].role == "text" && kids[0].name == a.name {
		kids = nil
	}
	a.children = kids
	return []*ariaNode{a}
}

// mergeText joins adjacent texts, as the page shows them.
func mergeText(nodes []*ariaNode) []*ariaNode {
	var out []*ariaNode
	for _, n := range nodes {
		if l := len(out); l > 0 && n.role == "text" && out[l-1].role == "text" {
			out[l-1] = &ariaNode{role: "text", name: out[l-1].name + " " + n.name}
			continue
		}
		out = append(out, n)
	}
	return out
}

// renderAria writes nodes in Playwright's YAML form.
func renderAria(nodes []*ariaNode, indent string, b *strings.Builder) {
	for _, n := range nodes {
		if n.role == "text" {
			fmt.Fprintf(b, "%s- text: %s\n", indent, yamlText(n.name))
			continue
		}
		line := indent + "- " + n.role
		if n.name != "" {
			line += " " + strconv.Quote(n.name)
		}
		for _, a := range n.attrs {
			line += " [" + a + "]"
		}
		switch {
		case len(n.children) == 1 && n.children[0].role == "text":
			line += ": " + yamlText(n.children[0].name)
			b.WriteString(line + "\n")
		case len(n.children) > 0:
			b.WriteString(line + ":\n")
			renderAria(n.children, indent+"  ", b)
		default:
			b.WriteString(line + "\n")
		}
	}
}

// yamlText quotes a text when YAML would read it as something else.
func yamlText(s string) string {
	if s == "" || strings.ContainsAny(s[:1], "-?:,[]{}#&*!|>'\"%@`/ ") || strings.Contains(s, ": ") || strings.HasSuffix(s, ":") || s == "true" || s == "false" || s == "null" {
		return strconv.Quote(s)
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return strconv.Quote(s)
	}
	return s
}

// withElement calls fn with a remote object of the single element l matches (released
// after fn).
func (bp *browserPage) withElement(ctx context.Context, l *locator, fn func(runtime.RemoteObjectID) error) error {
	q := &axResolver{bp: bp, group: fmt.Sprintf("pwscript-%d", objectGroups.Add(1)), framed: entersFrames(l.steps)}
	steps, err := q.prepare(ctx, l.steps)
	defer q.release()
	if err != nil {
		return err
	}
	if q.doc == "" {
		doc, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: "document", ObjectGroup: q.group})
		if err != nil {
			return err
		}
		if doc.Result == nil || doc.Result.ObjectID == "" {
			return fmt.Errorf("no document")
		}
		q.doc = doc.Result.ObjectID
	}
	spec, err := json.Marshal(map[string]any{"steps": steps, "op": "element", "tid": bp.opts.TestIDAttribute})
	if err != nil {
		return err
	}
	engine := strings.Replace(engineJS, "case 'count':", "case 'element':\n      if ((el = single())) out.el = el;\n      break;\n    case 'count':", 1)
	args := []*runtime.CallArgument{{Value: spec}}
	for _, o := range q.objs {
		args = append(args, &runtime.CallArgument{ObjectID: o})
	}
	res, err := chromedp.Call(ctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: "async function(spec, ...ax) { const r = await (" + engine + ")(spec, ...ax); return r.n === 1 ? r.el : null }",
		ObjectID:            q.doc, Arguments: args, AwaitPromise: new(true), ObjectGroup: q.group,
	})
	if err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return &pageException{exceptionText(res.ExceptionDetails)}
	}
	if res.Result == nil || res.Result.ObjectID == "" {
		// Worded as Chromium words a document going away, so that callers try again.
		return errors.New("the element went away (Execution context was destroyed)")
	}
	return fn(res.Result.ObjectID)
}

// addAria adds locator.ariaSnapshot.
func (r *run) addAria(m map[string]any, l *locator) {
	m["ariaSnapshot"] = func(call goja.FunctionCall) goja.Value {
		b := r.actionBudget(r.options(r.argObject(call, 0, "locator.ariaSnapshot"), "locator.ariaSnapshot", "timeout", "ref"))
		return r.async("locator.ariaSnapshot("+l.desc+")", "pw:api", func(ctx context.Context) (any, error) {
			ctx, cancel, own := b.bound(ctx)
			defer cancel()
			nodes, err := r.ariaSnapshotOf(ctx, b, own, true, l, "locator.ariaSnapshot")
			if err != nil {
				return nil, err
			}
			var sb strings.Builder
			renderAria(nodes, "", &sb)
			return strings.TrimRight(sb.String(), "\n"), nil
		})
	}
}

// addAriaMatchers adds expect(locator).toMatchAriaSnapshot.
func (r *run) addAriaMatchers(m map[string]any, l *locator, custom string, negated bool) {
	m["toMatchAriaSnapshot"] = func(call goja.FunctionCall) goja.Value {
		text := r.argString(call, 0, "expect(locator).toMatchAriaSnapshot", "expected")
		opts := r.options(r.argObject(call, 1, "toMatchAriaSnapshot"), "expect(locator).toMatchAriaSnapshot", "timeout", "name")
		tmpl, err := parseAriaTemplate(text)
		if err != nil {
			panic(r.typeError("expect(locator).toMatchAriaSnapshot: %v", err))
		}
		spec := matcherSpec{subject: "locator", loc: l, name: "toMatchAriaSnapshot", args: "expected", expected: "\n" + strings.TrimSpace(dedent(text)), custom: custom, negated: negated}
		return r.webFirst(spec, opts, func(ctx context.Context) (bool, string, error) {
			nodes, err := r.ariaSnapshotOf(ctx, budget{}, false, false, l, "toMatchAriaSnapshot")
			if err != nil || nodes == nil {
				return false, "", err
			}
			var sb strings.Builder
			renderAria(nodes, "", &sb)
			return ariaContains(nodes, tmpl), "\n" + strings.TrimRight(sb.String(), "\n"), nil
		})
	}
}

// ariaContains tells whether the template's sequence appears, in order, among the children
// of some node of the snapshot (or at its top).
func ariaContains(nodes, tmpl []*ariaNode) bool {
	if ariaSeq(nodes, tmpl) {
		return true
	}
	for _, n := range nodes {
		if ariaContains(n.children, tmpl) {
			return true
		}
	}
	return false
}

// ariaSeq: each template node matches a later actual node than the one before.
func ariaSeq(actual, tmpl []*ariaNode) bool {
	i := 0
	for _, t := range tmpl {
		for i < len(actual) && !ariaMatch(actual[i], t) {
			i++
		}
		if i == len(actual) {
			return false
		}
		i++
	}
	return true
}

func ariaMatch(a, t *ariaNode) bool {
	if a.role != t.role {
		return false
	}
	switch {
	case t.nameRe != nil:
		if !t.nameRe.matchesText(a.name) {
			return false
		}
	case t.name != "" && normalizeSpace(t.name) != a.name:
		return false
	}
	for _, want := range t.attrs {
		found := false
		for _, got := range a.attrs {
			found = found || got == want
		}
		if !found {
			return false
		}
	}
	if len(t.children) == 0 {
		return true
	}
	// A one-text template child also matches a node whose name is that text.
	if len(a.children) == 0 && len(t.children) == 1 && t.children[0].role == "text" {
		return ariaMatch(&ariaNode{role: "text", name: a.name}, t.children[0])
	}
	return ariaSeq(a.children, t.children)
}

// dedent removes the indentation common to the lines of a template literal.
func dedent(text string) string {
	lines := strings.Split(text, "\n")
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if common < 0 || n < common {
			common = n
		}
	}
	for i, l := range lines {
		if len(l) >= common && common > 0 {
			lines[i] = l[common:]
		}
	}
	return strings.Join(lines, "\n")
}

// ariaLine matches one line of a template: - role "name" [attr]…: text, or - text: …
var ariaLine = regexp.MustCompile(`^- ([a-zA-Z]+)(?:\s+("(?:[^"\\]|\\.)*"|/(?:[^/\\]|\\.)+/[a-z]*))?((?:\s*\[[^\]]+\])*)\s*(?::\s*(.*))?$`)

// parseAriaTemplate reads toMatchAriaSnapshot's YAML.
func parseAriaTemplate(text string) ([]*ariaNode, error) {
	type frame struct {
		indent int
		list   *[]*ariaNode
	}
	var root []*ariaNode
	stack := []frame{{-1, &root}}
	for i, raw := range strings.Split(dedent(text), "\n") {
		if strings.TrimSpace(raw) == "" {
			continue
		}
		indent := len(raw) - len(strings.TrimLeft(raw, " "))
		line := strings.TrimSpace(raw)
		m := ariaLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("line %d: expected \"- role \"name\" [state]: text\", got %q", i+1, line)
		}
		n := &ariaNode{role: m[1]}
		if q := m[2]; q != "" {
			if q[0] == '/' {
				j := strings.LastIndex(q, "/")
				n.nameRe = &textMatch{Re: q[1:j], Flags: q[j+1:], isRe: true}
			} else {
				s, err := strconv.Unquote(q)
				if err != nil {
					return nil, fmt.Errorf("line %d: %v", i+1, err)
				}
				n.name = s
			}
		}
		for _, a := range regexp.MustCompile(`\[([^\]]+)\]`).FindAllStringSubmatch(m[3], -1) {
			n.attrs = append(n.attrs, strings.ReplaceAll(a[1], " ", ""))
		}
		if rest := strings.TrimSpace(m[4]); rest != "" {
			t := &ariaNode{role: "text"}
			switch {
			case len(rest) > 1 && rest[0] == '/' && strings.LastIndex(rest, "/") > 0:
				j := strings.LastIndex(rest, "/")
				t.nameRe = &textMatch{Re: rest[1:j], Flags: rest[j+1:], isRe: true}
			case rest[0] == '"':
				s, err := strconv.Unquote(rest)
				if err != nil {
					return nil, fmt.Errorf("line %d: %v", i+1, err)
				}
				t.name = s
			default:
				t.name = rest
			}
			if n.role == "text" {
				n = t
			} else {
				n.children = []*ariaNode{t}
			}
		}
		for len(stack) > 1 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		top := stack[len(stack)-1]
		*top.list = append(*top.list, n)
		stack = append(stack, frame{indent, &n.children})
	}
	return root, nil
}
