package pwscript

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/dlclark/regexp2/v2"
)

//go:embed engine.js
var engineJS string

// queryResult is what the page engine returns.
type queryResult struct {
	N int             `json:"n"`           // elements matched
	P []string        `json:"p,omitempty"` // previews, when one element was needed and several matched
	V json.RawMessage `json:"v,omitempty"` // the operation's value
	W string          `json:"w,omitempty"` // what an action waits for ("element is not visible")
}

var objectGroups atomic.Uint64

// query resolves loc in the page and runs op with arg on what it matches, in one
// evaluation; userFn, when set, is a function declaration called with the single element
// matched and userArg (locator.evaluate).
func (bp *browserPage) query(ctx context.Context, loc *locator, op string, arg any, userFn string, userArg json.RawMessage) (*queryResult, error) {
	fn := engineCall
	if userFn != "" {
		fn = userEvaluate(userFn)
	}
	return bp.queryWith(ctx, loc, op, arg, fn, userArg)
}

// queryWith is query with the function the page calls: the engine, or a wrapper of it.
func (bp *browserPage) queryWith(ctx context.Context, loc *locator, op string, arg any, fn string, userArg json.RawMessage) (*queryResult, error) {
	q := &axResolver{bp: bp, group: fmt.Sprintf("pwscript-%d", objectGroups.Add(1)), framed: entersFrames(loc.steps)}
	steps, err := q.prepare(ctx, loc.steps)
	defer q.release()
	if err != nil {
		return nil, err
	}
	doc, objs := q.doc, q.objs
	spec, err := json.Marshal(map[string]any{"steps": steps, "op": op, "arg": arg, "tid": bp.opts.TestIDAttribute, "ua": userArg})
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if doc == "" {
		raw, err = bp.evaluate(ctx, "("+fn+")("+string(spec)+")")
	} else {
		args := []*runtime.CallArgument{{Value: spec}}
		for _, o := range objs {
			args = append(args, &runtime.CallArgument{ObjectID: o})
		}
		raw, err = bp.callOn(ctx, doc, fn, args...)
	}
	if err != nil {
		return nil, err
	}
	var res queryResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("decode the page's answer: %w", err)
	}
	return &res, nil
}

// userEvaluate wraps a script's function for locator.evaluate: the engine finds the single
// element (its own copy, extended to hand the element over), then the function runs on it.
func userEvaluate(userFn string) string {
	engine := strings.Replace(engineJS, "case 'count':", "case 'element':\n      if ((el = single())) out.el = el;\n      break;\n    case 'count':", 1)
	return "async function(spec, ...ax) { spec.op = 'element'; const r = await (" + engine + ")(spec, ...ax);" +
		" if (r.n !== 1) return r; const el = r.el; delete r.el; r.v = await (" + userFn + ")(el, spec.ua); return r }"
}

// axResolver answers the accessibility steps of one query. The remote objects it makes
// (the document, the elements found) belong to its object group, released after the query.
type axResolver struct {
	bp    *browserPage
	group string
	doc   runtime.RemoteObjectID // the document, which the engine is called on
	objs  []runtime.RemoteObjectID
	// framed: the locator enters frames, so accessibility queries search their documents too.
	framed bool
}

func (q *axResolver) release() {
	if q.doc == "" {
		return
	}
	// Not on the query's goroutine: a page that stopped answering must not hold it.
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(q.bp.ctx), 5*time.Second)
		defer cancel()
		_, _ = chromedp.Call(ctx, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: q.group})
	}()
}

