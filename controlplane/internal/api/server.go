// Package api is the control plane's public REST API on Gin: authentication, strict decoding,
// validation, the response envelope, and the route table (routes.go). Handlers are grouped by
// resource, one struct each, depending on small interfaces declared beside them.
package api

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/ratelimit"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Deps is everything the API needs, wired in cmd/.
type Deps struct {
	Logger *slog.Logger
	Store  *store.Store
	Auth   *auth.Authenticator
	// Registry receives the API's metrics. /metrics is not served here: cmd/ serves the
	// registry on its own listener (VANTAGE_METRICS_ADDR), away from the public API.
	Registry prometheus.Registerer
	Now      func() time.Time
	// LookupTXT reads TXT records, to verify status pages' custom domains. Default: the system
	// resolver's.
	LookupTXT func(ctx context.Context, name string) ([]string, error)
	// Ready reports whether every dependency answers; /readyz serves it.
	Ready func(ctx context.Context) error
	// RequestTimeout is the deadline of every request (its context's): a request that needs
	// longer, for instance because the database froze, is answered 503 with the failure
	// envelope instead of hanging. Default 10s.
	RequestTimeout time.Duration
	// TrustedProxies are the addresses whose X-Forwarded-For is believed (default: none).
	TrustedProxies []string
	// CheckChanged is told, after commit, of every check whose configuration a request changed,
	// so the scheduler picks the change up within a second. Nil: nobody is told (the
	// scheduler's periodic resync still catches up).
	CheckChanged func(checkID uuid.UUID)
	// Public, if set, serves the public status pages (statuspage/web): every /status/* path,
	// and requests no API route matches, outside /v1, that it claims with a
	// Route(*http.Request) bool method (a status domain or custom domain Host); a handler
	// without that method gets every such request. ClientIP gives it the client address as the
	// API sees it. Nil: no public pages.
	Public http.Handler
	// Invitations, if set, serves the invitation e-mail's link, GET and POST
	// /invitations/accept (invite.NewHandler); an HTML page for people, outside /v1 and the
	// OpenAPI document. Nil: the link answers 404.
	Invitations http.Handler
	// Agents, if set, serves GET /v1/agents (a Vantage extension): the deployment's live
	// agents and regions (fleet.Fleet). Nil: the route answers 503.
	Agents AgentDirectory
	// Integrations, if set, sends the test messages of POST /v1/integrations/{id}/test
	// (notifier.Notifier). Nil: the route answers 503.
	Integrations IntegrationTester
	// BadgeURL is the base of the public badge URLs the badge routes answer
	// (VANTAGE_PUBLIC_URL). Default: the scheme and host of the request.
	BadgeURL string
	// Sessions, if set, lets the web console's session cookie stand in for a bearer token on
	// every authenticated /v1 route, with exactly the permissions of the credential behind the
	// session (console.Sessions). Nil: bearer tokens only.
	Sessions SessionResolver
	// Console, if set, serves the web console: /console and every path under it
	// (console.Handler), given the client address (ClientIP) and whether the request reached
	// us over TLS (RequestSecure). Nil: those paths answer 404.
	Console http.Handler
	// Limiter decides the API's rate limits (per organization, test messages); cmd/ passes
	// the one every limit of the replica shares. Default: a ratelimit.Shared on Store, its metrics in Registry.
	Limiter ratelimit.Limiter
}

// SessionResolver turns the console's session cookie into the credential behind it.
type SessionResolver interface {
	// ResolveSession returns the credential of r's session and the organization the session
	// selected (uuid.Nil: none). auth.ErrNoSession: r has no session cookie;
	// auth.ErrInvalidToken: the session or its credential is gone or expired; auth.ErrCSRF: r
	// changes something without the session's X-CSRF-Token.
	ResolveSession(r *http.Request) (store.Credential, uuid.UUID, error)
}

// publicRouter is the optional method by which Deps.Public claims unmatched requests.
type publicRouter interface{ Route(r *http.Request) bool }

// clientIPKey carries gin's client IP into Deps.Public and Deps.Console.
type clientIPKey struct{}

// secureKey carries into Deps.Console whether a request reached us over TLS.
type secureKey struct{}

