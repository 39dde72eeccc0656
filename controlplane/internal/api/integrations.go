package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/integration"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// integrationStore is what the integrations handler needs from the store.
type integrationStore interface {
	CreateIntegration(ctx context.Context, actor store.Actor, orgID uuid.UUID, in store.NewIntegration) (store.Integration, error)
	GetIntegration(ctx context.Context, orgID, id uuid.UUID) (store.Integration, error)
	ListIntegrations(ctx context.Context, orgID uuid.UUID, t string, limit, offset int64) ([]store.Integration, int64, error)
	UpdateIntegration(ctx context.Context, actor store.Actor, orgID, id uuid.UUID,
		change func(store.Integration) (store.IntegrationPatch, error)) (store.Integration, error)
	DeleteIntegration(ctx context.Context, actor store.Actor, orgID, id uuid.UUID) error
	IntegrationDeliveries(ctx context.Context, orgID, id uuid.UUID, limit, offset int64) ([]store.Delivery, int64, error)
}

var _ integrationStore = (*store.Store)(nil)

// IntegrationTester sends a test message to an integration now and reports what the provider
// answered (notifier.Notifier).
type IntegrationTester interface {
	TestIntegration(ctx context.Context, typ string, set integration.Settings, name string) integration.TestResult
}

// integrationsHandler serves /v1/integrations (a Vantage extension): the destinations the
// *_alerts lists of checks and heartbeats name, their delivery log and a test message.
type integrationsHandler struct {
	st     integrationStore
	tester IntegrationTester
}

func newIntegrationsHandler(d Deps) *integrationsHandler {
	return &integrationsHandler{st: d.Store, tester: d.Integrations}
}

// integrationJSON is the integration record; secrets in settings are redacted.
type integrationJSON struct {
	ID          string               `json:"id"`
	Name        string               `json:"name"`
	Type        string               `json:"type"`
	Settings    integration.Settings `json:"settings"`
	StatusPages []webhookRefJSON     `json:"status_pages"`
	CreatedAt   string               `json:"created_at"`
	UpdatedAt   string               `json:"updated_at"`
}

func toIntegrationJSON(in store.Integration) integrationJSON {
	return integrationJSON{ID: in.ID.String(), Name: in.Name, Type: in.Type, Settings: integration.Redacted(in.Type, in.Settings),
		StatusPages: webhookRefs(in.StatusPages), CreatedAt: formatTime(in.CreatedAt), UpdatedAt: formatTime(in.UpdatedAt)}
}

// list is GET /v1/integrations: page, per_page and type.
func (h *integrationsHandler) list(c *gin.Context) (int, any, error) {
	p, err := parsePage(c, genericPages)
	if err != nil {
		return 0, nil, err
	}
	t := c.Query("type")
	if t != "" && !integration.Valid(t) {
		return 0, nil, fieldErrors{{Field: "type", Message: "must be one of " + strings.Join(integration.Types(), ", ")}}
	}
	items, total, err := h.st.ListIntegrations(c, orgID(c), t, p.PerPage, p.Offset())
	return listed(mapped(items, toIntegrationJSON), p, total, err)
}

// integrationBody is a decoded create or update body.
type integrationBody struct {
	name     Opt[string]
	typ      string
	settings integration.Settings // given values
	cleared  []string             // settings given as null (PATCH: back to the default)
	setGiven bool
	pages    []uuid.UUID
}

// decodeIntegration reads the body of POST (create) or PATCH; unknown properties are refused.
func decodeIntegration(o *object, create bool) integrationBody {
	var b integrationBody
	if !create || o.Require("name") {
		b.name = nonNull[string](o, "name")
		if v, ok := b.name.Value(); ok {
			if strings.TrimSpace(v) == "" {
				o.Fail("name", "must not be empty")
			} else if utf8.RuneCountInString(v) > integration.MaxName {
				o.Fail("name", "must be at most %d characters", integration.MaxName)
			}
			b.name.V = strings.TrimSpace(v)
		}
	}
	if create {
		if o.Require("type") {
			if v, ok := nonNull[string](o, "type").Value(); ok {
				if !integration.Valid(v) {
					o.Fail("type", "must be one of %s", strings.Join(integration.Types(), ", "))
				}
				b.typ = v
			}
		}
	} else {
		o.Forbid("type", "cannot be changed; create an integration of the other type")
	}
	if create {
		o.Require("settings")
	}
	if raw := field[map[string]json.RawMessage](o, "settings"); raw.Set {
		if raw.Null {
			o.Fail("settings", "must be an object, not null")
		}
		b.setGiven = true
		b.settings = integration.Settings{}
		for k, v := range raw.V {
			if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
				b.cleared = append(b.cleared, k)
				continue
			}
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				o.Fail("settings."+k, "must be a string")
				continue
			}
			b.settings[k] = s
		}
	}
	b.pages = webhookIDList(o, "status_page_ids", "status page")
	o.Strict()
	return b
}

// validSettings validates settings of a type into o's errors.
func validSettings(o *object, typ string, set integration.Settings) integration.Settings {
	out, errs := integration.Validate(typ, set)
	for _, e := range errs {
		o.Fail(e.Field, "%s", e.Message)
	}
	return out
}

