package pwscript

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/dop251/goja"
)

// netLog keeps the requests of the page as CDP's Network domain reports them, so that the
// Request and Response objects of page.on('request'), waitForResponse and route can answer
// response(), failure(), redirectedFrom() and body(). Its methods are safe for concurrent
// use; the JS objects of a record are made and kept on the loop only.
type netLog struct {
	mu   sync.Mutex
	reqs map[network.RequestID]*netRequest
}

// maxNetRecords bounds the requests remembered: a page polling forever must not grow the
// agent's memory without bound. Past it the log starts again (older requests' response()
// then resolves to what was known).
const maxNetRecords = 5000

// netRequest is one request of the page (each hop of a redirect is one).
type netRequest struct {
	id             network.RequestID
	url, method    string
	headers        map[string]string
	postData       *string
	resourceType   string
	frameID        cdp.FrameID
	navigation     bool
	redirectedFrom *netRequest
	redirectedTo   *netRequest

	// Set as the request goes on; read under netLog.mu.
	response *netResponse
	failure  string
	done     chan struct{} // closed when the request finished or failed

	obj *goja.Object // the script's Request, made on the loop
}

// netResponse is the response of a request.
type netResponse struct {
	req        *netRequest
	url        string
	status     int64
	statusText string
	headers    map[string]string
	obj        *goja.Object // the script's Response, made on the loop
}

func newNetLog() *netLog { return &netLog{reqs: map[network.RequestID]*netRequest{}} }

func lowerHeaders(h network.Headers) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[strings.ToLower(k)] = fmt.Sprint(v)
	}
	return out
}

// sent records a request (or the next hop of a redirect); it returns the request and, for a
// redirect, the response of the hop before.
func (n *netLog) sent(ev *network.EventRequestWillBeSent) (req *netRequest, redirected *netResponse) {
	req = &netRequest{
		id: ev.RequestID, url: ev.Request.URL + ev.Request.URLFragment, method: ev.Request.Method,
		headers: lowerHeaders(ev.Request.Headers), resourceType: strings.ToLower(string(ev.Type)),
		frameID: ev.FrameID, navigation: ev.Type == network.ResourceTypeDocument && string(ev.RequestID) == string(ev.LoaderID),
		done: make(chan struct{}),
	}
	if ev.Request.HasPostData {
		var b strings.Builder
		for _, e := range ev.Request.PostDataEntries {
			b.Write(e.Bytes)
		}
		s := b.String()
		req.postData = &s
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.reqs) >= maxNetRecords {
		n.reqs = map[network.RequestID]*netRequest{}
	}
	if prev := n.reqs[ev.RequestID]; prev != nil && ev.RedirectResponse != nil {
		redirected = newNetResponse(prev, ev.RedirectResponse)
		prev.response = redirected
		prev.redirectedTo = req
		req.redirectedFrom = prev
		close(prev.done)
	}
	n.reqs[ev.RequestID] = req
	return req, redirected
}

func newNetResponse(req *netRequest, r *network.Response) *netResponse {
	return &netResponse{req: req, url: r.URL, status: r.Status, statusText: r.StatusText, headers: lowerHeaders(r.Headers)}
}

// received records a response.
func (n *netLog) received(ev *network.EventResponseReceived) *netResponse {
	n.mu.Lock()
	defer n.mu.Unlock()
	req := n.reqs[ev.RequestID]
	if req == nil {
		return nil
	}
	req.response = newNetResponse(req, ev.Response)
	return req.response
}

// ended records a request finishing (failure "") or failing.
func (n *netLog) ended(id network.RequestID, failure string) *netRequest {
	n.mu.Lock()
	defer n.mu.Unlock()
	req := n.reqs[id]
	if req == nil {
		return nil
	}
	select {
	case <-req.done:
		return nil
	default:
	}
	req.failure = failure
	close(req.done)
	return req
}

func (n *netLog) get(id network.RequestID) *netRequest {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.reqs[id]
}

// state reads what is known of req so far.
func (n *netLog) state(req *netRequest) (*netResponse, string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return req.response, req.failure
}

