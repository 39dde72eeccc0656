// Package web serves the public status pages as server-rendered HTML: the page itself (overall
// banner, components by group with 90-day uptime bars, active incidents with their timeline,
// scheduled maintenance, recent history, a subscribe form), the incident history, an Atom feed
// of incidents, and the password form of protected pages. A page is served at
// /status/{subdomain}/…, and at /… when the request's Host is {subdomain}.{StatusDomain} or the
// page's custom domain. Templates and CSS are embedded; nothing is loaded from elsewhere.
package web

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/ratelimit"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Store is what the public pages read and write; *statuspage.Service implements it.
type Store interface {
	PublicStatusPage(ctx context.Context, subdomain, customDomain string) (statuspage.PublicPageAccess, error)
	LoadPublicStatusPage(ctx context.Context, a statuspage.PublicPageAccess, q statuspage.PublicPageQuery) (statuspage.PublicPage, error)
	CreateSubscriber(ctx context.Context, actor store.Actor, orgID, pageID uuid.UUID, in store.NewSubscriber) (statuspage.Subscriber, error)
}

var _ Store = (*statuspage.Service)(nil)

// Config holds the handler's settings. Zero values take the documented defaults.
type Config struct {
	// StatusDomain: requests whose Host is {subdomain}.{StatusDomain} serve that page at the
	// root. Default "": pages are served by path and custom domain only.
	StatusDomain string
	// APIHost is the host name the API is served at (the host of VANTAGE_PUBLIC_URL). When
	// set, Route claims requests for any other host name as a custom domain. Default "": only
	// /status/ paths and {subdomain}.{StatusDomain} hosts are claimed.
	APIHost string
	// CookieKey signs the cookie a page's password unlocks (required, at least 32 bytes; derive
	// it from the control plane's secret with DeriveCookieKey).
	CookieKey []byte
	// CacheMaxAge is the max-age of public pages. Default 30s.
	CacheMaxAge time.Duration
	// UptimeDays is the length of the uptime bars. Default 90.
	UptimeDays int
	// HistoryDays is how far back the page's "Past incidents" reaches. Default 14.
	HistoryDays int
	// CacheTTL is how long a rendered public (not private) page is reused. Default 5s;
	// negative disables the cache.
	CacheTTL time.Duration
	// PasswordAttemptsPerAddress is how many password attempts one client address may make on
	// one page at once; then one more every PasswordAddressRefill. Defaults 5 and 12s. More is
	// answered 429 with Retry-After.
	PasswordAttemptsPerAddress int
	PasswordAddressRefill      time.Duration
	// PasswordAttemptsPerPage bounds the attempts on one page from every address together;
	// then one more every PasswordPageRefill. Defaults 60 and 1s.
	PasswordAttemptsPerPage int
	PasswordPageRefill      time.Duration
	// SubscribesPerAddress is how many subscribe requests one client address may send to one
	// page at once; then one more every SubscribeAddressRefill. Defaults 3 and 1m.
	// SubscribesPerPage bounds every address together; then one more every
	// SubscribePageRefill. Defaults 30 and 10s. More is answered 429 with Retry-After.
	SubscribesPerAddress   int
	SubscribeAddressRefill time.Duration
	SubscribesPerPage      int
	SubscribePageRefill    time.Duration
	// HashSlots is how many password hashes run at once, in all (one per page at most).
	// Default: the number of CPUs, at least 2.
	HashSlots int
}

// Deps are what the handler works with.
type Deps struct {
	Store Store // required
	// Limiter holds the password and subscribe limits' buckets, shared by every replica
	// (required).
	Limiter ratelimit.Limiter
	// Logger logs failed requests (component statuspage_web). Default: discarded.
	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// ClientIP returns the client address of a request, as the router sees it (behind trusted
	// proxies). Default: the host of RemoteAddr.
	ClientIP func(r *http.Request) string
	// Extra, if set, serves the paths of a page this handler does not know (for example
	// /status/{subdomain}/confirm). Requests to a status or custom domain reach it rewritten
	// to that path form (/confirm on acme.{StatusDomain} → /status/acme/confirm). Default: 404.
	Extra http.Handler
}

// Handler serves the public status pages.
type Handler struct {
	st       Store
	cfg      Config
	log      *slog.Logger
	now      func() time.Time
	clientIP func(r *http.Request) string
	others   http.Handler // nil: 404
	tpl      *templates
	slots    *fairSlots // concurrent password checks, fair between pages
	attempts pageLimits // password attempts per page and address
	subs     pageLimits // subscriptions per page and address
	gzips    sync.Pool  // *gzip.Writer
	cache    pageCache
}

