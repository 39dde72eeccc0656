package api

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
)

// webhookStore is what the webhooks handler needs from the store.
type webhookStore interface {
	OrganizationPlan(ctx context.Context, orgID uuid.UUID) (string, error)
	ResolveVars(ctx context.Context, orgID uuid.UUID, projectID *uuid.UUID, names []string) (map[string]store.ResolvedVar, error)
	CreateWebhook(ctx context.Context, actor store.Actor, orgID uuid.UUID, in store.NewWebhook) (store.Webhook, error)
	GetWebhook(ctx context.Context, orgID, id uuid.UUID) (store.Webhook, error)
	ListWebhooks(ctx context.Context, orgID uuid.UUID, search string, limit, offset int64) ([]store.Webhook, int64, error)
	UpdateWebhook(ctx context.Context, actor store.Actor, orgID, id uuid.UUID, p store.WebhookPatch, check func(store.Webhook) error) (store.Webhook, error)
	DeleteWebhook(ctx context.Context, actor store.Actor, orgID, id uuid.UUID) error
	ListDeliveries(ctx context.Context, orgID, webhookID uuid.UUID, limit, offset int64) ([]store.Delivery, int64, error)
	ResendDelivery(ctx context.Context, actor store.Actor, orgID, webhookID, deliveryID uuid.UUID) (store.Delivery, error)
}

var _ webhookStore = (*store.Store)(nil)

// webhooksHandler serves /v1/webhooks (api/openapi/webhooks.yaml) and the delivery
// log of each webhook.
type webhooksHandler struct{ st webhookStore }

func newWebhooksHandler(d Deps) *webhooksHandler { return &webhooksHandler{st: d.Store} }

// webhookEvents are the event types a webhook may subscribe to (api/openapi/webhooks.yaml), and the
// agent region events (a Vantage extension: runs of a region no agent serves go nowhere), and
// regional degradation (an extension, docs/detection.md), and the custom domain events (an
// extension: a page lost its claim of a domain, or its verification), and certificate expiry
// (an extension, docs/checks.md).
var webhookEvents = []string{"status_page.incident.started", "status_page.incident.updated", "status_page.incident.resolved",
	"uptime.down", "uptime.up", "heartbeat.down", "heartbeat.up", event.TypeRegionUnserved, event.TypeRegionServed,
	event.TypeUptimeDegraded, event.TypeUptimeRestored, event.TypeAgentUnhealthy, event.TypeAgentHealthy,
	event.TypeCustomDomainReleased, event.TypeCustomDomainUnverified,
	event.TypeCertificateExpiring, event.TypeCertificateExpired}

// Limits the contract leaves open.
const (
	maxWebhookURL         = 2048 // characters of the URL template
	maxWebhookDescription = 1024 // characters
)

// webhookRefJSON is an associated resource: {id, name}.
type webhookRefJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// webhookJSON is the webhook record; secret only on the create response.
type webhookJSON struct {
	ID          string           `json:"id"`
	URL         string           `json:"url"`
	Description *string          `json:"description"`
	Events      []string         `json:"events"`
	CreatedAt   string           `json:"created_at"`
	UpdatedAt   string           `json:"updated_at"`
	StatusPages []webhookRefJSON `json:"status_pages"`
	Checks      []webhookRefJSON `json:"checks"`
	Heartbeats  []webhookRefJSON `json:"heartbeats"`
	Secret      string           `json:"secret,omitempty"`
}

func webhookRefs(refs []store.NamedRef) []webhookRefJSON {
	out := make([]webhookRefJSON, len(refs))
	for i, r := range refs {
		out[i] = webhookRefJSON{ID: r.ID.String(), Name: r.Name}
	}
	return out
}

func toWebhookJSON(w store.Webhook) webhookJSON {
	events := w.Events
	if events == nil {
		events = []string{}
	}
	return webhookJSON{ID: w.ID.String(), URL: w.URL, Description: w.Description, Events: events,
		CreatedAt: formatTime(w.CreatedAt), UpdatedAt: formatTime(w.UpdatedAt),
		StatusPages: webhookRefs(w.StatusPages), Checks: webhookRefs(w.Checks), Heartbeats: webhookRefs(w.Heartbeats)}
}

// RenderCheckForWebhook renders a check as GET /v1/checks/{id} returns it, for the notifier's
// event documents, without the Basic-auth password: a credential is never sent to a receiver.
func RenderCheckForWebhook(c store.Check) any {
	v := renderCheck(c, false)
	if h, isHTTP := v.(httpCheckJSON); isHTTP {
		h.AuthPassword = nil
		return h
	}
	return v
}

// list is GET /v1/webhooks: page, per_page and search (URL or description, case-insensitive).
func (h *webhooksHandler) list(c *gin.Context) (int, any, error) {
	p, err := parsePage(c, genericPages)
	if err != nil {
		return 0, nil, err
	}
	items, total, err := h.st.ListWebhooks(c, orgID(c), c.Query("search"), p.PerPage, p.Offset())
	return listed(mapped(items, toWebhookJSON), p, total, err)
}