// body waits until the response's request finished and returns its body.
func (bp *browserPage) responseBody(ctx context.Context, resp *netResponse) ([]byte, error) {
	select {
	case <-resp.req.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if resp.req.redirectedTo != nil {
		return nil, errors.New("Response body is unavailable for redirect responses") //nolint:staticcheck // Playwright's message, word for word
	}
	res, err := chromedp.Call(ctx, network.GetResponseBody, network.GetResponseBodyParams{RequestID: resp.req.id})
	if err != nil {
		return nil, err
	}
	return res.Body, nil
}

// requestObject is the script's Request for req.
func (r *run) requestObject(req *netRequest) *goja.Object {
	if req == nil {
		return nil
	}
	if req.obj != nil {
		return req.obj
	}
	log := r.net.log
	req.obj = r.object("request", map[string]any{
		"url":          func(goja.FunctionCall) goja.Value { return r.vm.ToValue(req.url) },
		"method":       func(goja.FunctionCall) goja.Value { return r.vm.ToValue(req.method) },
		"headers":      func(goja.FunctionCall) goja.Value { return r.vm.ToValue(copyHeaders(req.headers)) },
		"allHeaders":   func(goja.FunctionCall) goja.Value { return r.resolved(r.vm.ToValue(copyHeaders(req.headers))) },
		"headerValue":  func(call goja.FunctionCall) goja.Value { return r.resolved(headerValue(r.vm, req.headers, call)) },
		"resourceType": func(goja.FunctionCall) goja.Value { return r.vm.ToValue(req.resourceType) },
		"postData": func(goja.FunctionCall) goja.Value {
			if req.postData == nil {
				return goja.Null()
			}
			return r.vm.ToValue(*req.postData)
		},
		"postDataJSON": func(goja.FunctionCall) goja.Value {
			if req.postData == nil {
				return goja.Null()
			}
			v, err := r.jsonParse(goja.Undefined(), r.vm.ToValue(*req.postData))
			if err != nil {
				panic(r.typeError("request.postDataJSON: POST data is not a valid JSON object: %s", *req.postData))
			}
			return v
		},
		"isNavigationRequest": func(goja.FunctionCall) goja.Value { return r.vm.ToValue(req.navigation) },
		"frame":               func(goja.FunctionCall) goja.Value { return r.frameObject(req.frameID) },
		"failure": func(goja.FunctionCall) goja.Value {
			if _, f := log.state(req); f != "" {
				return r.vm.ToValue(map[string]any{"errorText": f})
			}
			return goja.Null()
		},
		"redirectedFrom": func(goja.FunctionCall) goja.Value { return orNull(r.requestObject(req.redirectedFrom)) },
		"redirectedTo":   func(goja.FunctionCall) goja.Value { return orNull(r.requestObject(req.redirectedTo)) },
		"response": func(goja.FunctionCall) goja.Value {
			return r.async("request.response()", "pw:api", func(ctx context.Context) (any, error) {
				// The response is known when it arrives, or the request ends without one.
				for {
					if resp, f := log.state(req); resp != nil || f != "" {
						return jsResult(func() goja.Value { return orNull(r.responseObject(resp)) }), nil
					}
					select {
					case <-req.done:
						resp, _ := log.state(req)
						return jsResult(func() goja.Value { return orNull(r.responseObject(resp)) }), nil
					case <-ctx.Done():
						return nil, ctx.Err()
					case <-time.After(pollDelays[1]):
					}
				}
			})
		},
	})
	return req.obj
}

// responseObject is the script's Response for resp.
func (r *run) responseObject(resp *netResponse) *goja.Object {
	if resp == nil {
		return nil
	}
	if resp.obj != nil {
		return resp.obj
	}
	bp := r.browser
	body := func(method string, convert func([]byte) (any, error)) func(goja.FunctionCall) goja.Value {
		return func(goja.FunctionCall) goja.Value {
			return r.async("response."+method+"()", "pw:api", func(ctx context.Context) (any, error) {
				b, err := bp.responseBody(ctx, resp)
				if err != nil {
					return nil, pageError("response."+method, err)
				}
				return convert(b)
			})
		}
	}
	resp.obj = r.object("response", map[string]any{
		"url":    func(goja.FunctionCall) goja.Value { return r.vm.ToValue(resp.url) },
		"status": func(goja.FunctionCall) goja.Value { return r.vm.ToValue(resp.status) },
		"ok": func(goja.FunctionCall) goja.Value {
			return r.vm.ToValue(resp.status == 0 || resp.status >= 200 && resp.status <= 299)
		},
		"statusText":  func(goja.FunctionCall) goja.Value { return r.vm.ToValue(resp.statusText) },
		"headers":     func(goja.FunctionCall) goja.Value { return r.vm.ToValue(copyHeaders(resp.headers)) },
		"allHeaders":  func(goja.FunctionCall) goja.Value { return r.resolved(r.vm.ToValue(copyHeaders(resp.headers))) },
		"headerValue": func(call goja.FunctionCall) goja.Value { return r.resolved(headerValue(r.vm, resp.headers, call)) },
		"request":     func(goja.FunctionCall) goja.Value { return r.requestObject(resp.req) },
		"frame":       func(goja.FunctionCall) goja.Value { return r.frameObject(resp.req.frameID) },
		"body":        body("body", func(b []byte) (any, error) { return bytesResult(b), nil }),
		"text":        body("text", func(b []byte) (any, error) { return string(b), nil }),
		"json": body("json", func(b []byte) (any, error) {
			return jsResult(func() goja.Value {
				v, err := r.jsonParse(goja.Undefined(), r.vm.ToValue(string(b)))
				if err != nil {
					panic(err)
				}
				return v
			}), nil
		}),
		"finished": func(goja.FunctionCall) goja.Value {
			return r.async("response.finished()", "pw:api", func(ctx context.Context) (any, error) {
				select {
				case <-resp.req.done:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				if _, f := r.net.log.state(resp.req); f != "" {
					return nil, opErr(CauseNavigation, "response.finished: %s", f)
				}
				return jsonResult("null"), nil
			})
		},
	})
	return resp.obj
}

func copyHeaders(h map[string]string) map[string]any {
	out := make(map[string]any, len(h))
	for k, v := range h {
		out[k] = v
	}
	return out
}

func headerValue(vm *goja.Runtime, h map[string]string, call goja.FunctionCall) goja.Value {
	if v, ok := h[strings.ToLower(call.Argument(0).String())]; ok {
		return vm.ToValue(v)
	}
	return goja.Null()
}

// resolved is a promise already fulfilled with v (Playwright's async getters that need no
// round trip here).
func (r *run) resolved(v goja.Value) goja.Value {
	p, resolve, _ := r.vm.NewPromise()
	must(resolve(v))
	return r.vm.ToValue(p)
}

func orNull(o *goja.Object) goja.Value {
	if o == nil {
		return goja.Null()
	}
	return o
}

// navigationResponse is the Response of a navigation whose loader is id: the page's record
// of it (with body(), request()…), or what the main frame's state kept.
func (r *run) navigationResponse(id cdp.LoaderID) any {
	if req := r.net.log.get(network.RequestID(id)); req != nil {
		if resp, _ := r.net.log.state(req); resp != nil {
			return jsResult(func() goja.Value { return r.responseObject(resp) })
		}
	}
	return r.responseResult(r.browser.response(id))
}
