package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// badgesStore is what the owner's badge routes read and write.
type badgesStore interface {
	CheckBadge(ctx context.Context, orgID, checkID uuid.UUID) (string, error)
	EnableCheckBadge(ctx context.Context, actor store.Actor, orgID, checkID uuid.UUID) (string, error)
	DisableCheckBadge(ctx context.Context, actor store.Actor, orgID, checkID uuid.UUID) (bool, error)
}

var _ badgesStore = (*store.Store)(nil)

// badgesHandler serves GET, POST and DELETE /v1/checks/{check_id}/badge (an extension): the
// state of a check's public badge, enabling it (a new unguessable URL) and disabling it.
type badgesHandler struct {
	st    badgesStore
	auth  *auth.Authenticator
	base  string // Deps.BadgeURL without its trailing slash; "" for the request's own origin
	cache *badgeCache
}

func newBadgesHandler(d Deps, cache *badgeCache) *badgesHandler {
	return &badgesHandler{st: d.Store, auth: d.Auth, base: strings.TrimRight(d.BadgeURL, "/"), cache: cache}
}

// badgeStateJSON is a check's badge: urls is null while it is disabled.
type badgeStateJSON struct {
	Enabled bool           `json:"enabled"`
	URLs    *badgeURLsJSON `json:"urls"`
}

type badgeURLsJSON struct {
	Status   string `json:"status"`
	Uptime   string `json:"uptime"`
	Response string `json:"response"`
}

// state renders a badge token ("" when disabled) as the routes answer it.
func (h *badgesHandler) state(c *gin.Context, token string) badgeStateJSON {
	if token == "" {
		return badgeStateJSON{}
	}
	base := h.base
	if base == "" {
		scheme := "http"
		if c.Request.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + c.Request.Host
	}
	prefix := base + "/badges/" + token + "/"
	return badgeStateJSON{Enabled: true, URLs: &badgeURLsJSON{
		Status: prefix + "status.svg", Uptime: prefix + "uptime.svg", Response: prefix + "response.svg"}}
}

// get is GET /v1/checks/{check_id}/badge.
func (h *badgesHandler) get(c *gin.Context, id uuid.UUID) (int, any, error) {
	token, err := h.st.CheckBadge(c, orgID(c), id)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, h.state(c, token), nil
}

// enable is POST /v1/checks/{check_id}/badge: a check without a badge gets one with a new
// token; a check with one keeps it (its URLs may be published already). The body, if any,
// must be an empty object.
func (h *badgesHandler) enable(c *gin.Context, id uuid.UUID) (int, any, error) {
	if err := emptyBody(c); err != nil {
		return 0, nil, err
	}
	token, err := h.st.EnableCheckBadge(c, actor(c), orgID(c), id)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, h.state(c, token), nil
}

// disable is DELETE /v1/checks/{check_id}/badge: the badge's URLs answer 404 from now on, on
// every replica (each drops the badge from its cache as the revocation feed tells it, and the
// answer waits, briefly, until they all did); enabling it again makes new ones. Disabling a
// check without a badge is not an error.
func (h *badgesHandler) disable(c *gin.Context, id uuid.UUID) (int, any, error) {
	dropped := h.auth.Expect(store.AuthChangeBadge + id.String())
	deleted, err := h.st.DisableCheckBadge(c, actor(c), orgID(c), id)
	if err != nil || !deleted {
		dropped.Cancel()
	}
	if err != nil {
		return 0, nil, err
	}
	h.cache.forgetCheck(id)
	if deleted {
		awaitRevocation(c, dropped)
	}
	return http.StatusOK, h.state(c, ""), nil
}

// maxEmptyBody bounds what emptyBody reads.
const maxEmptyBody = 1 << 10

// emptyBody accepts a request without a body, or with an empty JSON object.
func emptyBody(c *gin.Context) error {
	b, err := io.ReadAll(io.LimitReader(c.Request.Body, maxEmptyBody))
	if err != nil {
		return badRequest("body: %s", err.Error())
	}
	if strings.TrimSpace(string(b)) == "" {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return badRequest("body: must be empty or an empty JSON object")
	}
	for k := range m {
		return fieldErrors{{k, "is not a known property"}}
	}
	return nil
}
