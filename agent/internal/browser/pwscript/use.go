package pwscript

import (
	"context"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/dop251/goja"

	"github.com/vantagehq/vantage/pkg/browserscript"
)

// contextOptions are the options of test.use({ … }) that shape a test's browser context and
// page (the honoured ones of browserscript.UseOption), merged from the file's level down to
// the test's describe block. The zero value is Playwright's default context.
type contextOptions struct {
	viewport          *[2]int64 // nil: the run's default
	deviceScaleFactor float64
	isMobile          bool
	hasTouch          bool
	userAgent         string
	locale            string
	timezoneID        string
	media             []*emulation.MediaFeature // colorScheme, reducedMotion, forcedColors, contrast
	extraHeaders      network.Headers
	geolocation       *emulation.SetGeolocationOverrideParams
	permissions       []string
	scriptsDisabled   bool
	offline           bool
	bypassCSP         bool
	baseURL           string
	actionTimeout     *time.Duration
	navigationTimeout *time.Duration
	testIDAttribute   string
}

// use handles test.use({ … }) in a describe block or at the top level of the file: options
// Playwright Test knows are honoured, ignored or refused (browserscript.UseOption); any other
// name is refused.
func (r *run) use(call goja.FunctionCall) goja.Value {
	if r.declaring == nil {
		panic(r.typeError("test.use() can only be called at the top level of the file or in a test.describe() callback"))
	}
	o := r.argObject(call, 0, "test.use")
	if o == nil {
		panic(r.typeError("test.use: options: expected an object, got %s", describeType(call.Argument(0))))
	}
	for _, k := range o.Keys() {
		kind, refusal := browserscript.UseOption(k)
		switch kind {
		case browserscript.UseRefused:
			panic(r.throwable(&scriptError{message: refusal.Message(), where: r.callSite(), cause: CauseScript}))
		case browserscript.UseUnknown:
			if r.fixtureNames[k] {
				continue // an option fixture of test.extend
			}
			panic(r.notSupported(fmt.Sprintf("test.use({ %s }) — no option of Playwright Test has that name", k)))
		}
		if k == "browserName" || k == "defaultBrowserType" {
			if v := o.Get(k); !goja.IsUndefined(v) && v.String() != "chromium" {
				panic(r.notSupported(fmt.Sprintf("test.use({ %s: %s }) — checks run in Chromium only", k, jsQuote(v.String()))))
			}
		}
	}
	if _, err := r.contextOptions(append(r.declaring.useChain(), o)); err != nil {
		panic(r.typeError("test.use: %v", err))
	}
	r.declaring.use = append(r.declaring.use, o)
	return goja.Undefined()
}

// useChain is the test.use objects that apply in s, outermost first.
func (s *suite) useChain() []*goja.Object {
	if s == nil {
		return nil
	}
	return append(s.parent.useChain(), s.use...)
}

// contextOptions merges the test.use objects (a later one wins, option by option) and reads
// them; an option of the wrong type is an error naming it.
func (r *run) contextOptions(chain []*goja.Object) (*contextOptions, error) {
	merged := map[string]goja.Value{}
	for _, o := range chain {
		for _, k := range o.Keys() {
			merged[k] = o.Get(k)
		}
	}
	co := &contextOptions{}
	media := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(merged)) {
		v := merged[k]
		if goja.IsUndefined(v) {
			continue
		}
		var err error
		switch k {
		case "viewport":
			if goja.IsNull(v) {
				continue // no emulation in Playwright; the run's default size here
			}
			w, h := numberMember(v, "width"), numberMember(v, "height")
			if w <= 0 || h <= 0 {
				err = fmt.Errorf("expected { width, height } of positive numbers")
			}
			co.viewport = &[2]int64{int64(w), int64(h)}
		case "deviceScaleFactor":
			co.deviceScaleFactor = v.ToFloat()
		case "isMobile":
			co.isMobile = v.ToBoolean()
		case "hasTouch":
			co.hasTouch = v.ToBoolean()
		case "userAgent":
			co.userAgent, err = exportString(v)
		case "locale":
			co.locale, err = exportString(v)
		case "timezoneId":
			co.timezoneID, err = exportString(v)
		case "colorScheme", "reducedMotion", "forcedColors", "contrast":
			if !goja.IsNull(v) {
				media[map[string]string{"colorScheme": "prefers-color-scheme", "reducedMotion": "prefers-reduced-motion",
					"forcedColors": "forced-colors", "contrast": "prefers-contrast"}[k]] = v.String()
			}
		case "extraHTTPHeaders":
			var h map[string]string
			if err = r.vm.ExportTo(v, &h); err == nil {
				co.extraHeaders = network.Headers{}
				for name, val := range h {
					co.extraHeaders[name] = val
				}
			}
		case "geolocation":
			lat, lon, acc := numberMember(v, "latitude"), numberMember(v, "longitude"), numberMember(v, "accuracy")
			if lat != lat || lon != lon { // NaN: missing
				err = fmt.Errorf("expected { latitude, longitude, accuracy? }")
			}
			if acc != acc {
				acc = 0
			}
			co.geolocation = &emulation.SetGeolocationOverrideParams{Latitude: &lat, Longitude: &lon, Accuracy: &acc}
		case "permissions":
			err = r.vm.ExportTo(v, &co.permissions)
		case "javaScriptEnabled":
			co.scriptsDisabled = !v.ToBoolean()
		case "offline":
			co.offline = v.ToBoolean()
		case "bypassCSP":
			co.bypassCSP = v.ToBoolean()
		case "baseURL":
			if co.baseURL, err = exportString(v); err == nil {
				if u, perr := url.Parse(co.baseURL); perr != nil || !u.IsAbs() {
					err = fmt.Errorf("expected an absolute URL")
				}
			}
		case "actionTimeout", "navigationTimeout":
			d := time.Duration(v.ToFloat() * float64(time.Millisecond))
			if k == "actionTimeout" {
				co.actionTimeout = &d
			} else {
				co.navigationTimeout = &d
			}
		case "testIdAttribute":
			co.testIDAttribute, err = exportString(v)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", k, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(media)) {
		co.media = append(co.media, &emulation.MediaFeature{Name: name, Value: media[name]})
	}
	return co, nil
}