// create is POST /v1/integrations.
func (h *integrationsHandler) create(c *gin.Context) (int, any, error) {
	o, err := readObject(c)
	if err != nil {
		return 0, nil, err
	}
	b := decodeIntegration(o, true)
	if len(*o.errs) == 0 {
		if len(b.cleared) > 0 {
			for _, k := range b.cleared {
				o.Fail("settings."+k, "must be a string")
			}
		}
		b.settings = validSettings(o, b.typ, b.settings)
	}
	if err := o.Err(); err != nil {
		return 0, nil, err
	}
	in, err := h.st.CreateIntegration(c, actor(c), orgID(c), store.NewIntegration{Name: b.name.V, Type: b.typ,
		Settings: b.settings, StatusPageIDs: b.pages})
	return rendered(http.StatusCreated, toIntegrationJSON, in, err)
}

func (h *integrationsHandler) get(c *gin.Context, id uuid.UUID) (int, any, error) {
	in, err := h.st.GetIntegration(c, orgID(c), id)
	return rendered(http.StatusOK, toIntegrationJSON, in, err)
}

// update is PATCH /v1/integrations/{id}: name, settings and status_page_ids, all optional. The
// given settings are merged into the stored ones (null puts an optional one back to its
// default; a secret sent back in its redacted form is kept), then validated as a whole; a URL
// setting moved to another origin needs every secret given again.
func (h *integrationsHandler) update(c *gin.Context, id uuid.UUID) (int, any, error) {
	o, err := readObject(c)
	if err != nil {
		return 0, nil, err
	}
	if o.Empty() {
		return 0, nil, badRequest("request body must change at least one field")
	}
	b := decodeIntegration(o, false)
	if err := o.Err(); err != nil {
		return 0, nil, err
	}
	in, err := h.st.UpdateIntegration(c, actor(c), orgID(c), id, func(cur store.Integration) (store.IntegrationPatch, error) {
		p := store.IntegrationPatch{Name: cur.Name, Settings: cur.Settings, StatusPageIDs: b.pages}
		if v, ok := b.name.Value(); ok {
			p.Name = v
		}
		if b.setGiven {
			p.Settings = validSettings(o, cur.Type, integration.Merge(cur.Type, cur.Settings, b.settings, b.cleared))
			if o.Err() == nil { // settings that are valid, so their URLs can be compared
				requireSecretsOnMove(o, cur, p.Settings, b.settings)
			}
		}
		return p, o.Err()
	})
	return rendered(http.StatusOK, toIntegrationJSON, in, err)
}

// requireSecretsOnMove fails every secret setting a change leaves out while it moves a URL
// setting to another scheme, host or port: the stored secrets are never sent to a destination
// chosen by someone who could not read them.
func requireSecretsOnMove(o *object, cur store.Integration, next, given integration.Settings) {
	moved, missing := integration.SecretsToResend(cur.Type, cur.Settings, next, given)
	for _, k := range missing {
		o.Fail("settings."+k, "must be given again when settings.%s moves to another scheme, host or port; "+
			"the stored secret is never sent to a new destination", moved)
	}
}

// remove is DELETE /v1/integrations/{id}; 409 integration_in_use while a check or heartbeat
// names it.
func (h *integrationsHandler) remove(c *gin.Context, id uuid.UUID) (int, any, error) {
	return removed(id.String(), h.st.DeleteIntegration(c, actor(c), orgID(c), id))
}

// integrationTestJSON is what the provider answered a test message.
type integrationTestJSON struct {
	Delivered  bool    `json:"delivered"`
	StatusCode *int    `json:"status_code"`
	Response   string  `json:"response"`
	Error      *string `json:"error"`
	LatencyMs  float64 `json:"latency_ms"`
}

// test is POST /v1/integrations/{id}/test: a clearly marked test message is sent now; the
// answer says what the provider answered (also when it refused: that is what the test is for).
func (h *integrationsHandler) test(c *gin.Context, id uuid.UUID) (int, any, error) {
	in, err := h.st.GetIntegration(c, orgID(c), id)
	if err != nil {
		return 0, nil, err
	}
	if h.tester == nil {
		return 0, nil, &apiError{Status: http.StatusServiceUnavailable, Type: "notifier_unavailable",
			Message: "this replica does not send notifications"}
	}
	r := h.tester.TestIntegration(c, in.Type, in.Settings, in.Name)
	return http.StatusOK, integrationTestJSON{Delivered: r.Delivered, StatusCode: r.StatusCode, Response: r.Body,
		Error: strPtr(r.Error), LatencyMs: r.LatencyMs}, nil
}

// deliveries is GET /v1/integrations/{id}/deliveries: the delivery log, newest first, with
// every attempt of each delivery.
func (h *integrationsHandler) deliveries(c *gin.Context, id uuid.UUID) (int, any, error) {
	p, err := parsePage(c, genericPages)
	if err != nil {
		return 0, nil, err
	}
	items, total, err := h.st.IntegrationDeliveries(c, orgID(c), id, p.PerPage, p.Offset())
	return listed(mapped(items, func(d store.Delivery) deliveryJSON {
		out := toDeliveryJSON(d)
		out.WebhookID, out.IntegrationID = "", d.IntegrationID.String()
		return out
	}), p, total, err)
}
