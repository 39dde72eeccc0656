package pwscript

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/dop251/goja"
)

// page.route intercepts the page's requests with CDP's Fetch domain on the tab, enabled while
// a route exists. The agent's browser also intercepts every request (the scheme guard) and
// all traffic leaves through its egress proxy, so a route cannot widen what a check
// reaches: route.continue({ url }) must keep an allowed scheme (checked here, and Chromium
// refuses a change of scheme), its request still goes out through the proxy and its address
// policy, and route.fulfill serves the script's own bytes under the request's (allowed) URL.

// router holds the routes, on the loop.
type router struct {
	r       *run
	routes  []*route // in registration order; the last registered is tried first
	enabled bool
}

type route struct {
	match   func(u string) bool
	handler goja.Callable
	fn      goja.Value
	key     string // the pattern, for unroute
	times   int    // 0: unlimited
	used    int
}

// onEvent queues a paused request for the routes, on chromedp's reading goroutine.
func (rt *router) onEvent(ev any) {
	e, ok := ev.(*fetch.EventRequestPaused)
	if !ok {
		return
	}
	rt.r.loop.enqueue(func() error { return rt.handle(e) })
}

// sync turns interception on or off to match the routes. It runs on the loop and waits for
// the browser, so that a request made after page.route() returns is routed.
func (rt *router) sync() error {
	want := len(rt.routes) > 0
	if want == rt.enabled {
		return nil
	}
	ctx, cancel := context.WithTimeout(rt.r.browser.ctx, 5*time.Second)
	defer cancel()
	var err error
	if want {
		_, err = chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*", RequestStage: fetch.RequestStageRequest}}})
	} else {
		_, err = chromedp.Call(ctx, fetch.Disable, cdp.Empty{})
	}
	if err == nil {
		rt.enabled = want
	}
	return err
}

// handle offers a paused request to the matching routes, last registered first; a request
// no route takes goes on unchanged.
func (rt *router) handle(e *fetch.EventRequestPaused) error {
	r := rt.r
	u := e.Request.URL + e.Request.URLFragment
	if _, ok := AllowedURL(u); !ok {
		go rt.cdp(fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
		return nil
	}
	var chain []*route
	for i := len(rt.routes) - 1; i >= 0; i-- {
		if rt.routes[i].match(u) {
			chain = append(chain, rt.routes[i])
		}
	}
	req := r.net.log.get(e.NetworkID)
	if req == nil {
		req = &netRequest{
			id: e.NetworkID, url: u, method: e.Request.Method, headers: lowerHeaders(e.Request.Headers),
			resourceType: strings.ToLower(string(e.ResourceType)), frameID: e.FrameID, done: make(chan struct{}),
		}
	}
	return rt.next(e, req, chain, continueOverrides{})
}

// continueOverrides are what route.fallback and route.continue change of the request.
type continueOverrides struct {
	url, method string
	headers     map[string]string
	postData    []byte
}

// next hands the request to the first route of chain, or lets it go on with the overrides.
func (rt *router) next(e *fetch.EventRequestPaused, req *netRequest, chain []*route, over continueOverrides) error {
	r := rt.r
	for len(chain) > 0 && chain[0].times > 0 && chain[0].used >= chain[0].times {
		chain = chain[1:]
	}
	if len(chain) == 0 {
		go rt.cdp(continueParams(e, over))
		return nil
	}
	rt0 := chain[0]
	rt0.used++
	if rt0.times > 0 && rt0.used >= rt0.times {
		rt.remove(func(x *route) bool { return x == rt0 })
		_ = rt.sync() // a failure leaves interception on: requests then go on unrouted
	}
	handled := false
	once := func(method string) {
		if handled {
			panic(r.typeError("route.%s: Route is already handled!", method))
		}
		handled = true
	}
	obj := r.object("route", map[string]any{
		"request": func(goja.FunctionCall) goja.Value { return r.requestObject(req) },
		"abort": func(call goja.FunctionCall) goja.Value {
			once("abort")
			code := "failed"
			if s, ok := call.Argument(0).Export().(string); ok {
				code = s
			}
			reason, ok := abortReasons[code]
			if !ok {
				panic(r.typeError("route.abort: unknown error code %q", code))
			}
			return r.async("route.abort()", "pw:api", func(ctx context.Context) (any, error) {
				_, err := chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: reason})
				return nil, pageError("route.abort", err)
			})
		},
		"fulfill": func(call goja.FunctionCall) goja.Value {
			p := r.fulfillParams(e, r.argObject(call, 0, "route.fulfill"))
			once("fulfill")
			return r.async("route.fulfill()", "pw:api", func(ctx context.Context) (any, error) {
				if p.fromResponse != nil {
					body, err := r.browser.responseBody(ctx, p.fromResponse)
					if err != nil {
						return nil, pageError("route.fulfill", err)
					}
					if p.Body == nil {
						p.Body = body
					}
				}
				_, err := chromedp.Call(ctx, fetch.FulfillRequest, p.FulfillRequestParams)
				return nil, pageError("route.fulfill", err)
			})
		},
		"continue": func(call goja.FunctionCall) goja.Value {
			o := r.overrides(r.argObject(call, 0, "route.continue"), "route.continue", over, e.Request.URL)
			once("continue")
			return r.async("route.continue()", "pw:api", func(ctx context.Context) (any, error) {
				_, err := chromedp.Call(ctx, fetch.ContinueRequest, continueParams(e, o))
				return nil, pageError("route.continue", err)
			})
		},
		"fallback": func(call goja.FunctionCall) goja.Value {
			o := r.overrides(r.argObject(call, 0, "route.fallback"), "route.fallback", over, e.Request.URL)
			once("fallback")
			if err := rt.next(e, req, chain[1:], o); err != nil {
				panic(err)
			}
			return r.resolved(goja.Undefined())
		},
		"fetch": func(goja.FunctionCall) goja.Value {
			panic(r.notSupported("route.fetch() — use route.continue() or route.fulfill()"))
		},
	})
	res, err := rt0.handler(goja.Undefined(), obj, r.requestObject(req))
	if err != nil {
		return err
	}
	if p, ok := res.Export().(*goja.Promise); ok && p.State() == goja.PromiseStateRejected {
		go rt.cdp(continueParams(e, over)) // the page must not hang on a broken handler
		return fmt.Errorf("route handler: %s", p.Result().String())
	}
	return nil
}