// RequestSecure reports whether a request the API handed to Deps.Console came over TLS: its
// own connection's, or that of a trusted proxy (TrustedProxies) that says so with
// X-Forwarded-Proto: https. For any other request, whether its own connection is TLS.
func RequestSecure(r *http.Request) bool {
	if s, ok := r.Context().Value(secureKey{}).(bool); ok {
		return s
	}
	return r.TLS != nil
}

// ClientIP is the client address of a request the API handed to Deps.Public, as gin sees it
// behind TrustedProxies; for any other request, the host of RemoteAddr.
func ClientIP(r *http.Request) string {
	if ip, ok := r.Context().Value(clientIPKey{}).(string); ok {
		return ip
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// servePublic hands a request to the public pages handler.
func servePublic(h http.Handler) gin.HandlerFunc {
	return func(c *gin.Context) {
		ctx := context.WithValue(c.Request.Context(), clientIPKey{}, c.ClientIP())
		h.ServeHTTP(c.Writer, c.Request.WithContext(ctx))
	}
}

// claimsPublic reports whether an unmatched request goes to Deps.Public.
func (d Deps) claimsPublic(r *http.Request) bool {
	if d.Public == nil || r.URL.Path == "/v1" || strings.HasPrefix(r.URL.Path, "/v1/") {
		return false
	}
	pr, ok := d.Public.(publicRouter)
	return !ok || pr.Route(r)
}

// now is d.Now, or time.Now when it is not set.
func (d Deps) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// checkChanged calls d.CheckChanged when it is set.
func (d Deps) checkChanged(id uuid.UUID) {
	if d.CheckChanged != nil {
		d.CheckChanged(id)
	}
}

// New builds the HTTP handler of the control plane.
func New(d Deps) (http.Handler, error) {
	if _, err := openAPIYAML(); err != nil { // assembles the JSON document too
		return nil, err
	}
	if d.Limiter == nil {
		lim, err := ratelimit.New(ratelimit.Config{}, ratelimit.Deps{Store: d.Store, Logger: d.Logger, Registerer: d.Registry})
		if err != nil {
			return nil, err
		}
		d.Limiter = lim
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true
	if err := r.SetTrustedProxies(d.TrustedProxies); err != nil {
		return nil, err
	}
	m := newHTTPMetrics(d.Registry)
	timeout := d.RequestTimeout
	if timeout <= 0 {
		timeout = defaultRequestTimeout
	}
	r.Use(requestLog(d.Logger), m.middleware(), securityHeaders(), deadline(timeout), recovery())
	r.NoRoute(func(c *gin.Context) {
		if d.claimsPublic(c.Request) {
			servePublic(d.Public)(c)
			return
		}
		if d.Console != nil && c.Request.URL.Path == "/" && (c.Request.Method == http.MethodGet || c.Request.Method == http.MethodHead) {
			c.Redirect(http.StatusFound, "/console/") // the API's host has no page of its own: it links to the console
			return
		}
		fail(c, notFound("route "+c.Request.Method+" "+c.Request.URL.Path))
	})
	r.NoMethod(func(c *gin.Context) {
		fail(c, &apiError{Status: http.StatusMethodNotAllowed, Type: "method_not_allowed",
			Message: "method " + c.Request.Method + " is not allowed on " + c.Request.URL.Path})
	})

	r.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	r.GET("/readyz", func(c *gin.Context) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
		defer cancel()
		if err := d.Ready(ctx); err != nil {
			c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "error": err.Error()})
			return
		}
		c.JSON(http.StatusOK, gin.H{"status": "ok"})
	})

	if d.Public != nil {
		r.Any("/status/*path", servePublic(d.Public))
	}
	if d.Console != nil {
		proxies := trustedPrefixes(d.TrustedProxies)
		serve := func(c *gin.Context) {
			secure := c.Request.TLS != nil
			if ip, err := netip.ParseAddr(c.RemoteIP()); err == nil && containsAddr(proxies, ip.Unmap()) {
				secure = secure || strings.EqualFold(c.GetHeader("X-Forwarded-Proto"), "https")
			}
			ctx := context.WithValue(c.Request.Context(), clientIPKey{}, c.ClientIP())
			ctx = context.WithValue(ctx, secureKey{}, secure)
			d.Console.ServeHTTP(c.Writer, c.Request.WithContext(ctx))
		}
		r.Any("/console", serve)
		r.Any("/console/*path", serve)
	}
	routes(r, d)
	return r, nil
}

