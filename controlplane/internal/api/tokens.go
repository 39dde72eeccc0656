package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// tokenStore is what the tokens API needs from the store.
type tokenStore interface {
	CreateAPIToken(ctx context.Context, actor store.Actor, in store.NewAPIToken) (store.APIToken, error)
	ListAPITokens(ctx context.Context, orgID uuid.UUID, search string, limit, offset int64) ([]store.APIToken, int64, error)
	GetAPIToken(ctx context.Context, orgID, id uuid.UUID) (store.APIToken, error)
	DeleteAPIToken(ctx context.Context, actor store.Actor, orgID, id uuid.UUID) (store.APIToken, error)
}

var _ tokenStore = (*store.Store)(nil)

// tokensHandler serves /v1/tokens (api/openapi/tokens.yaml). Token records use camelCase, unlike the rest
// of the API, because the contract says so.
type tokensHandler struct {
	store tokenStore
	auth  *auth.Authenticator
	now   func() time.Time
}

func newTokensHandler(d Deps) *tokensHandler {
	now := d.Now
	if now == nil {
		now = time.Now
	}
	return &tokensHandler{store: d.Store, auth: d.Auth, now: now}
}

// Token limits and defaults.
const (
	tokenNameMaxLen         = 255
	tokenDefaultLifetime    = 365 * 24 * time.Hour // expiresAt omitted on create
	tokenSearchMaxLen       = 255
	tokenListDefaultPerPage = 10 // GET /v1/tokens, unlike other lists (api/openapi/openapi.yaml)
)

var tokenPages = pageRules{DefaultPerPage: tokenListDefaultPerPage, MaxPerPage: 100}

type tokenGrantJSON struct {
	Scope      string `json:"scope"`
	Permission string `json:"permission"`
}

// tokenJSON is the token record of list and get: never the secret.
type tokenJSON struct {
	ID           string           `json:"id"`
	Name         string           `json:"name"`
	ExpiresAfter *string          `json:"expiresAfter"`
	CreatedAt    string           `json:"createdAt"`
	Grants       []tokenGrantJSON `json:"grants"`
}

func toTokenJSON(t store.APIToken) tokenJSON {
	grants := make([]tokenGrantJSON, 0, len(t.Grants))
	for _, s := range t.Grants {
		// A grant whose area left the vocabulary grants nothing (auth.NewPermissions ignores it),
		// so it is not shown either.
		if g, err := auth.ParseGrant(s); err == nil {
			grants = append(grants, tokenGrantJSON{Scope: string(g.Area), Permission: string(g.Level)})
		}
	}
	return tokenJSON{ID: t.ID.String(), Name: t.Name, ExpiresAfter: formatTimePtr(t.ExpiresAt),
		CreatedAt: formatTime(t.CreatedAt), Grants: grants}
}

// createdTokenJSON is the answer of create: the only time the secret is shown.
type createdTokenJSON struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	ExpiresAfter *string `json:"expiresAfter"`
	CreatedAt    string  `json:"createdAt"`
	Token        string  `json:"token"`
}

// tokenListJSON is the nested list shape of GET /v1/tokens: the page metadata sits inside result,
// and the envelope has no result_info.
type tokenListJSON struct {
	Result     []tokenJSON       `json:"result"`
	ResultInfo tokenListInfoJSON `json:"result_info"`
}

type tokenListInfoJSON struct {
	Page       int64 `json:"page"`
	PerPage    int64 `json:"per_page"`
	TotalCount int64 `json:"total_count"`
	TotalPages int64 `json:"total_pages"`
}

func (h *tokensHandler) list(c *gin.Context) (int, any, error) {
	p, err := parsePage(c, tokenPages)
	if err != nil {
		return 0, nil, err
	}
	search, err := searchQuery(c, tokenSearchMaxLen)
	if err != nil {
		return 0, nil, err
	}
	tokens, total, err := h.store.ListAPITokens(c.Request.Context(), orgID(c), search, p.PerPage, p.Offset())
	if err != nil {
		return 0, nil, err
	}
	out := tokenListJSON{Result: make([]tokenJSON, len(tokens)),
		ResultInfo: tokenListInfoJSON{Page: p.Page, PerPage: p.PerPage, TotalCount: total,
			TotalPages: (total + p.PerPage - 1) / p.PerPage}}
	for i, t := range tokens {
		out.Result[i] = toTokenJSON(t)
	}
	return http.StatusOK, out, nil
}

