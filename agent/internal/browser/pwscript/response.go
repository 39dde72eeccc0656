package pwscript

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/dop251/goja"
)

// apiResponse is a response of the request fixture, body read in full (within the cap).
type apiResponse struct {
	url        string
	status     int
	statusText string
	headers    [][2]string // as received, names lower-cased, in order
	body       []byte
	method     string
	disposed   bool
}

func newAPIResponse(resp *http.Response, body []byte) *apiResponse {
	a := &apiResponse{
		url: resp.Request.URL.String(), status: resp.StatusCode, body: body, method: resp.Request.Method,
		statusText: strings.TrimSpace(strings.TrimPrefix(resp.Status, fmt.Sprint(resp.StatusCode))),
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range resp.Header {
			if !yield(k) {
				return
			}
		}
	}) {
		for _, v := range resp.Header[name] {
			a.headers = append(a.headers, [2]string{strings.ToLower(name), v})
		}
	}
	return a
}

// headerValue joins the values of name as Playwright does: set-cookie by newlines, the others
// by ", "; ok is false when there is none.
func (a *apiResponse) headerValue(name string) (string, bool) {
	name = strings.ToLower(name)
	var vs []string
	for _, h := range a.headers {
		if h[0] == name {
			vs = append(vs, h[1])
		}
	}
	if len(vs) == 0 {
		return "", false
	}
	sep := ", "
	if name == "set-cookie" {
		sep = "\n"
	}
	return strings.Join(vs, sep), true
}

func (a *apiResponse) ok() bool { return a.status >= 200 && a.status <= 299 }

// isText reports whether the body is text, to quote in failure messages.
func (a *apiResponse) isText() bool {
	ct, _ := a.headerValue("content-type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json") ||
		mt == "application/xml" || strings.HasSuffix(mt, "+xml") || mt == "application/javascript" ||
		mt == "application/x-www-form-urlencoded"
}

// textForMessage is "\nResponse text:\n<the first 1000 characters>" for a text body, as
// Playwright appends to failOnStatusCode's and toBeOK's messages.
func (a *apiResponse) textForMessage() string {
	if !a.isText() || a.disposed {
		return ""
	}
	return "\nResponse text:\n" + truncate(string(a.body), 1000)
}

// apiResponseObject builds the script's APIResponse.
func (r *run) apiResponseObject(a *apiResponse) goja.Value {
	resolved := func(v func() (goja.Value, error)) goja.Value {
		p, resolve, reject := r.vm.NewPromise()
		if val, err := v(); err != nil {
			var ex *goja.Exception
			if errors.As(err, &ex) {
				must(reject(ex.Value()))
			} else if je, ok := err.(*jsError); ok {
				must(reject(je.obj))
			} else {
				must(reject(r.vm.ToValue(err.Error())))
			}
		} else {
			must(resolve(val))
		}
		return r.vm.ToValue(p)
	}
	disposedError := func(fn string) error {
		return &jsError{r.throwable(&scriptError{message: "apiResponse." + fn + ": Response has been disposed", where: r.callSite(), cause: CauseScript})}
	}
	bodyOf := func(fn string, as func([]byte) (goja.Value, error)) func(goja.FunctionCall) goja.Value {
		return func(goja.FunctionCall) goja.Value {
			return resolved(func() (goja.Value, error) {
				if a.disposed {
					return nil, disposedError(fn)
				}
				return as(a.body)
			})
		}
	}
	m := map[string]any{
		"url":        func(goja.FunctionCall) goja.Value { return r.vm.ToValue(a.url) },
		"status":     func(goja.FunctionCall) goja.Value { return r.vm.ToValue(a.status) },
		"statusText": func(goja.FunctionCall) goja.Value { return r.vm.ToValue(a.statusText) },
		"ok":         func(goja.FunctionCall) goja.Value { return r.vm.ToValue(a.ok()) },
		"headers": func(goja.FunctionCall) goja.Value {
			o := r.vm.NewObject()
			for _, h := range a.headers {
				if o.Get(h[0]) == nil {
					v, _ := a.headerValue(h[0])
					must(o.Set(h[0], v))
				}
			}
			return o
		},
		"headersArray": func(goja.FunctionCall) goja.Value {
			out := make([]any, len(a.headers))
			for i, h := range a.headers {
				o := r.vm.NewObject()
				must(o.Set("name", h[0]))
				must(o.Set("value", h[1]))
				out[i] = o
			}
			return r.vm.NewArray(out...)
		},
		"headerValue": func(call goja.FunctionCall) goja.Value {
			name := r.argString(call, 0, "apiResponse.headerValue", "name")
			return resolved(func() (goja.Value, error) {
				if v, ok := a.headerValue(name); ok {
					return r.vm.ToValue(v), nil
				}
				return goja.Null(), nil
			})
		},
		"body": bodyOf("body", func(b []byte) (goja.Value, error) { return r.toJS(bytesResult(b)), nil }),
		"text": bodyOf("text", func(b []byte) (goja.Value, error) { return r.vm.ToValue(string(b)), nil }),
		"json": bodyOf("json", func(b []byte) (goja.Value, error) {
			return r.jsonParse(goja.Undefined(), r.vm.ToValue(string(b)))
		}),
		"dispose": func(goja.FunctionCall) goja.Value {
			a.disposed = true
			a.body = nil
			return resolved(func() (goja.Value, error) { return goja.Undefined(), nil })
		},
	}
	o := r.object("apiResponse", m)
	r.requests().responses[o] = a
	return o
}

// addResponseMatchers adds expect(response).toBeOK(), with Playwright's message: the hint,
// the call, and the response's text when it is text.
func (r *run) addResponseMatchers(m map[string]any, a *apiResponse, custom string, negated bool) {
	m["toBeOK"] = func(goja.FunctionCall) goja.Value {
		p, resolve, reject := r.vm.NewPromise()
		not := ""
		if negated {
			not = "not."
		}
		title := fmt.Sprintf("expect(response).%stoBeOK()", not)
		where := r.callSite()
		var step *stepRec
		if r.cur != nil {
			step = r.beginStep(r.cur, title, "expect", where)
		}
		if a.ok() != negated {
			r.endStep(step, "")
			must(resolve(goja.Undefined()))
			return r.vm.ToValue(p)
		}
		msg := title
		if custom != "" {
			msg = custom + "\n\n" + msg
		}
		msg += fmt.Sprintf("\n\nCall log:\n  - → %s %s\n  - ← %d %s", a.method, a.url, a.status, a.statusText)
		msg += a.textForMessage()
		r.endStep(step, msg)
		se := &scriptError{message: msg, where: where, cause: CauseAssertion}
		if step != nil {
			se.step = step.parent // the failure's path is the test.step the assertion was made in
		}
		must(reject(r.throwable(se)))
		return r.vm.ToValue(p)
	}
}

// jsError carries an error object made for the script through a Go error return.
type jsError struct{ obj *goja.Object }

func (e *jsError) Error() string { return e.obj.String() }