// trustedPrefixes parses TrustedProxies (IPs and CIDRs, validated by gin before this runs).
func trustedPrefixes(list []string) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range list {
		if pfx, err := netip.ParsePrefix(p); err == nil {
			out = append(out, pfx.Masked())
		} else if a, err := netip.ParseAddr(p); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		}
	}
	return out
}

func containsAddr(prefixes []netip.Prefix, a netip.Addr) bool {
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// defaultRequestTimeout is Deps.RequestTimeout's default.
const defaultRequestTimeout = 10 * time.Second

// deadline gives every request a deadline: the store's queries honour it (a query past it
// fails as store.ErrUnavailable, answered 503), so no request waits on a frozen dependency for
// longer than d.
func deadline(d time.Duration) gin.HandlerFunc {
	return func(c *gin.Context) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), d)
		defer cancel()
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}

// securityHeaders marks every answer as not to be sniffed and not to be stored by browsers or
// proxies: API answers carry tenant data, and a created token's secret. Handlers that serve
// something cacheable (the OpenAPI document, public status pages) set their own Cache-Control.
func securityHeaders() gin.HandlerFunc {
	return func(c *gin.Context) {
		h := c.Writer.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		c.Next()
	}
}

// recovery turns a panic into a logged 500 failure envelope.
func recovery() gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				logger(c).ErrorContext(c.Request.Context(), "panic in handler", "panic", p, "route", c.FullPath())
				fail(c, &apiError{Status: http.StatusInternalServerError, Type: "internal_error", Message: "internal error"})
			}
		}()
		c.Next()
	}
}

// requestLog logs one line per request, with a request id the client may supply.
func requestLog(base *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		rid := c.GetHeader("X-Request-Id")
		if rid == "" || len(rid) > 128 {
			rid = uuid.NewString()
		}
		c.Header("X-Request-Id", rid)
		l := base.With("request_id", rid)
		c.Set(ctxLogger, l)
		c.Next()
		status := c.Writer.Status()
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelError
		}
		attrs := []any{"method", c.Request.Method, "route", c.FullPath(), "status", status,
			"duration_ms", float64(time.Since(start).Microseconds()) / 1000, "remote_ip", c.ClientIP()}
		if p, ok := c.Get(ctxPrincipal); ok {
			attrs = append(attrs, "org_id", p.(auth.Principal).OrgID.String())
		}
		l.Log(c.Request.Context(), level, "request", attrs...)
	}
}

type httpMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vantage_http_requests_total", Help: "HTTP requests by method, route and status code.",
		}, []string{"method", "route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "vantage_http_request_duration_seconds", Help: "HTTP request latency by method and route.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"method", "route"}),
	}
	reg.MustRegister(m.requests, m.latency)
	return m
}

// middleware counts and times requests. Every label value comes from a bounded set, so that
// no client can create series at will: the method is one of the standard ones or OTHER, the
// route is the matched route's template, or "unmatched" for every other path (public status
// pages included), and the code is the status the handler chose.
func (m *httpMetrics) middleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		route := c.FullPath()
		if route == "" {
			route = "unmatched"
		}
		method := metricMethod(c.Request.Method)
		m.requests.WithLabelValues(method, route, strconv.Itoa(c.Writer.Status())).Inc()
		m.latency.WithLabelValues(method, route).Observe(time.Since(start).Seconds())
	}
}

// metricMethod is the method label of a request: the method when it is a standard one,
// otherwise OTHER.
func metricMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "OTHER"
}

const ctxPrincipal = "vantage.principal"

