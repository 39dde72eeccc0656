package pwscript

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"
	"github.com/dop251/goja"
)

// pwCookie is a cookie as Playwright's context.cookies() and addCookies() spell it.
type pwCookie struct {
	Name     string  `json:"name"`
	Value    string  `json:"value"`
	URL      string  `json:"url,omitempty"`
	Domain   string  `json:"domain"`
	Path     string  `json:"path"`
	Expires  float64 `json:"expires"` // seconds since the epoch; -1: a session cookie
	HTTPOnly bool    `json:"httpOnly"`
	Secure   bool    `json:"secure"`
	SameSite string  `json:"sameSite"`
}

// contextObject is the test's context fixture: its browser context, fresh for the test.
func (r *run) contextObject(tab context.Context, bp *browserPage) *goja.Object {
	id := chromedp.FromContext(tab).BrowserContextID
	call := func(what string, fn func(ctx context.Context) (any, error)) goja.Value {
		return r.async("browserContext."+what, "pw:api", fn)
	}
	cookies := func(ctx context.Context, urls []string) ([]pwCookie, error) {
		res, err := chromedp.CallBrowser(ctx, storage.GetCookies, storage.GetCookiesParams{BrowserContextID: id})
		if err != nil {
			return nil, err
		}
		out := []pwCookie{}
		for _, c := range res.Cookies {
			if len(urls) > 0 && !cookieMatchesAny(c, urls) {
				continue
			}
			same := string(c.SameSite)
			if same == "" {
				same = "Lax"
			}
			out = append(out, pwCookie{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path, Expires: c.Expires,
				HTTPOnly: c.HTTPOnly, Secure: c.Secure, SameSite: same})
		}
		return out, nil
	}
	m := map[string]any{
		"cookies": func(c goja.FunctionCall) goja.Value {
			var urls []string
			switch v := c.Argument(0).Export().(type) {
			case string:
				urls = []string{v}
			case []any:
				for _, u := range v {
					urls = append(urls, fmt.Sprint(u))
				}
			}
			return call("cookies()", func(ctx context.Context) (any, error) {
				cs, err := cookies(ctx, urls)
				if err != nil {
					return nil, err
				}
				b, err := json.Marshal(cs)
				return jsonResult(b), err
			})
		},
		"addCookies": func(c goja.FunctionCall) goja.Value {
			raw, err := r.toJSON(c.Argument(0))
			var in []pwCookie
			if err == nil {
				err = json.Unmarshal(raw, &in)
			}
			if err != nil {
				panic(r.typeError("browserContext.addCookies: cookies: expected an array of { name, value, url | domain and path }"))
			}
			params := make([]*network.CookieParam, 0, len(in))
			for _, ck := range in {
				if ck.URL == "" && (ck.Domain == "" || ck.Path == "") {
					panic(r.typeError("browserContext.addCookies: cookie %q: set either url, or domain and path", ck.Name))
				}
				p := &network.CookieParam{Name: ck.Name, Value: ck.Value, URL: ck.URL, Domain: ck.Domain, Path: ck.Path,
					Secure: ck.Secure, HTTPOnly: ck.HTTPOnly, SameSite: network.CookieSameSite(ck.SameSite)}
				if ck.Expires > 0 {
					p.Expires = cdp.TimeSinceEpoch(ck.Expires)
				}
				params = append(params, p)
			}
			return call("addCookies()", func(ctx context.Context) (any, error) {
				_, err := chromedp.CallBrowser(ctx, storage.SetCookies, storage.SetCookiesParams{Cookies: params, BrowserContextID: id})
				return nil, err
			})
		},
		"clearCookies": func(c goja.FunctionCall) goja.Value {
			if o := r.argObject(c, 0, "browserContext.clearCookies"); o != nil && len(o.Keys()) > 0 {
				panic(r.notSupported("browserContext.clearCookies({ name, domain, path }) — clear them all"))
			}
			return call("clearCookies()", func(ctx context.Context) (any, error) {
				_, err := chromedp.CallBrowser(ctx, storage.ClearCookies, storage.ClearCookiesParams{BrowserContextID: id})
				return nil, err
			})
		},
		"setExtraHTTPHeaders": func(c goja.FunctionCall) goja.Value {
			var h map[string]string
			if err := r.vm.ExportTo(c.Argument(0), &h); err != nil {
				panic(r.typeError("browserContext.setExtraHTTPHeaders: headers: expected an object of strings"))
			}
			headers := network.Headers{}
			for k, v := range h {
				headers[k] = v
			}
			return call("setExtraHTTPHeaders()", func(ctx context.Context) (any, error) {
				if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
					return nil, err
				}
				_, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: headers})
				return nil, err
			})
		},
		"grantPermissions": func(c goja.FunctionCall) goja.Value {
			var names []string
			if err := r.vm.ExportTo(c.Argument(0), &names); err != nil {
				panic(r.typeError("browserContext.grantPermissions: permissions: expected an array of strings"))
			}
			origin := ""
			if o := r.argObject(c, 1, "browserContext.grantPermissions"); o != nil {
				if v := o.Get("origin"); v != nil && !goja.IsUndefined(v) {
					origin = v.String()
				}
			}
			return call("grantPermissions()", func(ctx context.Context) (any, error) {
				return nil, grantPermissions(ctx, names, origin)
			})
		},
		"clearPermissions": func(goja.FunctionCall) goja.Value {
			return call("clearPermissions()", func(ctx context.Context) (any, error) {
				_, err := chromedp.CallBrowser(ctx, browser.ResetPermissions, browser.ResetPermissionsParams{BrowserContextID: id})
				return nil, err
			})
		},
		"setGeolocation": func(c goja.FunctionCall) goja.Value {
			lat, lon, acc := numberMember(c.Argument(0), "latitude"), numberMember(c.Argument(0), "longitude"), numberMember(c.Argument(0), "accuracy")
			if lat != lat || lon != lon {
				panic(r.typeError("browserContext.setGeolocation: expected { latitude, longitude, accuracy? }"))
			}
			if acc != acc {
				acc = 0
			}
			return call("setGeolocation()", func(ctx context.Context) (any, error) {
				_, err := chromedp.Call(ctx, emulation.SetGeolocationOverride, emulation.SetGeolocationOverrideParams{Latitude: &lat, Longitude: &lon, Accuracy: &acc})
				return nil, err
			})
		},
		"setOffline": func(c goja.FunctionCall) goja.Value {
			offline := c.Argument(0).ToBoolean()
			return call(fmt.Sprintf("setOffline(%v)", offline), func(ctx context.Context) (any, error) {
				return nil, setOffline(ctx, offline)
			})
		},
		"storageState": func(c goja.FunctionCall) goja.Value {
			if o := r.argObject(c, 0, "browserContext.storageState"); o != nil {
				if v := o.Get("path"); v != nil && !goja.IsUndefined(v) {
					panic(r.notSupported("browserContext.storageState({ path }) — scripts have no file system; use the returned state"))
				}
			}
			return call("storageState()", func(ctx context.Context) (any, error) {
				cs, err := cookies(ctx, nil)
				if err != nil {
					return nil, err
				}
				origins, err := localStorageOf(ctx, bp.currentURL())
				if err != nil {
					return nil, err
				}
				b, err := json.Marshal(map[string]any{"cookies": cs, "origins": origins})
				return jsonResult(b), err
			})
		},
		"pages":         func(goja.FunctionCall) goja.Value { return r.vm.NewArray(r.pageObj) },
		"newCDPSession": r.newCDPSession,
	}
	return r.object("browserContext", m)
}