// webhookBody is a decoded create or update body.
type webhookBody struct {
	url, description Opt[string]
	events           []string
	assoc            store.WebhookAssociations
}

// decodeWebhook reads the body of POST (create) or PATCH; unknown properties are refused.
func (h *webhooksHandler) decodeWebhook(c *gin.Context, o *object, create bool) (webhookBody, error) {
	var b webhookBody
	if !create || o.Require("url") {
		b.url = nonNull[string](o, "url")
		if v, ok := b.url.Value(); ok {
			if err := h.checkURL(c, v); err != nil {
				o.Fail("url", "%s", err.Error())
			}
		}
	}
	b.description = field[string](o, "description")
	if v, ok := b.description.Value(); ok && utf8.RuneCountInString(v) > maxWebhookDescription {
		o.Fail("description", "must be at most %d characters", maxWebhookDescription)
	}
	if !create || o.Require("events") {
		if v := nonNull[[]string](o, "events"); v.Set {
			b.events = []string{}
			for _, e := range v.V {
				if !slices.Contains(webhookEvents, e) {
					o.Fail("events", "%q is not an event type; use %v", e, webhookEvents)
				} else if !slices.Contains(b.events, e) {
					b.events = append(b.events, e)
				}
			}
			if len(v.V) == 0 {
				o.Fail("events", "must have at least 1 item")
			}
		}
	}
	b.assoc.StatusPageIDs = webhookIDList(o, "status_page_ids", "status page")
	b.assoc.CheckIDs = webhookIDList(o, "check_ids", "check")
	b.assoc.HeartbeatIDs = webhookIDList(o, "heartbeat_ids", "heartbeat")
	if create && len(b.assoc.StatusPageIDs)+len(b.assoc.CheckIDs)+len(b.assoc.HeartbeatIDs) == 0 {
		o.Fail("", "at least one of status_page_ids, check_ids and heartbeat_ids must be non-empty")
	}
	o.Strict()
	return b, o.Err()
}

// webhookIDList decodes an id list: nil when absent, empty for null or []. An id that is not one of
// ours cannot name a resource, and is reported as unknown.
func webhookIDList(o *object, name, resource string) []uuid.UUID {
	v := field[[]string](o, name)
	if !v.Set {
		return nil
	}
	out := make([]uuid.UUID, 0, len(v.V))
	for _, s := range v.V {
		id, err := uuid.Parse(s)
		if err != nil || len(s) != 36 {
			o.Fail(name, "unknown %s %s", resource, s)
			continue
		}
		out = append(out, id)
	}
	return out
}

// checkURL accepts an absolute http(s) URL, or a template whose {{NAME}} references all name
// variables of the organization pool and which is such a URL once they are substituted
// (api/openapi/webhooks.yaml). Values are looked up to validate only; the stored URL keeps the references.
func (h *webhooksHandler) checkURL(c *gin.Context, raw string) error {
	if utf8.RuneCountInString(raw) > maxWebhookURL {
		return badRequest("must be at most %d characters", maxWebhookURL)
	}
	resolved := raw
	if names := check.VarRefs(raw); len(names) > 0 {
		vars, err := h.st.ResolveVars(c, orgID(c), nil, names)
		if err != nil {
			return err
		}
		for _, n := range names {
			if _, ok := vars[n]; !ok {
				return badRequest("references {{%s}}, which is not an environment variable of the organization", n)
			}
		}
		resolved = check.ReplaceVarRefs(raw, func(n string) (string, bool) { v, ok := vars[n]; return v.Value, ok })
	}
	u, err := url.Parse(resolved)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		if resolved != raw {
			return badRequest("must be an absolute http(s) URL once its variables are substituted")
		}
		return badRequest("must be an absolute http(s) URL, or a template with {{NAME}} variables")
	}
	return nil
}

// newWebhookSecret is "whsec_" and the base64 of 24 random bytes (Standard Webhooks).
func newWebhookSecret() string {
	key := make([]byte, 24)
	_, _ = rand.Read(key)
	return "whsec_" + base64.StdEncoding.EncodeToString(key)
}

// create is POST /v1/webhooks; it needs a paid plan (403 otherwise).
func (h *webhooksHandler) create(c *gin.Context) (int, any, error) {
	plan, err := h.st.OrganizationPlan(c, orgID(c))
	if err != nil {
		return 0, nil, err
	}
	if plan == "free" {
		return 0, nil, &apiError{Status: http.StatusForbidden, Type: "paid_plan_required", Message: "webhooks require a paid plan"}
	}
	o, err := readObject(c)
	if err != nil {
		return 0, nil, err
	}
	b, err := h.decodeWebhook(c, o, true)
	if err != nil {
		return 0, nil, err
	}
	secret := newWebhookSecret()
	w, err := h.st.CreateWebhook(c, actor(c), orgID(c), store.NewWebhook{URL: b.url.V, Description: b.description.Ptr(),
		Events: b.events, Secret: secret, WebhookAssociations: b.assoc})
	if err != nil {
		return 0, nil, err
	}
	out := toWebhookJSON(w)
	out.Secret = secret
	return http.StatusCreated, out, nil
}