func (rt *router) cdp(params any) {
	ctx := rt.r.browser.ctx
	var err error
	switch p := params.(type) {
	case fetch.ContinueRequestParams:
		_, err = chromedp.Call(ctx, fetch.ContinueRequest, p)
	case fetch.FailRequestParams:
		_, err = chromedp.Call(ctx, fetch.FailRequest, p)
	}
	_ = err // the request went away with its page: nothing is left to decide
}

func continueParams(e *fetch.EventRequestPaused, o continueOverrides) fetch.ContinueRequestParams {
	p := fetch.ContinueRequestParams{RequestID: e.RequestID, URL: o.url, Method: o.method, PostData: o.postData}
	for k, v := range o.headers {
		p.Headers = append(p.Headers, &fetch.HeaderEntry{Name: k, Value: v})
	}
	return p
}

// overrides reads route.continue's and route.fallback's { url, method, headers, postData }
// over what an earlier fallback set.
func (r *run) overrides(o *goja.Object, method string, base continueOverrides, original string) continueOverrides {
	opts := r.options(o, method, "url", "method", "headers", "postData")
	out := base
	if v, ok := opts["url"]; ok {
		u := v.String()
		from, _ := AllowedURL(original)
		to, ok := AllowedURL(u)
		if !ok {
			panic(r.typeError("%s: %s", method, NotAllowed(u)))
		}
		if from != to {
			panic(r.typeError("%s: New URL must have same protocol as overridden URL", method))
		}
		if _, err := url.Parse(u); err != nil {
			panic(r.typeError("%s: url: %v", method, err))
		}
		out.url = u
	}
	if v, ok := opts["method"]; ok {
		out.method = v.String()
	}
	if v, ok := opts["headers"]; ok {
		out.headers = map[string]string{}
		ho, _ := v.(*goja.Object)
		if ho != nil {
			for _, k := range ho.Keys() {
				out.headers[k] = ho.Get(k).String()
			}
		}
	}
	if v, ok := opts["postData"]; ok {
		out.postData = r.bodyBytes(v, method)
	}
	return out
}