// NewHandler returns the handler of the public pages. A missing store or a CookieKey shorter
// than 32 bytes is an error.
func NewHandler(cfg Config, deps Deps) (*Handler, error) {
	if deps.Store == nil || deps.Limiter == nil {
		return nil, errors.New("statuspage/web: a store and a limiter are required")
	}
	if len(cfg.CookieKey) < 32 {
		return nil, errors.New("statuspage/web: CookieKey must be at least 32 bytes")
	}
	if deps.ClientIP == nil {
		deps.ClientIP = remoteIP
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.CacheMaxAge <= 0 {
		cfg.CacheMaxAge = 30 * time.Second
	}
	if cfg.UptimeDays <= 0 {
		cfg.UptimeDays = 90
	}
	if cfg.HistoryDays <= 0 {
		cfg.HistoryDays = 14
	}
	if cfg.CacheTTL == 0 {
		cfg.CacheTTL = 5 * time.Second
	}
	if cfg.PasswordAttemptsPerAddress <= 0 {
		cfg.PasswordAttemptsPerAddress = defaultAttemptsPerAddress
	}
	if cfg.PasswordAddressRefill <= 0 {
		cfg.PasswordAddressRefill = defaultAddressRefill
	}
	if cfg.PasswordAttemptsPerPage <= 0 {
		cfg.PasswordAttemptsPerPage = defaultAttemptsPerPage
	}
	if cfg.PasswordPageRefill <= 0 {
		cfg.PasswordPageRefill = defaultPageRefill
	}
	if cfg.SubscribesPerAddress <= 0 {
		cfg.SubscribesPerAddress = defaultSubscribesPerAddress
	}
	if cfg.SubscribeAddressRefill <= 0 {
		cfg.SubscribeAddressRefill = defaultSubscribeRefill
	}
	if cfg.SubscribesPerPage <= 0 {
		cfg.SubscribesPerPage = defaultSubscribesPerPage
	}
	if cfg.SubscribePageRefill <= 0 {
		cfg.SubscribePageRefill = defaultSubscribePageRefill
	}
	cfg.StatusDomain = strings.ToLower(strings.Trim(cfg.StatusDomain, "."))
	cfg.APIHost = strings.ToLower(strings.Trim(cfg.APIHost, "."))
	return &Handler{st: deps.Store, cfg: cfg, log: deps.Logger.With("component", "statuspage_web"), now: deps.Now,
		clientIP: deps.ClientIP, others: deps.Extra,
		tpl: mustTemplates(), slots: newFairSlots(cfg.HashSlots), attempts: newAttemptLimits(deps.Limiter, cfg), subs: newSubscribeLimits(deps.Limiter, cfg),
		cache: pageCache{ttl: cfg.CacheTTL, m: map[string]cachedPage{}}}, nil
}

// remoteIP is the host part of RemoteAddr.
func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// request is one request to a page: how the page was addressed and the rest of the path.
type request struct {
	w         http.ResponseWriter
	r         *http.Request
	subdomain string // the page's subdomain, or "" when addressed by custom domain
	host      string // the custom domain, when subdomain is ""
	base      string // path prefix of the page's links: "/status/{subdomain}" or ""
	rest      string // path below base: "", "/", "/history", ...
}

// Route reports whether a request is addressed to the public pages: a /status/{subdomain}
// path, a {subdomain}.{StatusDomain} Host, or (when APIHost is set) a Host name that is
// neither the API's, the status domain itself nor an IP address, i.e. a custom domain. The API
// asks it about requests none of its routes match (api.Deps.Public).
func (h *Handler) Route(r *http.Request) bool {
	if strings.HasPrefix(r.URL.Path, "/status/") {
		return true
	}
	host := hostOf(r)
	if _, ok := h.subdomainOfHost(host); ok {
		return true
	}
	if h.cfg.APIHost == "" || host == "" || host == h.cfg.APIHost || host == h.cfg.StatusDomain {
		return false
	}
	_, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err != nil
}

// hostOf is the request's host name, lower case, without port.
func hostOf(r *http.Request) string {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// subdomainOfHost returns the subdomain of a host {subdomain}.{StatusDomain}.
func (h *Handler) subdomainOfHost(host string) (string, bool) {
	d := h.cfg.StatusDomain
	if d == "" || !strings.HasSuffix(host, "."+d) {
		return "", false
	}
	sub := strings.TrimSuffix(host, "."+d)
	if sub == "" || strings.Contains(sub, ".") {
		return "", false
	}
	return sub, true
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	req := &request{w: w, r: r}
	if rest, ok := strings.CutPrefix(r.URL.Path, "/status/"); ok {
		req.subdomain, req.rest, _ = strings.Cut(rest, "/")
		if req.rest != "" || strings.HasSuffix(rest, "/") {
			req.rest = "/" + req.rest
		}
		req.base = "/status/" + req.subdomain
		if !validSubdomain(req.subdomain) {
			h.notFound(req)
			return
		}
	} else {
		host := hostOf(r)
		if sub, ok := h.subdomainOfHost(host); ok {
			req.subdomain = sub
		} else {
			req.host = host
		}
		req.rest = r.URL.Path
	}
	switch req.rest {
	case "", "/":
		h.methods(req, h.page, http.MethodGet, http.MethodHead)
	case "/history":
		h.methods(req, h.history, http.MethodGet, http.MethodHead)
	case "/feed.atom":
		h.methods(req, h.feed, http.MethodGet, http.MethodHead)
	case "/subscribe":
		h.methods(req, h.subscribe, http.MethodPost)
	case "/login":
		h.methods(req, h.login, http.MethodPost)
	default:
		h.extra(req)
	}
}

// extra hands a path this handler does not serve to Deps.Extra, always in the path form
// /status/{subdomain}/…: a request to a status or custom domain is rewritten, so that Extra
// only ever needs to know that form.
func (h *Handler) extra(req *request) {
	if h.others == nil {
		h.notFound(req)
		return
	}
	if req.base != "" {
		h.others.ServeHTTP(req.w, req.r)
		return
	}
	sub := req.subdomain
	if sub == "" {
		a, err := h.st.PublicStatusPage(req.r.Context(), "", req.host)
		if err != nil {
			h.notFound(req)
			return
		}
		sub = a.Page.Subdomain
	}
	r := req.r.Clone(req.r.Context())
	r.URL.Path = "/status/" + sub + req.rest
	r.URL.RawPath = ""
	h.others.ServeHTTP(req.w, r)
}

// methods runs fn when the request's method is one of allowed, else answers 405.
func (h *Handler) methods(req *request, fn func(*request), allowed ...string) {
	for _, m := range allowed {
		if req.r.Method == m {
			fn(req)
			return
		}
	}
	req.w.Header().Set("Allow", strings.Join(allowed, ", "))
	http.Error(req.w, "method not allowed", http.StatusMethodNotAllowed)
}

// validSubdomain is the subdomain rule of api/openapi/status-pages.yaml.
func validSubdomain(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// access finds the page and applies its guards: unknown pages and clients outside allowed_ips
// get 404; a password-protected page without a valid cookie gets the password form. ok is
// false when the response has been written.
func (h *Handler) access(req *request) (statuspage.PublicPageAccess, bool) {
	a, err := h.st.PublicStatusPage(req.r.Context(), req.subdomain, req.host)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			h.notFound(req)
		} else {
			h.serverError(req, err)
		}
		return a, false
	}
	if !ipAllowed(a.Page.AllowedIPs, h.clientIP(req.r)) {
		h.notFound(req)
		return a, false
	}
	if a.PasswordHash != nil && !h.unlocked(req, a) {
		h.passwordForm(req, a, "", http.StatusUnauthorized)
		return a, false
	}
	return a, true
}

// ipAllowed reports whether ip may see a page with this allowed_ips list (empty: anyone).
func ipAllowed(allowed []string, ip string) bool {
	if len(allowed) == 0 {
		return true
	}
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	addr = addr.Unmap()
	for _, s := range allowed {
		if p, err := netip.ParsePrefix(s); err == nil {
			if p.Contains(addr) {
				return true
			}
		} else if a, err := netip.ParseAddr(s); err == nil && a.Unmap() == addr {
			return true
		}
	}
	return false
}

// contentSecurityPolicy is the policy of every response of the site: the pages are
// self-contained HTML with inline styles, post forms only to themselves, and are never framed.
const contentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// securityHeaders are set on every response of the site, whatever answers it (page, password
// form, error, redirect): no framing (clickjacking of the password and subscribe forms), no
// content sniffing, the content security policy.
func securityHeaders(hd http.Header) {
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("Referrer-Policy", "same-origin")
}

// headers sets the caching and indexing headers of a page response.
func (h *Handler) headers(req *request, a statuspage.PublicPageAccess, contentType string) {
	hd := req.w.Header()
	hd.Set("Content-Type", contentType)
	if a.Page.Private {
		hd.Set("Cache-Control", "private, no-cache")
		hd.Add("Vary", "Cookie")
	} else {
		hd.Set("Cache-Control", "public, max-age="+itoa(int(h.cfg.CacheMaxAge/time.Second)))
	}
	if a.Page.HideFromSearchEngines {
		hd.Set("X-Robots-Tag", "noindex")
	}
}

func (h *Handler) notFound(req *request) {
	hd := req.w.Header()
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Robots-Tag", "noindex")
	h.render(req, http.StatusNotFound, "message.html", messageView{Title: "Page not found",
		Message: "There is no status page here.", Noindex: true})
}

func (h *Handler) serverError(req *request, err error) {
	h.log.ErrorContext(req.r.Context(), "status page request failed", "err", err, "path", req.r.URL.Path)
	req.w.Header().Set("Cache-Control", "no-store")
	h.render(req, http.StatusInternalServerError, "message.html", messageView{Title: "Something went wrong",
		Message: "The status page could not be shown. Please try again in a moment.", Noindex: true})
}
