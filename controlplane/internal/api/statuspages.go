package api

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha512"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// statusPagesHandler serves status pages and every sub-resource (api/openapi/status-page*.yaml),
// and the public summary.
type statusPagesHandler struct {
	pages statusPageService
}

var _ statusPageService = (*statuspage.Service)(nil)

func newStatusPagesHandler(d Deps) *statusPagesHandler {
	// New fails only without a store, and Deps always has one.
	sp, _ := statuspage.New(statuspage.Config{}, statuspage.Deps{Store: d.Store, Now: d.Now, Logger: d.Logger,
		LookupTXT: d.LookupTXT})
	return &statusPagesHandler{pages: sp}
}

// maxSPSearch bounds the search parameter of status page lists.
const maxSPSearch = 255

// spList reads page, per_page and search.
func spList(c *gin.Context) (page, string, error) {
	p, err := parsePage(c, genericPages)
	if err != nil {
		return p, "", err
	}
	search, err := searchQuery(c, maxSPSearch)
	return p, search, err
}

// subdomainPattern is the subdomain rule of api/openapi/status-pages.yaml.
var subdomainPattern = regexp.MustCompile(`^\w(?:[\w-]{0,61}\w)?$`)

// hostPattern is a DNS host name with at least two labels.
var hostPattern = regexp.MustCompile(`^(?i)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$`)

// maxPasswordLen is the page password's limit (0.5.0 changelog).
const maxPasswordLen = 4096

// hashPassword is PBKDF2-HMAC-SHA512 (210,000 iterations) with a random salt, stored as
// salt || key.
func hashPassword(pw string) []byte {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	key, err := pbkdf2.Key(sha512.New, pw, salt, 210_000, 32)
	if err != nil {
		panic(err) // only for invalid parameters, which these are not
	}
	return append(salt, key...)
}

// customDomain reduces a custom domain given as a URI (or a bare host) to its host name.
func customDomain(o *object, s string) string {
	if s == "" {
		return ""
	}
	host := s
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			o.Fail("custom_domain", "must be an http(s) URI or a host name, e.g. https://status.example.com")
			return ""
		}
		host = u.Hostname()
	} else if i := strings.IndexAny(host, "/:"); i >= 0 {
		host = host[:i]
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if len(host) > 253 || !hostPattern.MatchString(host) {
		o.Fail("custom_domain", "must name a host, e.g. https://status.example.com")
		return ""
	}
	return host
}

// readPageInput decodes the body shared by page create and update.
func readPageInput(o *object) store.StatusPageInput {
	var in store.StatusPageInput
	if o.Require("name") {
		if v, ok := field[string](o, "name").Value(); ok {
			if n := utf8.RuneCountInString(v); n < 1 || n > 100 {
				o.Fail("name", "must be 1 to 100 characters")
			}
			in.Name = v
		}
	}
	if o.Require("subdomain") {
		if v, ok := field[string](o, "subdomain").Value(); ok {
			if !subdomainPattern.MatchString(v) {
				o.Fail("subdomain", "must be 1 to 63 letters, digits, underscores and hyphens, not starting or ending with a hyphen")
			}
			in.Subdomain = v
		}
	}
	if v := field[string](o, "custom_domain"); v.Set {
		host := customDomain(o, v.V)
		in.CustomDomain = &host
	}
	if v := field[string](o, "password"); v.Set {
		var hash []byte
		switch {
		case utf8.RuneCountInString(v.V) > maxPasswordLen:
			o.Fail("password", "must be at most %d characters", maxPasswordLen)
		case v.V != "":
			hash = hashPassword(v.V)
		}
		in.PasswordHash = &hash
	}
	if v := field[string](o, "description"); v.Set {
		in.Description = &v.V
	}
	if v := nonNull[bool](o, "hide_from_search_engines"); v.Set {
		in.HideFromSearchEngines = &v.V
	}
	if v := field[[]string](o, "allowed_ips"); v.Set {
		var canon []string // null: anyone may view the page (stored as NULL)
		if !v.Null {
			canon = make([]string, 0, len(v.V))
		}
		for i, s := range v.V {
			if p, err := netip.ParsePrefix(s); err == nil {
				canon = append(canon, p.Masked().String())
			} else if a, err := netip.ParseAddr(s); err == nil {
				canon = append(canon, a.String())
			} else {
				o.Fail("allowed_ips", "item %d (%q) must be an IP address or a CIDR range", i, s)
			}
		}
		in.AllowedIPs = &canon
	}
	o.Strict()
	return in
}

func (h *statusPagesHandler) list(c *gin.Context) (int, any, error) {
	p, search, err := spList(c)
	if err != nil {
		return 0, nil, err
	}
	items, total, err := h.pages.ListStatusPages(c, orgID(c), search, p.PerPage, p.Offset())
	return listed(items, p, total, err)
}

