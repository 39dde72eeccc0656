package pwscript

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// browserJar is page.request's cookie jar: the cookies of the page's browser context, read
// and written over CDP (Network.getCookies, Network.setCookie), so that page.request and the
// page share a login as they do in Playwright.
type browserJar struct {
	tab context.Context
}

var _ http.CookieJar = browserJar{}

// cookieCallTimeout bounds one CDP cookie call; the jar's interface has no context of its own.
const cookieCallTimeout = 5 * time.Second

func (j browserJar) Cookies(u *url.URL) []*http.Cookie {
	ctx, cancel := context.WithTimeout(j.tab, cookieCallTimeout)
	defer cancel()
	got, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{u.String()}})
	if err != nil {
		return nil // the call goes without cookies; a lost tab shows in the page's own calls
	}
	out := make([]*http.Cookie, 0, len(got.Cookies))
	for _, c := range got.Cookies {
		// Cookies the request sends: only name and value go on the wire.
		out = append(out, &http.Cookie{Name: c.Name, Value: c.Value}) //nolint:gosec // G124: a request's Cookie header has no attributes
	}
	return out
}

func (j browserJar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	ctx, cancel := context.WithTimeout(j.tab, cookieCallTimeout)
	defer cancel()
	for _, c := range cookies {
		p := network.SetCookieParams{Name: c.Name, Value: c.Value, URL: u.String(), Domain: c.Domain, Path: c.Path,
			Secure: &c.Secure, HTTPOnly: &c.HttpOnly}
		switch {
		case c.MaxAge < 0:
			p.Expires = epoch(time.Unix(1, 0))
		case c.MaxAge > 0:
			p.Expires = epoch(time.Now().Add(time.Duration(c.MaxAge) * time.Second))
		case !c.Expires.IsZero():
			p.Expires = epoch(c.Expires)
		}
		switch c.SameSite {
		case http.SameSiteStrictMode:
			p.SameSite = network.CookieSameSiteStrict
		case http.SameSiteLaxMode:
			p.SameSite = network.CookieSameSiteLax
		case http.SameSiteNoneMode:
			p.SameSite = network.CookieSameSiteNone
		}
		if _, err := chromedp.Call(ctx, network.SetCookie, p); err != nil {
			return
		}
	}
}

func epoch(t time.Time) cdp.TimeSinceEpoch {
	return cdp.TimeSinceEpoch(float64(t.UnixMilli()) / 1000)
}
