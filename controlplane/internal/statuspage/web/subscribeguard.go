package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/ratelimit"
)

// The subscribe form sends an e-mail to whatever address it is given, so it is protected
// against being driven from elsewhere (CSRF: a signed form token and the browser's Origin) and
// against bulk use (rate limits per page and client address, and per page).

// Defaults of the subscribe limits (Config).
const (
	defaultSubscribesPerAddress = 3           // burst per page and client address
	defaultSubscribeRefill      = time.Minute // then one more a minute
	defaultSubscribesPerPage    = 30          // burst per page, every address together
	defaultSubscribePageRefill  = 10 * time.Second
	// subscribeTokenTTL is how long a rendered form stays valid.
	subscribeTokenTTL = 24 * time.Hour
)

// newSubscribeLimits are the limits of subscribe requests (pageLimits).
func newSubscribeLimits(lim ratelimit.Limiter, o Config) pageLimits {
	return pageLimits{lim: lim,
		perAddress: ratelimit.Rule{Name: "statuspage_subscribe_address", Every: o.SubscribeAddressRefill,
			Burst: o.SubscribesPerAddress, OnError: ratelimit.FailClosed},
		perPage: ratelimit.Rule{Name: "statuspage_subscribe_page", Every: o.SubscribePageRefill,
			Burst: o.SubscribesPerPage, OnError: ratelimit.FailClosed}}
}

// subscribeToken is the form's token for page: when it was issued, and a MAC of that time and
// the page under the cookie key. It is not tied to a visitor, because public pages are cached
// and shared; it proves the form came from this page recently, and together with the Origin
// check it keeps other sites from submitting it through their visitors' browsers.
func (h *Handler) subscribeToken(page string, now time.Time) string {
	issued := strconv.FormatInt(now.Unix(), 10)
	return issued + "." + base64.RawURLEncoding.EncodeToString(h.subscribeMAC(page, issued))
}

func (h *Handler) subscribeMAC(page, issued string) []byte {
	m := hmac.New(sha256.New, h.cfg.CookieKey)
	m.Write([]byte("subscribe v1|" + page + "|" + issued))
	return m.Sum(nil)
}

// validSubscribeToken reports whether tok is a token of page issued within subscribeTokenTTL.
func (h *Handler) validSubscribeToken(page, tok string, now time.Time) bool {
	issued, macS, ok := strings.Cut(tok, ".")
	if !ok {
		return false
	}
	at, err := strconv.ParseInt(issued, 10, 64)
	if err != nil {
		return false
	}
	age := now.Sub(time.Unix(at, 0))
	if age < -time.Minute || age > subscribeTokenTTL {
		return false
	}
	mac, err := base64.RawURLEncoding.DecodeString(macS)
	return err == nil && hmac.Equal(mac, h.subscribeMAC(page, issued))
}

// sameOrigin reports whether a form POST comes from a page of this host: browsers send Origin
// (and Sec-Fetch-Site) with every POST; a request without them (not a browser) passes on to
// the token check.
func sameOrigin(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}