// numberMember is v[name] as a number: NaN when v is no object or the member no number.
func numberMember(v goja.Value, name string) float64 {
	o, ok := v.(*goja.Object)
	if !ok {
		return math.NaN()
	}
	m := o.Get(name)
	if m == nil || goja.IsUndefined(m) || goja.IsNull(m) {
		return math.NaN()
	}
	return m.ToFloat()
}

func exportString(v goja.Value) (string, error) {
	s, ok := v.Export().(string)
	if !ok {
		return "", fmt.Errorf("expected a string, got %s", describeType(v))
	}
	return s, nil
}

// apply sets the options on the test's tab (ctx), in its browser context.
func (co *contextOptions) apply(ctx context.Context, defaultUA string) error {
	ua := co.userAgent
	if ua == "" {
		ua = defaultUA
	}
	if ua == "" && co.locale != "" {
		// Accept-Language comes with the User-Agent override: keep the browser's own.
		v, err := chromedp.CallBrowser(ctx, browser.GetVersion, cdp.Empty{})
		if err != nil {
			return fmt.Errorf("read the User-Agent: %w", err)
		}
		ua = v.UserAgent
	}
	calls := []func() error{}
	add := func(f func() error) { calls = append(calls, f) }
	if ua != "" {
		add(func() error {
			_, err := chromedp.Call(ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua, AcceptLanguage: co.locale})
			return err
		})
	}
	if co.locale != "" {
		add(func() error {
			_, err := chromedp.Call(ctx, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: co.locale})
			return err
		})
	}
	if co.timezoneID != "" {
		add(func() error {
			_, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: co.timezoneID})
			return err
		})
	}
	if co.hasTouch {
		add(func() error {
			_, err := chromedp.Call(ctx, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: true, MaxTouchPoints: 5})
			return err
		})
	}
	if len(co.media) > 0 {
		add(func() error {
			_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: co.media})
			return err
		})
	}
	if len(co.extraHeaders) > 0 || co.offline {
		add(func() error {
			_, err := chromedp.Call(ctx, network.Enable, network.EnableParams{})
			return err
		})
	}
	if len(co.extraHeaders) > 0 {
		add(func() error {
			_, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: co.extraHeaders})
			return err
		})
	}
	if co.offline {
		add(func() error { return setOffline(ctx, true) })
	}
	if co.geolocation != nil {
		add(func() error {
			_, err := chromedp.Call(ctx, emulation.SetGeolocationOverride, *co.geolocation)
			return err
		})
	}
	if co.scriptsDisabled {
		add(func() error {
			_, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
			return err
		})
	}
	if co.bypassCSP {
		add(func() error {
			_, err := chromedp.Call(ctx, page.SetBypassCSP, page.SetBypassCSPParams{Enabled: true})
			return err
		})
	}
	if len(co.permissions) > 0 {
		add(func() error { return grantPermissions(ctx, co.permissions, "") })
	}
	for _, f := range calls {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// grantPermissions grants the named permissions (Playwright's names are the web's:
// "geolocation", "clipboard-read"…) to origin, or to every origin, in the tab's browser
// context.
func grantPermissions(ctx context.Context, names []string, origin string) error {
	id := chromedp.FromContext(ctx).BrowserContextID
	for _, name := range names {
		d := &browser.PermissionDescriptor{Name: name}
		if name == "midi-sysex" {
			d = &browser.PermissionDescriptor{Name: "midi", Sysex: true}
		}
		if _, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: d, Setting: browser.PermissionSettingGranted, Origin: origin, BrowserContextID: id,
		}); err != nil {
			return fmt.Errorf("grant the permission %q: %w", name, err)
		}
	}
	return nil
}

// resolveURL resolves a relative URL of page.goto against baseURL, as new URL(url, baseURL)
// does in Playwright.
func resolveURL(target, baseURL string) string {
	if baseURL == "" {
		return target
	}
	base, err := url.Parse(baseURL)
	if err != nil {
		return target
	}
	ref, err := url.Parse(target)
	if err != nil || ref.IsAbs() {
		return target
	}
	return base.ResolveReference(ref).String()
}

// setOffline emulates the loss of the network for the tab's requests, or ends it.
func setOffline(ctx context.Context, offline bool) error {
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		return err
	}
	_, err := chromedp.Call(ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
		MatchedNetworkConditions: []*network.Conditions{{Offline: offline, DownloadThroughput: -1, UploadThroughput: -1}},
	})
	return err
}
