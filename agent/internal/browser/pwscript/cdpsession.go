package pwscript

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/dop251/goja"
)

// cdpAllowed are the DevTools methods a check's CDP session may send: throttling the network
// and reading the page's performance counters. Anything else could reach past the check's
// sandbox (Target, Browser, Fetch, Storage…), so it is refused by name.
var cdpAllowed = map[string]bool{
	"Network.enable":                   true,
	"Network.emulateNetworkConditions": true,
	"Performance.enable":               true,
	"Performance.disable":              true,
	"Performance.getMetrics":           true,
}

// newCDPSession is context.newCDPSession(page): a session on the test's page that may send
// only the methods of cdpAllowed.
func (r *run) newCDPSession(call goja.FunctionCall) goja.Value {
	if o, ok := call.Argument(0).(*goja.Object); !ok || o != r.pageObj {
		panic(r.typeError("browserContext.newCDPSession: expected the page"))
	}
	return r.resolved(r.cdpSessionObject())
}

func (r *run) cdpSessionObject() *goja.Object {
	detached := false
	return r.object("cdpSession", map[string]any{
		"send": func(call goja.FunctionCall) goja.Value {
			method := r.argString(call, 0, "cdpSession.send", "method")
			if !cdpAllowed[method] {
				panic(r.throwable(&scriptError{message: "not allowed in a check: CDP method " + method, where: r.callSite(), cause: CauseScript}))
			}
			if detached {
				panic(r.typeError("cdpSession.send: Target page, context or browser has been closed"))
			}
			params := json.RawMessage("{}")
			if v := call.Argument(1); !goja.IsUndefined(v) && !goja.IsNull(v) {
				b, err := r.toJSON(v)
				if err != nil {
					panic(r.typeError("cdpSession.send: params: %v", err))
				}
				params = b
			}
			return r.async(fmt.Sprintf("cdpSession.send(%s)", jsQuote(method)), "pw:api", func(ctx context.Context) (any, error) {
				res, err := chromedp.Call(ctx, cdp.Command[json.RawMessage, json.RawMessage]{Method: method}, params)
				if err != nil {
					return nil, opErr(CauseScript, "cdpSession.send: Protocol error (%s): %v", method, err)
				}
				if len(res) == 0 {
					res = json.RawMessage("{}")
				}
				return jsonResult(res), nil
			})
		},
		"detach": func(goja.FunctionCall) goja.Value {
			detached = true
			return r.resolved(goja.Undefined())
		},
	})
}