// localStorageOf is the storageState origins entry of the page's origin (the one origin
// whose localStorage a page can read), or none for a page of no web origin.
func localStorageOf(ctx context.Context, pageURL string) ([]any, error) {
	returnByValue := true
	u, err := url.Parse(pageURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return []any{}, nil
	}
	res, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{
		Expression:    `JSON.stringify(Object.keys(localStorage).map((name) => ({ name, value: localStorage.getItem(name) })))`,
		ReturnByValue: &returnByValue,
	})
	if err != nil {
		return nil, err
	}
	var items []map[string]string
	if res.Result != nil {
		var s string
		if json.Unmarshal(res.Result.Value, &s) == nil {
			_ = json.Unmarshal([]byte(s), &items)
		}
	}
	if items == nil {
		items = []map[string]string{}
	}
	return []any{map[string]any{"origin": u.Scheme + "://" + u.Host, "localStorage": items}}, nil
}

// cookieMatchesAny tells whether c would be sent to one of urls.
func cookieMatchesAny(c *network.Cookie, urls []string) bool {
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			continue
		}
		host, domain := u.Hostname(), strings.TrimPrefix(c.Domain, ".")
		if host != domain && !strings.HasSuffix(host, "."+domain) {
			continue
		}
		p := u.Path
		if p == "" {
			p = "/"
		}
		if !strings.HasPrefix(p, c.Path) || c.Secure && u.Scheme != "https" {
			continue
		}
		return true
	}
	return false
}