// bearer extracts the token of "Authorization: Bearer <token>".
func bearer(c *gin.Context) (string, bool) {
	h := c.GetHeader("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// authenticate resolves the caller and the organization it acts in, or answers 401/400/403.
// A bearer token decides when there is one; without it the console's session cookie stands in
// for it (sessions, when set), the organization then being the one the session selected
// unless X-Service-Organisation names another the credential covers.
func authenticate(a *auth.Authenticator, sessions SessionResolver) gin.HandlerFunc {
	return func(c *gin.Context) {
		cred, org, err := caller(c, a, sessions)
		if err != nil {
			fail(c, err)
			return
		}
		if h := c.GetHeader("X-Service-Organisation"); h != "" {
			org = h
		}
		p, err := auth.Resolve(cred, org)
		switch err {
		case nil:
		case auth.ErrOrgRequired:
			fail(c, badRequest("%s", err.Error()))
			return
		default:
			fail(c, forbidden(err.Error()))
			return
		}
		c.Set(ctxPrincipal, p)
		c.Next()
	}
}

// caller is the credential of a request: its bearer token's or its console session's, with
// the organization the session selected ("" for a bearer token or none selected).
func caller(c *gin.Context, a *auth.Authenticator, sessions SessionResolver) (store.Credential, string, error) {
	if token, ok := bearer(c); ok {
		cred, err := a.Authenticate(c.Request.Context(), token)
		return cred, "", err
	}
	if sessions == nil {
		return store.Credential{}, "", auth.ErrNoSession
	}
	cred, org, err := sessions.ResolveSession(c.Request)
	if err != nil || org == uuid.Nil {
		return cred, "", err
	}
	return cred, org.String(), nil
}

// area requires READ on area for GET and EDIT for every other method.
func area(a auth.Area) gin.HandlerFunc {
	return func(c *gin.Context) {
		level := auth.Edit
		if c.Request.Method == http.MethodGet || c.Request.Method == http.MethodHead {
			level = auth.Read
		}
		if !principal(c).Perms.Allows(a, level) {
			fail(c, forbidden("this token lacks the "+string(a)+":"+string(level)+" permission"))
			return
		}
		c.Next()
	}
}

// resource names what a route group serves, for "<resource> not found" messages.
func resource(name string) gin.HandlerFunc {
	return func(c *gin.Context) { c.Set(ctxResource, name); c.Next() }
}

// principal is the authenticated caller of this request.
func principal(c *gin.Context) auth.Principal {
	p, _ := c.Get(ctxPrincipal)
	return p.(auth.Principal)
}

// orgID is the organization this request acts in.
func orgID(c *gin.Context) uuid.UUID { return principal(c).OrgID }

// actor is the caller as the audit log records it.
func actor(c *gin.Context) store.Actor { return principal(c).Actor(c.ClientIP()) }

// minPathIDLen is the contract's minimum length of a path id (api/openapi/openapi.yaml).
const minPathIDLen = 8

// pathID reads a path id with the contract's minimum length; a value that is not one of our ids
// is reported as not found, exactly like an id of another organization.
func pathID(c *gin.Context, name string, minLen int) (uuid.UUID, error) {
	s := c.Param(name)
	if len(s) < minLen {
		return uuid.Nil, badRequest("%s must be at least %d characters", name, minLen)
	}
	id, err := uuid.Parse(s)
	if err != nil || len(s) != 36 {
		return uuid.Nil, store.ErrNotFound
	}
	return id, nil
}

// withID serves a route of one resource named by the path id param: f runs only once the id
// is read, so every handler of an item starts from its id.
func withID(param string, f func(c *gin.Context, id uuid.UUID) (int, any, error)) handlerFn {
	return func(c *gin.Context) (int, any, error) {
		id, err := pathID(c, param, minPathIDLen)
		if err != nil {
			return 0, nil, err
		}
		return f(c, id)
	}
}

// withIDs is withID for a nested resource: f gets the path ids names, in order; the first
// problem is answered.
func withIDs(f func(c *gin.Context, ids []uuid.UUID) (int, any, error), names ...string) handlerFn {
	return func(c *gin.Context) (int, any, error) {
		ids := make([]uuid.UUID, len(names))
		for i, n := range names {
			id, err := pathID(c, n, minPathIDLen)
			if err != nil {
				return 0, nil, err
			}
			ids[i] = id
		}
		return f(c, ids)
	}
}