// fulfill is route.fulfill's CDP call, with the response whose body it takes, if any.
type fulfill struct {
	fetch.FulfillRequestParams
	fromResponse *netResponse
}

// fulfillParams reads route.fulfill's { status, headers, contentType, body, json, response }.
func (r *run) fulfillParams(e *fetch.EventRequestPaused, o *goja.Object) fulfill {
	opts := r.options(o, "route.fulfill", "status", "headers", "contentType", "body", "json", "response", "path")
	if _, ok := opts["path"]; ok {
		panic(r.notSupported("route.fulfill({ path }) — scripts have no file system; pass body"))
	}
	p := fulfill{FulfillRequestParams: fetch.FulfillRequestParams{RequestID: e.RequestID, ResponseCode: 200}}
	headers := map[string]string{}
	if v, ok := opts["response"]; ok {
		resp := r.responseOf(v)
		if resp == nil {
			panic(r.typeError("route.fulfill: response: expected a Response of this page"))
		}
		p.fromResponse = resp
		p.ResponseCode = resp.status
		for k, v := range resp.headers {
			headers[k] = v
		}
	}
	if v, ok := opts["status"]; ok {
		p.ResponseCode = v.ToInteger()
	}
	if v, ok := opts["headers"]; ok {
		if ho, _ := v.(*goja.Object); ho != nil {
			headers = map[string]string{}
			for _, k := range ho.Keys() {
				headers[strings.ToLower(k)] = ho.Get(k).String()
			}
		}
	}
	if v, ok := opts["json"]; ok {
		b, err := r.toJSON(v)
		if err != nil {
			panic(r.typeError("route.fulfill: json: %v", err))
		}
		p.Body = []byte(b)
		if p.Body == nil {
			p.Body = []byte{}
		}
		if _, set := headers["content-type"]; !set {
			headers["content-type"] = "application/json"
		}
	}
	if v, ok := opts["body"]; ok {
		p.Body = r.bodyBytes(v, "route.fulfill")
	}
	if v, ok := opts["contentType"]; ok {
		headers["content-type"] = v.String()
	}
	if p.fromResponse == nil && p.Body == nil {
		p.Body = []byte{}
	}
	if p.Body != nil {
		headers["content-length"] = fmt.Sprint(len(p.Body))
	}
	for k, v := range headers {
		p.ResponseHeaders = append(p.ResponseHeaders, &fetch.HeaderEntry{Name: k, Value: v})
	}
	p.ResponsePhrase = http.StatusText(int(p.ResponseCode))
	return p
}

// bodyBytes reads a body: a string, a Uint8Array or an ArrayBuffer.
func (r *run) bodyBytes(v goja.Value, method string) []byte {
	switch x := v.Export().(type) {
	case string:
		return []byte(x)
	case []byte:
		return append([]byte{}, x...)
	case goja.ArrayBuffer:
		return append([]byte{}, x.Bytes()...)
	}
	if o, ok := v.(*goja.Object); ok {
		if buf, ok := o.Get("buffer").Export().(goja.ArrayBuffer); ok {
			off, n := o.Get("byteOffset").ToInteger(), o.Get("byteLength").ToInteger()
			return append([]byte{}, buf.Bytes()[off:off+n]...)
		}
	}
	panic(r.typeError("%s: body: expected a string or a Uint8Array, got %s", method, describeType(v)))
}

// responseOf returns the response behind a script's Response object.
func (r *run) responseOf(v goja.Value) *netResponse {
	o, ok := v.(*goja.Object)
	if !ok {
		return nil
	}
	r.net.log.mu.Lock()
	defer r.net.log.mu.Unlock()
	for _, req := range r.net.log.reqs {
		for q := req; q != nil; q = q.redirectedFrom {
			if q.response != nil && q.response.obj == o {
				return q.response
			}
		}
	}
	return nil
}

// abortReasons maps route.abort's error codes to Chromium's.
var abortReasons = map[string]network.ErrorReason{
	"aborted": network.ErrorReasonAborted, "accessdenied": network.ErrorReasonAccessDenied,
	"addressunreachable": network.ErrorReasonAddressUnreachable, "blockedbyclient": network.ErrorReasonBlockedByClient,
	"blockedbyresponse": network.ErrorReasonBlockedByResponse, "connectionaborted": network.ErrorReasonConnectionAborted,
	"connectionclosed": network.ErrorReasonConnectionClosed, "connectionfailed": network.ErrorReasonConnectionFailed,
	"connectionrefused": network.ErrorReasonConnectionRefused, "connectionreset": network.ErrorReasonConnectionReset,
	"internetdisconnected": network.ErrorReasonInternetDisconnected, "namenotresolved": network.ErrorReasonNameNotResolved,
	"timedout": network.ErrorReasonTimedOut, "failed": network.ErrorReasonFailed,
}