func (h *tokensHandler) get(c *gin.Context) (int, any, error) {
	id, err := pathID(c, "token_id", 0)
	if err != nil {
		return 0, nil, err
	}
	t, err := h.store.GetAPIToken(c.Request.Context(), orgID(c), id)
	return rendered(http.StatusOK, toTokenJSON, t, err)
}

// create makes an API token in the caller's organization.
//
// A token can never grant more than its creator holds: every requested grant must be allowed by
// the calling credential's own permissions (EDIT covering READ), otherwise the request is
// refused with 403 naming what is missing. Without this rule API_TOKENS:EDIT would be a master
// key, since it could mint a token with every permission.
//
// Nor can a token outlive its creator, or a leaked short-lived credential could make itself
// permanent: when the calling credential expires, an omitted expiresAt (365 days by default)
// is cut to the creator's expiry, and an explicit expiresAt after it, or null (never), is
// refused with 403 naming the creator's expiry. A creator that never expires may make tokens
// that never expire, as the contract's null says.
func (h *tokensHandler) create(c *gin.Context) (int, any, error) {
	o, err := readObject(c)
	if err != nil {
		return 0, nil, err
	}
	in, grants, defaulted := decodeNewToken(o, h.now())
	if err := o.Err(); err != nil {
		return 0, nil, err
	}
	if limit := principal(c).Credential.ExpiresAt; limit != nil {
		switch {
		case defaulted && in.ExpiresAt.After(*limit):
			in.ExpiresAt = limit
		case in.ExpiresAt == nil || in.ExpiresAt.After(*limit):
			return 0, nil, &apiError{Status: http.StatusForbidden, Type: "token_outlives_creator",
				Message: "expiresAt: a token cannot outlive its creator: this credential expires at " +
					formatTime(*limit) + "; give an expiresAt at or before it, or omit it"}
		}
	}
	var missing []string
	for _, g := range grants {
		if !principal(c).Perms.Allows(g.Area, g.Level) {
			missing = append(missing, g.String())
		}
	}
	if len(missing) > 0 {
		return 0, nil, forbidden("a token cannot grant more than its creator holds: this credential lacks " +
			strings.Join(missing, ", "))
	}
	secret, hash := auth.NewSecret()
	in.OrgID, in.SecretHash = orgID(c), hash
	t, err := h.store.CreateAPIToken(c.Request.Context(), actor(c), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, createdTokenJSON{ID: t.ID.String(), Name: t.Name,
		ExpiresAfter: formatTimePtr(t.ExpiresAt), CreatedAt: formatTime(t.CreatedAt), Token: secret}, nil
}

// decodeNewToken reads a create body: {name, grants: [{scope, permission}], expiresAt?}, all
// objects strict. Problems are recorded on o. defaulted reports an omitted expiresAt (the
// default lifetime).
func decodeNewToken(o *object, now time.Time) (in store.NewAPIToken, grants []auth.Grant, defaulted bool) {
	if o.Require("name") {
		if v, set := field[string](o, "name").Value(); set {
			switch {
			case strings.TrimSpace(v) == "":
				o.Fail("name", "must not be blank")
			case utf8.RuneCountInString(v) > tokenNameMaxLen:
				o.Fail("name", "must be at most %d characters", tokenNameMaxLen)
			}
			in.Name = v
		}
	}

	if o.Require("grants") {
		items, set, _ := objects(o, "grants")
		if set && len(items) == 0 {
			o.Fail("grants", "must hold at least one grant")
		}
		seen := map[auth.Area]bool{}
		for _, it := range items {
			g, good := decodeTokenGrant(it)
			if !good {
				continue
			}
			if seen[g.Area] {
				it.Fail("scope", "%s is granted more than once", g.Area)
				continue
			}
			seen[g.Area] = true
			grants = append(grants, g)
			in.Grants = append(in.Grants, g.String())
		}
	}

	exp := field[string](o, "expiresAt")
	switch v, set := exp.Value(); {
	case !exp.Set:
		t := now.Add(tokenDefaultLifetime).UTC().Truncate(time.Millisecond)
		in.ExpiresAt, defaulted = &t, true
	case exp.Null:
		in.ExpiresAt = nil // never expires
	case set:
		t, err := parseTimestamp("expiresAt", v)
		var fe fieldErrors
		switch {
		case errors.As(err, &fe):
			*o.errs = append(*o.errs, fe...)
		case !t.After(now):
			o.Fail("expiresAt", "must be in the future")
		default:
			in.ExpiresAt = &t
		}
	}
	o.Strict()
	return in, grants, defaulted
}

// decodeTokenGrant reads one {scope, permission} item.
func decodeTokenGrant(it *object) (auth.Grant, bool) {
	var g auth.Grant
	good := true
	if it.Require("scope") {
		v, set := field[string](it, "scope").Value()
		switch {
		case !set:
			good = false
		case !auth.ValidArea(v):
			it.Fail("scope", "must be one of %s", tokenAreaList())
			good = false
		default:
			g.Area = auth.Area(v)
		}
	} else {
		good = false
	}
	if it.Require("permission") {
		v, set := field[string](it, "permission").Value()
		switch {
		case !set:
			good = false
		case v != string(auth.Read) && v != string(auth.Edit):
			it.Fail("permission", "must be READ or EDIT")
			good = false
		default:
			g.Level = auth.Level(v)
		}
	} else {
		good = false
	}
	it.Strict()
	return g, good
}

func tokenAreaList() string {
	names := make([]string, len(auth.Areas))
	for i, a := range auth.Areas {
		names[i] = string(a)
	}
	return strings.Join(names, ", ")
}

func (h *tokensHandler) remove(c *gin.Context) (int, any, error) {
	id, err := pathID(c, "token_id", 0)
	if err != nil {
		return 0, nil, err
	}
	revoked := h.auth.Expect(store.AuthChangeToken + id.String())
	t, err := h.store.DeleteAPIToken(c.Request.Context(), actor(c), orgID(c), id)
	if err != nil {
		revoked.Cancel()
		return 0, nil, err
	}
	// This replica stops honouring the secret now; every replica's authenticator hears of the
	// deletion from the database as it commits, and the answer waits (briefly) until all of
	// them acknowledged it.
	h.auth.Forget(t.ID)
	awaitRevocation(c, revoked)
	return http.StatusOK, gin.H{"id": t.ID.String(), "deleted": true}, nil
}

// revocationWait bounds how long a revoking request waits for its change to come back through
// the revocation feed; the change is committed either way.
const revocationWait = time.Second

// awaitRevocation waits (briefly) until every replica applied a revocation this request
// committed.
func awaitRevocation(c *gin.Context, e *auth.Expectation) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), revocationWait)
	defer cancel()
	e.Wait(ctx)
}

