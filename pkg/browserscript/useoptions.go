package browserscript

// UseKind is what the runtime does with an option of test.use({ … }).
type UseKind int

const (
	// UseUnknown is no option of Playwright Test: a fixture of the file's own (test.extend)
	// or a mistake; the runtime decides.
	UseUnknown UseKind = iota
	// UseHonoured options shape the test's browser context or its timeouts.
	UseHonoured
	// UseIgnored options change nothing in a check: how Playwright launches or records its
	// browser (a check runs in the agent's headless Chromium and records its own result).
	UseIgnored
	// UseRefused options cannot be honoured; a script that sets one is refused.
	UseRefused
)

// useOptions classifies the options of Playwright Test's TestOptions and WorkerOptions
// (PlaywrightTestOptions, PlaywrightWorkerOptions) as a browser check treats them. The why of
// a refused option is its message.
var useOptions = map[string]struct {
	kind UseKind
	why  string
}{
	// Honoured: applied to the test's fresh browser context over CDP.
	"viewport": {kind: UseHonoured}, "deviceScaleFactor": {kind: UseHonoured}, "isMobile": {kind: UseHonoured},
	"hasTouch": {kind: UseHonoured}, "userAgent": {kind: UseHonoured}, "locale": {kind: UseHonoured},
	"timezoneId": {kind: UseHonoured}, "colorScheme": {kind: UseHonoured}, "reducedMotion": {kind: UseHonoured},
	"forcedColors": {kind: UseHonoured}, "contrast": {kind: UseHonoured}, "extraHTTPHeaders": {kind: UseHonoured},
	"geolocation": {kind: UseHonoured}, "permissions": {kind: UseHonoured}, "javaScriptEnabled": {kind: UseHonoured},
	"offline": {kind: UseHonoured}, "bypassCSP": {kind: UseHonoured}, "baseURL": {kind: UseHonoured},
	"actionTimeout": {kind: UseHonoured}, "navigationTimeout": {kind: UseHonoured}, "testIdAttribute": {kind: UseHonoured},
	// browserName and defaultBrowserType are honoured when they say chromium (the runtime
	// refuses any other browser).
	"browserName": {kind: UseHonoured}, "defaultBrowserType": {kind: UseHonoured},

	// Ignored: how Playwright launches, connects to or records the browser.
	"headless": {kind: UseIgnored}, "channel": {kind: UseIgnored}, "launchOptions": {kind: UseIgnored},
	"connectOptions": {kind: UseIgnored}, "screenshot": {kind: UseIgnored}, "trace": {kind: UseIgnored},
	"video": {kind: UseIgnored}, "acceptDownloads": {kind: UseIgnored}, "serviceWorkers": {kind: UseIgnored},

	// Refused.
	"httpCredentials":    {kind: UseRefused, why: "HTTP authentication is not built; set an Authorization header with extraHTTPHeaders"},
	"ignoreHTTPSErrors":  {kind: UseRefused, why: "a check's browser always verifies certificates"},
	"clientCertificates": {kind: UseRefused, why: "checks hold no client certificates"},
	"proxy":              {kind: UseRefused, why: "a check's browser reaches the network through the agent's outbound policy only"},
	"storageState":       {kind: UseRefused, why: "checks have no file system; add cookies with context.addCookies()"},
	"contextOptions":     {kind: UseRefused, why: "set the options themselves in test.use()"},
}

// UseOption tells what becomes of the option name of test.use, and for a refused one, its
// refusal.
func UseOption(name string) (UseKind, Refusal) {
	o, ok := useOptions[name]
	if !ok {
		return UseUnknown, Refusal{}
	}
	return o.kind, Refusal{Object: "test.use({ " + name + " })", Why: o.why}
}