func (rt *router) remove(drop func(*route) bool) {
	keep := rt.routes[:0]
	for _, x := range rt.routes {
		if drop(x) {
			rt.r.loop.listening--
			continue
		}
		keep = append(keep, x)
	}
	rt.routes = keep
}

// addRoutes adds page.route, unroute and unrouteAll.
func (r *run) addRoutes(m map[string]any) {
	rt := r.net.routes
	m["route"] = func(call goja.FunctionCall) goja.Value {
		match := r.routeMatcher(call.Argument(0), "page.route")
		h := r.argFunc(call, 1, "page.route", "handler")
		opts := r.options(r.argObject(call, 2, "page.route"), "page.route", "times")
		x := &route{match: match, handler: h, fn: call.Argument(1), key: r.routeKey(call.Argument(0))}
		if v, ok := opts["times"]; ok {
			x.times = int(v.ToInteger())
		}
		rt.routes = append(rt.routes, x)
		r.loop.listening++
		return r.routesSynced("page.route", rt)
	}
	m["unroute"] = func(call goja.FunctionCall) goja.Value {
		pattern := call.Argument(0)
		fn := call.Argument(1)
		probe := r.routeKey(pattern)
		rt.remove(func(x *route) bool {
			return x.keyMatches(probe) && (goja.IsUndefined(fn) || x.fn.StrictEquals(fn))
		})
		return r.routesSynced("page.unroute", rt)
	}
	m["unrouteAll"] = func(call goja.FunctionCall) goja.Value {
		r.options(r.argObject(call, 0, "page.unrouteAll"), "page.unrouteAll", "behavior")
		rt.remove(func(*route) bool { return true })
		return r.routesSynced("page.unrouteAll", rt)
	}
}

func (r *run) routesSynced(method string, rt *router) goja.Value {
	if err := rt.sync(); err != nil {
		panic(r.throwable(&scriptError{message: pageError(method, err).Error(), where: r.callSite(), cause: CauseBrowser}))
	}
	return r.resolved(goja.Undefined())
}

// routeMatcher reads a route's URL: a glob string, a RegExp or a predicate of the URL.
func (r *run) routeMatcher(v goja.Value, method string) func(string) bool {
	if f, ok := goja.AssertFunction(v); ok {
		return func(u string) bool {
			res, err := f(goja.Undefined(), r.urlObject(u))
			return err == nil && res.ToBoolean()
		}
	}
	m := r.urlMatcher(v, method, true)
	return m.matchesText
}

// routeKey and keyMatches let unroute find a route by the pattern it was made with.
func (r *run) routeKey(v goja.Value) string {
	if m, ok := r.regexpOf(v); ok {
		return "re:" + m.Re + "/" + m.Flags
	}
	return "s:" + v.String()
}

func (x *route) keyMatches(key string) bool { return x.key == key }

// urlObject is the URL a route predicate receives: the parts of WHATWG's URL a predicate
// reads, and toString.
func (r *run) urlObject(raw string) goja.Value {
	u, err := url.Parse(raw)
	if err != nil {
		return r.vm.ToValue(raw)
	}
	search := ""
	if u.RawQuery != "" {
		search = "?" + u.RawQuery
	}
	hash := ""
	if u.Fragment != "" {
		hash = "#" + u.EscapedFragment()
	}
	o := r.vm.NewObject()
	for k, v := range map[string]string{
		"href": raw, "protocol": u.Scheme + ":", "host": u.Host, "hostname": u.Hostname(), "port": u.Port(),
		"pathname": u.EscapedPath(), "search": search, "hash": hash, "origin": u.Scheme + "://" + u.Host,
	} {
		must(o.Set(k, v))
	}
	must(o.Set("toString", func(goja.FunctionCall) goja.Value { return r.vm.ToValue(raw) }))
	return o
}
