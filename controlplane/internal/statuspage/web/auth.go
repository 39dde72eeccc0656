package web

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
)

// Password hashes are stored by the API (api.hashPassword) as salt(16) || key(32), the key being
// PBKDF2-HMAC-SHA512 with 210,000 iterations.
const (
	saltLen    = 16
	keyLen     = 32
	iterations = 210_000
	// maxPasswordLen is the page password's limit (0.5.0 changelog).
	maxPasswordLen = 4096
	// cookieTTL is how long an unlocked page stays unlocked.
	cookieTTL  = 7 * 24 * time.Hour
	cookieName = "vantage_status_auth"
)

// DeriveCookieKey derives the key that signs status page cookies from the control plane's
// secret key (HKDF-SHA256), so that no second secret needs configuring.
func DeriveCookieKey(secret []byte) ([]byte, error) {
	return hkdf.Key(sha256.New, secret, nil, "vantage status page cookie v1", 32)
}

// verifyPassword reports whether pw matches a stored hash.
func verifyPassword(stored []byte, pw string) bool {
	if len(stored) != saltLen+keyLen || len(pw) > 4*maxPasswordLen {
		return false
	}
	key, err := pbkdf2.Key(sha512.New, pw, stored[:saltLen], iterations, keyLen)
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(key, stored[saltLen:]) == 1
}

// cookieMAC signs a page's unlock cookie. The password hash is part of the message, so a new
// password (or its removal and re-adding) invalidates every cookie issued before.
func (h *Handler) cookieMAC(a statuspage.PublicPageAccess, expires int64) []byte {
	m := hmac.New(sha256.New, h.cfg.CookieKey)
	m.Write([]byte("v1|" + a.Page.ID + "|" + strconv.FormatInt(expires, 10) + "|"))
	sum := sha256.Sum256(a.PasswordHash)
	m.Write(sum[:])
	return m.Sum(nil)
}

// cookiePath scopes the cookie to the page.
func cookiePath(req *request) string {
	if req.base == "" {
		return "/"
	}
	return req.base
}

// unlocked reports whether the request carries a valid, unexpired cookie for the page.
func (h *Handler) unlocked(req *request, a statuspage.PublicPageAccess) bool {
	for _, c := range req.r.CookiesNamed(cookieName) {
		expS, macS, ok := strings.Cut(c.Value, ".")
		if !ok {
			continue
		}
		exp, err := strconv.ParseInt(expS, 10, 64)
		if err != nil || h.now().Unix() >= exp {
			continue
		}
		mac, err := base64.RawURLEncoding.DecodeString(macS)
		if err == nil && hmac.Equal(mac, h.cookieMAC(a, exp)) {
			return true
		}
	}
	return false
}

// login checks the password of a protected page; a right one sets the cookie and goes back to
// the page, a wrong one shows the form again.
func (h *Handler) login(req *request) {
	a, err := h.st.PublicStatusPage(req.r.Context(), req.subdomain, req.host)
	if err != nil || !ipAllowed(a.Page.AllowedIPs, h.clientIP(req.r)) {
		h.notFound(req)
		return
	}
	if a.PasswordHash == nil {
		http.Redirect(req.w, req.r, req.base+"/", http.StatusSeeOther)
		return
	}
	req.r.Body = http.MaxBytesReader(req.w, req.r.Body, 32<<10)
	if err := req.r.ParseForm(); err != nil {
		h.passwordForm(req, a, "The form could not be read. Please try again.", http.StatusBadRequest)
		return
	}
	wait, err := h.attempts.reserve(req.r.Context(), a.Page.ID, h.clientIP(req.r), h.now())
	if err != nil {
		h.log.ErrorContext(req.r.Context(), "password attempt limit unavailable", "err", err)
		h.passwordForm(req, a, "Passwords cannot be checked right now. Please try again in a minute.", http.StatusServiceUnavailable)
		return
	}
	if wait > 0 {
		secs := int(math.Ceil(wait.Seconds()))
		req.w.Header().Set("Retry-After", strconv.Itoa(secs))
		h.passwordForm(req, a, fmt.Sprintf("Too many attempts. Please try again in %d seconds.", secs), http.StatusTooManyRequests)
		return
	}
	if !h.verify(req, a.Page.ID, a.PasswordHash, req.r.PostForm.Get("password")) {
		h.passwordForm(req, a, "That password is not correct.", http.StatusUnauthorized)
		return
	}
	exp := h.now().Add(cookieTTL).Unix()
	// Secure whenever the visitor came over HTTPS; a page served over plain HTTP (local runs)
	// must still get its cookie.
	http.SetCookie(req.w, &http.Cookie{ //nolint:gosec // G124: Secure is set for HTTPS, see above
		Name:     cookieName,
		Value:    strconv.FormatInt(exp, 10) + "." + base64.RawURLEncoding.EncodeToString(h.cookieMAC(a, exp)),
		Path:     cookiePath(req),
		Expires:  time.Unix(exp, 0),
		HttpOnly: true,
		Secure:   req.r.TLS != nil || strings.EqualFold(req.r.Header.Get("X-Forwarded-Proto"), "https"),
		SameSite: http.SameSiteLaxMode,
	})
	req.w.Header().Set("Cache-Control", "no-store")
	http.Redirect(req.w, req.r, req.base+"/", http.StatusSeeOther)
}

// verify runs the (deliberately slow) password check of page, one at a time per page and a
// bounded number in all (fairSlots), so that a flood of attempts on one page can take neither
// every core nor the other pages' turn.
func (h *Handler) verify(req *request, page string, stored []byte, pw string) bool {
	ok := false
	h.slots.do(req.r.Context(), page, func() { ok = verifyPassword(stored, pw) })
	return ok
}

func (h *Handler) passwordForm(req *request, a statuspage.PublicPageAccess, problem string, status int) {
	hd := req.w.Header()
	hd.Set("Cache-Control", "no-store")
	if a.Page.HideFromSearchEngines {
		hd.Set("X-Robots-Tag", "noindex")
	}
	h.render(req, status, "password.html", passwordView{Name: a.Page.Name, Action: req.base + "/login",
		Problem: problem, Noindex: a.Page.HideFromSearchEngines})
}