// tokenStatusJSON is the answer of verify: id is omitted for access tokens.
type tokenStatusJSON struct {
	ID     string `json:"id,omitempty"`
	Status string `json:"status"`
}

// verify reports whether the bearer token is usable (api/openapi/tokens.yaml): 401 only when no token
// is sent; an unknown or expired one is a failure envelope with HTTP 200.
func (h *tokensHandler) verify(c *gin.Context) (int, any, error) {
	cred, err := h.introspect(c)
	if err != nil {
		return 0, nil, err
	}
	out := tokenStatusJSON{Status: "active"}
	if cred.Kind == store.CredentialAPIToken {
		out.ID = cred.TokenID.String()
	}
	return http.StatusOK, out, nil
}

// permissions lists an API token's grants as "uptime_checks (read)". Access tokens are refused
// (a failure envelope with HTTP 200, like an invalid token): the contract defines the endpoint
// for API tokens only.
func (h *tokensHandler) permissions(c *gin.Context) (int, any, error) {
	cred, err := h.introspect(c)
	if err != nil {
		return 0, nil, err
	}
	if cred.Kind != store.CredentialAPIToken {
		return 0, nil, &apiError{Status: http.StatusOK, Code: http.StatusForbidden, Type: "api_token_required",
			Message: "this endpoint accepts API tokens only; an OAuth access token's permissions are the scopes it was granted"}
	}
	return http.StatusOK, gin.H{"permissions": auth.NewPermissions(cred.Grants).Describe()}, nil
}

// introspect authenticates the bearer token of verify and permissions, which need neither an
// area nor an organization.
func (h *tokensHandler) introspect(c *gin.Context) (store.Credential, error) {
	token, present := bearer(c)
	if !present {
		return store.Credential{}, &apiError{Status: http.StatusUnauthorized, Type: "unauthorized",
			Message: "missing bearer token: send Authorization: Bearer <token>"}
	}
	cred, err := h.auth.Authenticate(c.Request.Context(), token)
	if errors.Is(err, auth.ErrInvalidToken) {
		return store.Credential{}, &apiError{Status: http.StatusOK, Code: http.StatusUnauthorized, Type: "invalid_token", Message: err.Error()}
	}
	return cred, err
}
