package pwscript

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/dop251/goja"
)

// Frames. A locator reaches into an iframe with a "frame" step: the engine continues in the
// iframe element's contentDocument, which the page can read for a frame of its own origin
// only. Frames of another origin (out-of-process in Chromium) are listed by page.frames()
// with their URL and name, but locators cannot enter them: they match nothing there.

// frameTree is the page's frames as Page events report them.
type frameTree struct {
	mu       sync.Mutex
	main     cdp.FrameID
	frames   map[cdp.FrameID]*frameRec
	order    []cdp.FrameID // attachment order: page.frames() lists frames in it
	contexts map[cdp.FrameID]runtime.ExecutionContextID
}

type frameRec struct {
	id, parent cdp.FrameID
	name, url  string
	detached   bool
	obj        *goja.Object // the script's Frame, made on the loop
}

func newFrameTree(ctx context.Context) (*frameTree, error) {
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return nil, fmt.Errorf("get the frame tree: %w", err)
	}
	t := &frameTree{frames: map[cdp.FrameID]*frameRec{}, contexts: map[cdp.FrameID]runtime.ExecutionContextID{}}
	t.main = tree.FrameTree.Frame.ID
	var walk func(ft *page.FrameTree)
	walk = func(ft *page.FrameTree) {
		t.navigated(ft.Frame)
		for _, c := range ft.ChildFrames {
			walk(c)
		}
	}
	walk(tree.FrameTree)
	return t, nil
}

func (t *frameTree) rec(id cdp.FrameID) *frameRec {
	f := t.frames[id]
	if f == nil {
		f = &frameRec{id: id}
		t.frames[id] = f
		t.order = append(t.order, id)
	}
	return f
}

func (t *frameTree) attached(id, parent cdp.FrameID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rec(id).parent = parent
}

func (t *frameTree) navigated(f *cdp.Frame) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f.ParentID == "" {
		t.main = f.ID
	}
	r := t.rec(f.ID)
	r.parent, r.name, r.url, r.detached = f.ParentID, f.Name, f.URL+f.URLFragment, false
}

func (t *frameTree) navigatedWithin(id cdp.FrameID, url string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rec(id).url = url
}

func (t *frameTree) detached(id cdp.FrameID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f := t.frames[id]; f != nil {
		f.detached = true
	}
}

func (t *frameTree) contextCreated(c *runtime.ExecutionContextDescription) {
	var aux struct {
		FrameID   cdp.FrameID `json:"frameId"`
		IsDefault bool        `json:"isDefault"`
	}
	if json.Unmarshal(c.AuxData, &aux) != nil || !aux.IsDefault {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.contexts[aux.FrameID] = c.ID
}

// snapshot copies a frame's state.
func (t *frameTree) snapshot(id cdp.FrameID) (frameRec, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.frames[id]
	if f == nil {
		return frameRec{}, false
	}
	return *f, true
}

// live lists the frames attached now, the main frame first.
func (t *frameTree) live() []cdp.FrameID {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := []cdp.FrameID{t.main}
	for _, id := range t.order {
		if f := t.frames[id]; id != t.main && !f.detached && t.attachedToMain(f) {
			out = append(out, id)
		}
	}
	return out
}

func (t *frameTree) attachedToMain(f *frameRec) bool {
	for i := 0; f != nil && i < 64; i++ {
		if f.id == t.main {
			return true
		}
		if f.detached {
			return false
		}
		f = t.frames[f.parent]
	}
	return false
}

// path is how the engine finds a frame's document from the main one: at each level the
// iframe whose window has the frame's name and URL, the idx-th of those alike.
type framePathStep struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	Idx  int    `json:"idx"`
}

func (t *frameTree) path(id cdp.FrameID) ([]framePathStep, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []framePathStep
	for i := 0; id != t.main; i++ {
		f := t.frames[id]
		if f == nil || f.detached || i > 64 {
			return nil, false
		}
		idx := 0
		for _, o := range t.order {
			s := t.frames[o]
			if o == id {
				break
			}
			if s.parent == f.parent && !s.detached && s.name == f.name && s.url == f.url {
				idx++
			}
		}
		out = append([]framePathStep{{Name: f.name, URL: f.url, Idx: idx}}, out...)
		id = f.parent
	}
	return out, true
}

func (t *frameTree) children(id cdp.FrameID) []cdp.FrameID {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []cdp.FrameID
	for _, o := range t.order {
		if f := t.frames[o]; f.parent == id && !f.detached {
			out = append(out, o)
		}
	}
	return out
}

