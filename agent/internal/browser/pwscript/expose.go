package pwscript

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/dop251/goja"
)

// page.exposeFunction and exposeBinding: window[name] in every document of the page returns a
// promise of what the script's function returns. The page calls a CDP binding with the
// arguments as JSON; the function runs on the run's loop (while the test awaits something,
// as Playwright's run while Node.js is idle), and its result goes back into the calling
// document.

const bindingPrefix = "__pwscriptBinding_"

// exposed is one exposed function: fn gets the arguments (after the source for a binding).
type exposed struct {
	fn      goja.Callable
	binding bool
}

func exposeScript(name string) string {
	q, _ := json.Marshal(name)
	b, _ := json.Marshal(bindingPrefix + name)
	return fmt.Sprintf(`(() => {
  const name = %s, binding = window[%s];
  if (!binding || window[name]) return;
  const pending = new Map();
  let seq = 0;
  window[name] = (...args) => new Promise((resolve, reject) => {
    const id = ++seq;
    pending.set(id, { resolve, reject });
    binding(JSON.stringify({ id, args }));
  });
  window[%s + '_deliver'] = (id, ok, value) => {
    const p = pending.get(id);
    pending.delete(id);
    if (p) ok ? p.resolve(value) : p.reject(new Error(value));
  };
})()`, q, b, b)
}

// addExpose adds exposeFunction and exposeBinding.
func (r *run) addExpose(m map[string]any) {
	expose := func(method string, binding bool) func(goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			name := r.argString(call, 0, method, "name")
			fn := r.argFunc(call, 1, method, "callback")
			if binding {
				r.options(r.argObject(call, 2, method), method, "handle")
			}
			if _, dup := r.net.exposed[name]; dup {
				panic(r.typeError("%s: Function \"%s\" has been already registered", method, name))
			}
			r.net.exposed[name] = &exposed{fn: fn, binding: binding}
			src := exposeScript(name)
			return r.async(method+"("+jsQuote(name)+")", "pw:api", func(ctx context.Context) (any, error) {
				if _, err := chromedp.Call(ctx, runtime.AddBinding, runtime.AddBindingParams{Name: bindingPrefix + name}); err != nil {
					return nil, pageError(method, err)
				}
				if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src}); err != nil {
					return nil, pageError(method, err)
				}
				// The documents already there get it too.
				_, err := r.browser.evaluate(ctx, src)
				return nil, pageError(method, err)
			})
		}
	}
	m["exposeFunction"] = expose("page.exposeFunction", false)
	m["exposeBinding"] = expose("page.exposeBinding", true)
}

// onBinding runs an exposed function for a call from the page, on the loop.
func (r *run) onBinding(ev *runtime.EventBindingCalled) error {
	if len(ev.Name) <= len(bindingPrefix) {
		return nil
	}
	e := r.net.exposed[ev.Name[len(bindingPrefix):]]
	if e == nil {
		return nil
	}
	var payload struct {
		ID   int64             `json:"id"`
		Args []json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal([]byte(ev.Payload), &payload); err != nil {
		return nil // not a call made by exposeScript
	}
	deliver := func(ok bool, value json.RawMessage) {
		expr := fmt.Sprintf("window[%q](%d, %v, %s)", ev.Name+"_deliver", payload.ID, ok, value)
		go func() {
			ctx, cancel := context.WithTimeout(r.browser.ctx, 5*time.Second)
			defer cancel()
			_, _ = chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ContextID: ev.ExecutionContextID})
		}()
	}
	fail := func(v goja.Value) {
		msg, _ := json.Marshal(r.failureOfValue(v).Message)
		deliver(false, msg)
	}
	var args []goja.Value
	if e.binding {
		args = append(args, r.vm.ToValue(map[string]any{"page": r.pageObj, "frame": r.frameObject(r.net.frames.mainID())}))
	}
	for _, a := range payload.Args {
		v, err := r.jsonParse(goja.Undefined(), r.vm.ToValue(string(a)))
		if err != nil {
			v = goja.Undefined()
		}
		args = append(args, v)
	}
	res, err := e.fn(goja.Undefined(), args...)
	if err != nil {
		if ex, ok := err.(*goja.Exception); ok {
			fail(ex.Value())
			return nil
		}
		return err
	}
	settle := func(v goja.Value) {
		b, err := r.toJSON(v)
		if err != nil || b == nil {
			b = json.RawMessage("undefined")
		}
		deliver(true, b)
	}
	p, ok := res.Export().(*goja.Promise)
	if !ok || p == nil {
		settle(res)
		return nil
	}
	then, _ := goja.AssertFunction(res.(*goja.Object).Get("then"))
	_, err = then(res,
		r.vm.ToValue(func(c goja.FunctionCall) goja.Value { settle(c.Argument(0)); return goja.Undefined() }),
		r.vm.ToValue(func(c goja.FunctionCall) goja.Value { fail(c.Argument(0)); return goja.Undefined() }))
	if p.State() == goja.PromiseStateRejected {
		r.forget(p) // handled here: it goes back to the page
	}
	return err
}