func (h *webhooksHandler) get(c *gin.Context, id uuid.UUID) (int, any, error) {
	w, err := h.st.GetWebhook(c, orgID(c), id)
	return rendered(http.StatusOK, toWebhookJSON, w, err)
}

// update is PATCH /v1/webhooks/{id}: the create fields, all optional; a given id list replaces
// the stored one. The webhook must keep at least one association.
func (h *webhooksHandler) update(c *gin.Context, id uuid.UUID) (int, any, error) {
	o, err := readObject(c)
	if err != nil {
		return 0, nil, err
	}
	if o.Empty() {
		return 0, nil, badRequest("request body must change at least one field")
	}
	b, err := h.decodeWebhook(c, o, false)
	if err != nil {
		return 0, nil, err
	}
	p := store.WebhookPatch{URL: b.url.Ptr(), Description: b.description.Ptr(), DescriptionNull: b.description.Null,
		Events: b.events, WebhookAssociations: b.assoc}
	w, err := h.st.UpdateWebhook(c, actor(c), orgID(c), id, p, func(w store.Webhook) error {
		if len(w.Checks)+len(w.StatusPages)+len(w.Heartbeats) == 0 {
			return badRequest("a webhook needs at least one status page, check or heartbeat")
		}
		return nil
	})
	return rendered(http.StatusOK, toWebhookJSON, w, err)
}

func (h *webhooksHandler) remove(c *gin.Context, id uuid.UUID) (int, any, error) {
	return removed(id.String(), h.st.DeleteWebhook(c, actor(c), orgID(c), id))
}

// deliveryJSON is one entry of a delivery log: a webhook's, with webhook_id, or an
// integration's, with integration_id instead.
type deliveryJSON struct {
	ID             string                `json:"id"`
	WebhookID      string                `json:"webhook_id,omitempty"`
	IntegrationID  string                `json:"integration_id,omitempty"`
	EventID        string                `json:"event_id"`
	EventType      string                `json:"event_type"`
	Status         string                `json:"status"`
	AttemptCount   int                   `json:"attempt_count"`
	NextAttemptAt  *string               `json:"next_attempt_at"`
	LastStatusCode *int                  `json:"last_status_code"`
	LastError      *string               `json:"last_error"`
	CreatedAt      string                `json:"created_at"`
	DeliveredAt    *string               `json:"delivered_at"`
	Attempts       []deliveryAttemptJSON `json:"attempts"`
}

// deliveryAttemptJSON is one recorded attempt.
type deliveryAttemptJSON struct {
	Number      int     `json:"number"`
	AttemptedAt string  `json:"attempted_at"`
	LatencyMs   float64 `json:"latency_ms"`
	StatusCode  *int    `json:"status_code"`
	Error       *string `json:"error"`
}

func toDeliveryJSON(d store.Delivery) deliveryJSON {
	out := deliveryJSON{ID: d.ID.String(), WebhookID: d.WebhookID.String(), EventID: d.EventID.String(),
		EventType: d.EventType, Status: d.Status, AttemptCount: d.AttemptCount, NextAttemptAt: formatTimePtr(d.NextAttemptAt),
		LastStatusCode: d.LastStatusCode, LastError: d.LastError, CreatedAt: formatTime(d.CreatedAt),
		DeliveredAt: formatTimePtr(d.DeliveredAt), Attempts: make([]deliveryAttemptJSON, len(d.Attempts))}
	for i, a := range d.Attempts {
		out.Attempts[i] = deliveryAttemptJSON{Number: a.Number, AttemptedAt: formatTime(a.AttemptedAt), LatencyMs: a.LatencyMs,
			StatusCode: a.StatusCode, Error: a.Error}
	}
	return out
}

// deliveries is GET /v1/webhooks/{id}/deliveries: the delivery log, newest first, with every
// attempt of each delivery.
func (h *webhooksHandler) deliveries(c *gin.Context, id uuid.UUID) (int, any, error) {
	p, err := parsePage(c, genericPages)
	if err != nil {
		return 0, nil, err
	}
	items, total, err := h.st.ListDeliveries(c, orgID(c), id, p.PerPage, p.Offset())
	return listed(mapped(items, toDeliveryJSON), p, total, err)
}

// resend is POST /v1/webhooks/{id}/deliveries/{delivery_id}/resend: a finished delivery is sent
// again (same event id, fresh retry schedule); 409 while it is still pending.
func (h *webhooksHandler) resend(c *gin.Context, id uuid.UUID) (int, any, error) {
	c.Set(ctxResource, "delivery")
	deliveryID, err := pathID(c, "delivery_id", minPathIDLen)
	if err != nil {
		return 0, nil, err
	}
	d, err := h.st.ResendDelivery(c, actor(c), orgID(c), id, deliveryID)
	return rendered(http.StatusAccepted, toDeliveryJSON, d, err)
}