// frameObject is the script's Frame for id (null for a frame never seen).
func (r *run) frameObject(id cdp.FrameID) goja.Value {
	t := r.net.frames
	t.mu.Lock()
	f := t.frames[id]
	t.mu.Unlock()
	if f == nil {
		return goja.Null()
	}
	if f.obj != nil {
		return f.obj
	}
	// Locators of a frame start from its document; the main frame's are the page's.
	root := func() *locator {
		if snap, _ := t.snapshot(id); snap.parent == "" {
			return &locator{}
		}
		return &locator{steps: []selStep{{Kind: "framepath", frame: id}}}
	}
	m := map[string]any{}
	r.addLocatorBuilders(m, root())
	m["url"] = func(goja.FunctionCall) goja.Value { s, _ := t.snapshot(id); return r.vm.ToValue(s.url) }
	m["name"] = func(goja.FunctionCall) goja.Value { s, _ := t.snapshot(id); return r.vm.ToValue(s.name) }
	m["isDetached"] = func(goja.FunctionCall) goja.Value { s, _ := t.snapshot(id); return r.vm.ToValue(s.detached) }
	m["page"] = func(goja.FunctionCall) goja.Value { return r.pageObj }
	m["parentFrame"] = func(goja.FunctionCall) goja.Value {
		s, _ := t.snapshot(id)
		if s.parent == "" {
			return goja.Null()
		}
		return r.frameObject(s.parent)
	}
	m["childFrames"] = func(goja.FunctionCall) goja.Value {
		var out []any
		for _, c := range t.children(id) {
			out = append(out, r.frameObject(c))
		}
		return r.vm.NewArray(out...)
	}
	m["evaluate"] = func(call goja.FunctionCall) goja.Value {
		expr := r.evaluateExpression(call, "frame.evaluate")
		return r.async("frame.evaluate()", "pw:api", func(ctx context.Context) (any, error) {
			return r.evaluateInFrame(ctx, id, "frame.evaluate", expr)
		})
	}
	m["goto"] = func(call goja.FunctionCall) goja.Value {
		target := r.argString(call, 0, "frame.goto", "url")
		opts := r.options(r.argObject(call, 1, "frame.goto"), "frame.goto", "timeout", "waitUntil", "referer")
		b := r.actionBudget(opts)
		return r.async("frame.goto("+jsQuote(target)+")", "pw:api", func(ctx context.Context) (any, error) {
			ctx, cancel, own := b.bound(ctx)
			defer cancel()
			if _, ok := AllowedURL(target); !ok {
				return nil, opErr(CauseScript, "frame.goto: %s", NotAllowed(target))
			}
			res, err := chromedp.Call(ctx, page.Navigate, page.NavigateParams{URL: target, FrameID: id})
			if err != nil {
				return nil, timedOut(ctx, err, "frame.goto", b, own)
			}
			if res.ErrorText != "" {
				return nil, opErr(CauseNavigation, "frame.goto: %s at %s", res.ErrorText, target)
			}
			// A child frame's load is awaited through its document: ready when it says so.
			err = poll(ctx, func() (bool, error) {
				v, err := r.evaluateInFrame(ctx, id, "frame.goto", "document.readyState === 'complete' && location.href !== 'about:blank'")
				if err != nil {
					return false, nil
				}
				return string(v.(jsonResult)) == "true", nil
			})
			return nil, timedOut(ctx, err, "frame.goto", b, own)
		})
	}
	m["waitForSelector"] = r.waitForSelectorFunc(root())
	m["content"] = func(goja.FunctionCall) goja.Value {
		return r.async("frame.content()", "pw:api", func(ctx context.Context) (any, error) {
			return r.evaluateInFrame(ctx, id, "frame.content", "document.documentElement ? document.documentElement.outerHTML : ''")
		})
	}
	m["title"] = func(goja.FunctionCall) goja.Value {
		return r.async("frame.title()", "pw:api", func(ctx context.Context) (any, error) {
			return r.evaluateInFrame(ctx, id, "frame.title", "document.title")
		})
	}
	f.obj = r.object("frame", m)
	return f.obj
}

// evaluateInFrame evaluates expr in the frame's own JavaScript world (same- or cross-origin,
// when Chromium runs it in this page's process).
func (r *run) evaluateInFrame(ctx context.Context, id cdp.FrameID, method, expr string) (any, error) {
	t := r.net.frames
	if snap, _ := t.snapshot(id); snap.parent == "" {
		return r.evaluateRetrying(ctx, method, expr)
	}
	for {
		t.mu.Lock()
		cid, ok := t.contexts[id]
		t.mu.Unlock()
		if ok {
			res, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{
				Expression: expr, ContextID: cid, ReturnByValue: new(true), AwaitPromise: new(true), Silent: new(true),
			})
			switch {
			case err == nil && res.ExceptionDetails != nil:
				return nil, opErr(CauseScript, "%s: %s", method, exceptionText(res.ExceptionDetails))
			case err == nil:
				return jsonResult(orJSONNull(remoteValue(res.Result))), nil
			case !transient(err):
				return nil, pageError(method, err)
			}
		}
		if err := sleep(ctx, pollDelays[2]); err != nil {
			return nil, err
		}
	}
}