// prepare resolves the accessibility steps of steps (also inside filters), appending the
// elements found to q.objs and pointing each step at its range.
func (q *axResolver) prepare(ctx context.Context, steps []selStep) ([]selStep, error) {
	if steps == nil {
		return nil, nil
	}
	out := make([]selStep, len(steps))
	for i, s := range steps {
		var err error
		if s.frame != "" {
			s.Path = q.bp.framePath(s.frame)
		}
		if s.ax != nil {
			ids, err := q.elements(ctx, s.ax)
			if err != nil {
				return nil, err
			}
			s.Index, s.Count = len(q.objs), len(ids)
			q.objs = append(q.objs, ids...)
		}
		if s.Has, err = q.prepare(ctx, s.Has); err != nil {
			return nil, err
		}
		if s.HasNot, err = q.prepare(ctx, s.HasNot); err != nil {
			return nil, err
		}
		if s.Other, err = q.prepare(ctx, s.Other); err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// elements answers a getByRole/getByLabel query from Chromium's accessibility tree: the
// role and accessible name are Chromium's own computation. It returns remote objects of the
// matching elements, in no particular order (the engine sorts them).
func (q *axResolver) elements(ctx context.Context, aq *axQuery) ([]runtime.RemoteObjectID, error) {
	if q.doc == "" {
		doc, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: "document", ObjectGroup: q.group})
		if err != nil {
			return nil, err
		}
		if doc.Result == nil || doc.Result.ObjectID == "" {
			return nil, fmt.Errorf("no document")
		}
		q.doc = doc.Result.ObjectID
	}
	params := accessibility.QueryAXTreeParams{ObjectID: q.doc}
	if aq.role != "" {
		params.Role = aq.role
		if alias, ok := ariaToChromium[aq.role]; ok {
			params.Role = alias
		}
	}
	res, err := chromedp.Call(ctx, accessibility.QueryAXTree, params)
	if err != nil {
		return nil, err
	}
	nodes := res.Nodes
	if q.framed {
		more, err := q.bp.frameAXNodes(ctx, params)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, more...)
	}
	var ids []int64
	seen := map[int64]bool{}
	for _, n := range nodes {
		if n.BackendDOMNodeID == 0 || (n.Ignored && !aq.includeHidden) || seen[int64(n.BackendDOMNodeID)] {
			continue
		}
		if !aq.matches(n) {
			continue
		}
		seen[int64(n.BackendDOMNodeID)] = true
		ids = append(ids, int64(n.BackendDOMNodeID))
	}
	objs := make([]runtime.RemoteObjectID, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			p := dom.ResolveNodeParams{BackendNodeID: cdp.BackendNodeID(id), ObjectGroup: q.group}
			if q.framed {
				// An element of a child frame, wrapped for the main frame's world, which the
				// engine runs in.
				p.ExecutionContextID = q.bp.mainContext()
			}
			r, err := chromedp.Call(ctx, dom.ResolveNode, p)
			if err != nil {
				errs[i] = err
				return
			}
			objs[i] = r.Object.ObjectID
		})
	}
	wg.Wait()
	out := objs[:0]
	for i, o := range objs {
		if errs[i] != nil {
			if transient(errs[i]) {
				continue // the node went away meanwhile
			}
			return nil, errs[i]
		}
		out = append(out, o)
	}
	return out, nil
}

// matches checks a node of the tree against the query's name and states.
func (q *axQuery) matches(n *accessibility.Node) bool {
	if q.label {
		for _, l := range labelsOf(n) {
			if q.name.matchesText(l) {
				return true
			}
		}
		return false
	}
	if q.name != nil && !q.name.matchesText(axString(n.Name)) {
		return false
	}
	props := map[string]string{}
	for _, p := range n.Properties {
		if p.Value != nil {
			props[string(p.Name)] = strings.Trim(string(p.Value.Value), `"`)
		}
	}
	for k, want := range q.states {
		got := props[k]
		if want == "false" {
			if got != "" && got != "false" {
				return false
			}
		} else if got != want {
			return false
		}
	}
	if q.level != 0 && props["level"] != fmt.Sprint(q.level) {
		return false
	}
	return true
}

// labelsOf returns the texts a node's accessible name can come from that getByLabel
// matches: <label> elements, aria-labelledby and aria-label.
func labelsOf(n *accessibility.Node) []string {
	if n.Name == nil {
		return nil
	}
	var out []string
	for _, s := range n.Name.Sources {
		if s.Value == nil || len(s.Value.Value) == 0 {
			continue
		}
		switch {
		case s.Type == accessibility.ValueSourceTypeRelatedElement,
			s.Type == accessibility.ValueSourceTypeAttribute && (s.Attribute == "aria-label" || s.Attribute == "aria-labelledby"):
			out = append(out, axString(s.Value))
		}
	}
	return out
}

func axString(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var s string
	if err := json.Unmarshal(v.Value, &s); err != nil {
		return strings.Trim(string(v.Value), `"`)
	}
	return s
}

// normalizeSpace is Playwright's white-space normalization of texts.
func normalizeSpace(s string) string {
	s = strings.ReplaceAll(s, "\u200b", "")
	return strings.Join(strings.Fields(s), " ")
}

// matchesText applies the match to a text on the Go side (accessible names, titles, URLs).
func (m *textMatch) matchesText(s string) bool {
	if m.isRe {
		re, err := m.regexp()
		if err != nil {
			return false
		}
		ok, _ := re.MatchString(s)
		return ok
	}
	t, want := normalizeSpace(s), normalizeSpace(m.S)
	if m.Exact {
		return t == want
	}
	return strings.Contains(strings.ToLower(t), strings.ToLower(want))
}

// regexp compiles a JS regular expression for matching in Go, with ECMAScript semantics.
func (m *textMatch) regexp() (*regexp2.Regexp, error) {
	opts := regexp2.ECMAScript
	for _, f := range m.Flags {
		switch f {
		case 'i':
			opts |= regexp2.IgnoreCase
		case 'm':
			opts |= regexp2.Multiline
		case 's':
			opts |= regexp2.Singleline
		case 'u':
			opts |= regexp2.Unicode
		}
	}
	return regexp2.Compile(m.Re, opts)
}