func (h *statusPagesHandler) create(c *gin.Context) (int, any, error) {
	o, err := readObject(c)
	if err != nil {
		return 0, nil, err
	}
	in := readPageInput(o)
	if err := o.Err(); err != nil {
		return 0, nil, err
	}
	page, err := h.pages.CreateStatusPage(c, actor(c), orgID(c), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, page.Identity(), nil
}

func (h *statusPagesHandler) get(c *gin.Context, pageID uuid.UUID) (int, any, error) {
	return done(h.pages.GetStatusPage(c, orgID(c), pageID))
}

// pageUpdated is the update response: the identity, the description and the search flag.
type pageUpdated struct {
	statuspage.Identity
	Description           *string `json:"description,omitempty"`
	HideFromSearchEngines bool    `json:"hide_from_search_engines"`
}

// update is POST (the contract) and PATCH (what the Terraform provider sends) on the item
// path: name and subdomain are required, other fields left out keep their value.
func (h *statusPagesHandler) update(c *gin.Context, pageID uuid.UUID) (int, any, error) {
	o, err := readObject(c)
	if err != nil {
		return 0, nil, err
	}
	in := readPageInput(o)
	if err := o.Err(); err != nil {
		return 0, nil, err
	}
	page, err := h.pages.UpdateStatusPage(c, actor(c), orgID(c), pageID, in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, pageUpdated{Identity: page.Identity(), Description: page.Description, HideFromSearchEngines: page.HideFromSearchEngines}, nil
}

// customDomain is GET /v1/status_pages/{id}/custom_domain (an extension): the record to
// publish and whether the domain is verified.
func (h *statusPagesHandler) customDomain(c *gin.Context, pageID uuid.UUID) (int, any, error) {
	return done(h.pages.CustomDomainStatus(c, orgID(c), pageID))
}

// verifyCustomDomain is POST /v1/status_pages/{id}/custom_domain/verify (an extension): it
// looks the challenge record up now.
func (h *statusPagesHandler) verifyCustomDomain(c *gin.Context, pageID uuid.UUID) (int, any, error) {
	return done(h.pages.VerifyCustomDomain(c, actor(c), orgID(c), pageID))
}

func (h *statusPagesHandler) remove(c *gin.Context, pageID uuid.UUID) (int, any, error) {
	return removed(pageID.String(), h.pages.DeleteStatusPage(c, actor(c), orgID(c), pageID))
}

// summary is the public GET /v1/status_pages/{status_page_subdomain}/summary. It is routed
// with the :status_page_id parameter name (gin needs one name per path position) and reads
// the value as the subdomain. Unknown and private pages are 404.
func (h *statusPagesHandler) summary(c *gin.Context) (int, any, error) {
	c.Set(ctxResource, "status page")
	sub := c.Param("status_page_id")
	if sub == "" || !subdomainPattern.MatchString(sub) {
		if sub == "" || len(sub) > 63 {
			return 0, nil, badRequest("status_page_subdomain must be 1 to 63 characters")
		}
		return 0, nil, notFound("status page")
	}
	return done(h.pages.GetStatusPageSummary(c, sub))
}

// componentStatus records a broken component status rule.
func componentStatus(o *object, name, v string) {
	if !slices.Contains(statuspage.ComponentStatuses, v) {
		o.Fail(name, "must be one of %s", strings.Join(statuspage.ComponentStatuses, ", "))
	}
}

// spIDList decodes a required or optional array of ids; ok is false when absent or invalid.
func spIDList(o *object, name string) ([]uuid.UUID, bool) {
	v := nonNull[[]string](o, name)
	if !v.Set {
		return nil, false
	}
	out := make([]uuid.UUID, 0, len(v.V))
	seen := map[uuid.UUID]bool{}
	for i, s := range v.V {
		id, err := uuid.Parse(s)
		if err != nil || len(s) != 36 {
			o.Fail(name, "item %d (%q) is not an id", i, s)
			return nil, false
		}
		if seen[id] {
			o.Fail(name, "item %d (%q) is listed twice", i, s)
			return nil, false
		}
		seen[id] = true
		out = append(out, id)
	}
	return out, true
}

// onPage serves a route whose only path id is the status page's (the page itself, and the
// lists, creates and sort orders of its sub-resources): f gets the page id.
func onPage(f func(c *gin.Context, pageID uuid.UUID) (int, any, error)) handlerFn {
	return func(c *gin.Context) (int, any, error) {
		id, err := pageParam(c)
		if err != nil {
			return 0, nil, err
		}
		return f(c, id)
	}
}

// pageParam reads the status_page_id of a route whose only path id it is; a 404 there can
// only be about the page.
func pageParam(c *gin.Context) (uuid.UUID, error) {
	c.Set(ctxResource, "status page")
	return pathID(c, "status_page_id", minPathIDLen)
}