func orJSONNull(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	return v
}

// addFrames adds page.frames, mainFrame, frame and frameLocator.
func (r *run) addFrames(m map[string]any) {
	t := r.net.frames
	m["mainFrame"] = func(goja.FunctionCall) goja.Value {
		t.mu.Lock()
		main := t.main
		t.mu.Unlock()
		return r.frameObject(main)
	}
	m["frames"] = func(goja.FunctionCall) goja.Value {
		var out []any
		for _, id := range t.live() {
			out = append(out, r.frameObject(id))
		}
		return r.vm.NewArray(out...)
	}
	m["frame"] = func(call goja.FunctionCall) goja.Value {
		var name *string
		var match *textMatch
		if s, ok := call.Argument(0).Export().(string); ok {
			name = &s
		} else {
			opts := r.options(r.argObject(call, 0, "page.frame"), "page.frame", "name", "url")
			if v, ok := opts["name"]; ok {
				s := v.String()
				name = &s
			}
			if v, ok := opts["url"]; ok {
				match = r.urlMatcher(v, "page.frame", true)
			}
			if name == nil && match == nil {
				panic(r.typeError("page.frame: expected a name or { name, url }"))
			}
		}
		for _, id := range t.live() {
			f, _ := t.snapshot(id)
			if (name == nil || f.name == *name) && (match == nil || match.matchesText(f.url)) {
				return r.frameObject(id)
			}
		}
		return goja.Null()
	}
}

// frameLocatorObject is a FrameLocator: the frame of the iframe owner matches.
func (r *run) frameLocatorObject(owner *locator) *goja.Object {
	inside := &locator{steps: append(append([]selStep{}, owner.steps...), selStep{Kind: "frame"}), desc: owner.desc + ".contentFrame()"}
	m := map[string]any{}
	r.addLocatorBuilders(m, inside)
	nth := func(i int, desc string) goja.Value {
		return r.frameLocatorObject(owner.with(desc, selStep{Kind: "nth", Index: i}))
	}
	m["first"] = func(goja.FunctionCall) goja.Value { return nth(0, "first()") }
	m["last"] = func(goja.FunctionCall) goja.Value { return nth(-1, "last()") }
	m["nth"] = func(call goja.FunctionCall) goja.Value {
		i := int(call.Argument(0).ToInteger())
		return nth(i, fmt.Sprintf("nth(%d)", i))
	}
	m["owner"] = func(goja.FunctionCall) goja.Value { return r.locatorObject(owner) }
	return r.object("frameLocator", m)
}

// entersFrames tells whether a locator's steps go into a frame.
func entersFrames(steps []selStep) bool {
	for _, s := range steps {
		if s.Kind == "frame" || s.Kind == "framepath" || entersFrames(s.Has) || entersFrames(s.HasNot) || entersFrames(s.Other) {
			return true
		}
	}
	return false
}

// frameAXNodes runs an accessibility query in the documents of the page's child frames that
// run in its process (a frame of another origin is out of reach and skipped).
func (bp *browserPage) frameAXNodes(ctx context.Context, params accessibility.QueryAXTreeParams) ([]*accessibility.Node, error) {
	if bp.childFrames == nil {
		return nil, nil
	}
	var out []*accessibility.Node
	for _, id := range bp.childFrames() {
		owner, err := chromedp.Call(ctx, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: id})
		if err != nil {
			continue // detached meanwhile, or not in this process
		}
		n, err := chromedp.Call(ctx, dom.DescribeNode, dom.DescribeNodeParams{BackendNodeID: owner.BackendNodeID})
		if err != nil || n.Node == nil || n.Node.ContentDocument == nil {
			continue
		}
		p := params
		p.ObjectID, p.BackendNodeID = "", n.Node.ContentDocument.BackendNodeID
		res, err := chromedp.Call(ctx, accessibility.QueryAXTree, p)
		if err != nil {
			if transient(err) {
				continue
			}
			return nil, err
		}
		out = append(out, res.Nodes...)
	}
	return out, nil
}

// mainContext is the main frame's default execution context (0 before one is reported).
func (t *frameTree) mainContext() runtime.ExecutionContextID {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.contexts[t.main]
}

// framePathOf is the path of a frame as the engine follows it; a detached frame's leads
// nowhere.
func (t *frameTree) framePathOf(id cdp.FrameID) []framePathStep {
	p, ok := t.path(id)
	if !ok {
		return []framePathStep{{Name: "\x00detached"}}
	}
	return p
}

func (t *frameTree) mainID() cdp.FrameID {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.main
}
