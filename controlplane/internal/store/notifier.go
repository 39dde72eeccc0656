package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// The notifier's stage 2: claiming due deliveries with a lease, recording attempts, and the
// delivery log the API lists. Stage 1 (fan-out) is in outbox.go.

// DueDelivery is a delivery claimed for one attempt.
type DueDelivery struct {
	ID        uuid.UUID
	OrgID     uuid.UUID
	EventID   uuid.UUID
	EventType string
	Channel   string
	Target    uuid.UUID // webhook, user, subscriber or invitation id
	WebhookID *uuid.UUID
	Address   *string // e-mail recipient
	Attempt   int     // the number of this attempt (1 = first)
	Tries     int     // attempts since the last (re)send, before this one: the backoff step
	CreatedAt time.Time
	Body      []byte        // the rendered document
	Event     event.Encoded // the stored event (e-mails and integration messages render from it; empty for webhooks)
	URL       string        // webhook URL template
	Secret    string        // webhook signing secret, "whsec_..."
	// AlertPriority is the event's (LOW or HIGH).
	AlertPriority string
	// IntegrationID, IntegrationType and Settings (opened) name an integration target.
	IntegrationID   *uuid.UUID
	IntegrationType string
	Settings        []byte
}

// ClaimDeliveries claims up to limit due deliveries: each is locked FOR UPDATE SKIP LOCKED, its
// attempt counter taken and its next_attempt_at pushed lease into the future, in one statement.
// A replica that dies mid-attempt thus leaves the delivery due again once the lease runs out.
func (s *Store) ClaimDeliveries(ctx context.Context, limit int, lease time.Duration) ([]DueDelivery, error) {
	now := s.now()
	rows, err := s.q.ClaimDeliveries(ctx, dbsqlc.ClaimDeliveriesParams{Now: now, BatchLimit: int64(limit), LeaseUntil: now.Add(lease)})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]DueDelivery, 0, len(rows))
	for _, r := range rows {
		d := DueDelivery{ID: r.ID, OrgID: r.OrgID, EventID: r.EventID, EventType: r.EventType, Channel: r.Channel,
			Target: r.Target, WebhookID: r.WebhookID, IntegrationID: r.IntegrationID, Address: r.Address, Attempt: int(r.Attempts), Tries: int(r.Tries),
			CreatedAt: r.CreatedAt, Body: r.Body}
		if r.Url != nil {
			d.URL = *r.Url
		}
		if r.AlertPriority != nil {
			d.AlertPriority = *r.AlertPriority
		}
		if r.IntegrationType != nil {
			d.IntegrationType = *r.IntegrationType
		}
		if r.SettingsEnc != nil {
			pt, err := s.sealer.Open(r.SettingsEnc)
			if err != nil {
				return nil, fmt.Errorf("open settings of integration %s: %w", d.IntegrationID, err)
			}
			d.Settings = pt
		}
		if (r.Channel == ChannelEmail || r.Channel == ChannelIntegration) && r.EventVersion != nil {
			d.Event = event.Encoded{Type: r.EventType, Version: *r.EventVersion, Payload: r.Payload}
		}
		if r.SecretEnc != nil {
			pt, err := s.sealer.Open(r.SecretEnc)
			if err != nil {
				return nil, fmt.Errorf("open secret of webhook %s: %w", d.WebhookID, err)
			}
			d.Secret = string(pt)
		}
		out = append(out, d)
	}
	return out, nil
}

// Attempt is the outcome of one delivery attempt.
type Attempt struct {
	At         time.Time
	Latency    time.Duration
	StatusCode *int   // HTTP status; nil when no response came
	Error      string // "" on success
	// Status is the delivery's status afterwards: DELIVERED, PENDING (retried at NextAttempt),
	// FAILED (retries exhausted) or SKIPPED (the channel is not configured).
	Status      string
	NextAttempt time.Time
}

// Recorded is a claimed delivery with the outcome of its attempt.
type Recorded struct {
	Delivery DueDelivery
	Attempt  Attempt
}

// RecordAttempts logs attempts of claimed deliveries and moves each delivery on, in one
// transaction. A delivery is changed only while its claim is still the latest (the attempt
// number still matches), so a replica whose lease ran out cannot overwrite a newer outcome.
func (s *Store) RecordAttempts(ctx context.Context, recs []Recorded) error {
	if len(recs) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(recs))
	for i, r := range recs {
		ids[i] = r.Delivery.ID
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		// Lock the deliveries so that one deleted with its webhook meanwhile is skipped rather
		// than failing the whole batch.
		live, err := q.LockDeliveries(ctx, ids)
		if err != nil {
			return fmt.Errorf("lock deliveries: %w", err)
		}
		exists := make(map[uuid.UUID]bool, len(live))
		for _, id := range live {
			exists[id] = true
		}
		var attempts []dbsqlc.InsertDeliveryAttemptParams
		var finished []dbsqlc.FinishAttemptParams
		for _, r := range recs {
			d, a := r.Delivery, r.Attempt
			if !exists[d.ID] {
				continue
			}
			var errText *string
			if a.Error != "" {
				errText = ptr(a.Error)
			}
			var code *int32
			if a.StatusCode != nil {
				code = ptr(int32(*a.StatusCode))
			}
			var delivered *time.Time
			next := a.NextAttempt
			if a.Status == DeliveryDelivered {
				delivered = &a.At
			}
			if a.Status != DeliveryPending {
				next = a.At
			}
			attempts = append(attempts, dbsqlc.InsertDeliveryAttemptParams{DeliveryID: d.ID, Number: int32(d.Attempt),
				AttemptedAt: a.At, LatencyMs: float64(a.Latency.Microseconds()) / 1000, StatusCode: code, Error: errText})
			finished = append(finished, dbsqlc.FinishAttemptParams{ID: d.ID, Attempt: int32(d.Attempt), Status: a.Status,
				NextAttemptAt: next, LastStatusCode: code, LastError: errText, DeliveredAt: delivered})
		}
		if len(attempts) == 0 {
			return nil
		}
		var batchErr error
		keep := func(_ int, err error) {
			if batchErr == nil {
				batchErr = err
			}
		}
		q.InsertDeliveryAttempt(ctx, attempts).Exec(keep)
		q.FinishAttempt(ctx, finished).Exec(keep)
		if batchErr != nil {
			return fmt.Errorf("record %d delivery attempts: %w", len(recs), batchErr)
		}
		return nil
	})
}

// Delivery is one entry of a webhook's delivery log.
type Delivery struct {
	ID             uuid.UUID
	WebhookID      uuid.UUID
	IntegrationID  uuid.UUID // set for the deliveries of an integration instead of WebhookID
	EventID        uuid.UUID
	EventType      string
	Status         string
	AttemptCount   int
	NextAttemptAt  *time.Time // nil unless PENDING
	LastStatusCode *int
	LastError      *string
	CreatedAt      time.Time
	DeliveredAt    *time.Time
	Attempts       []DeliveryAttempt
}

// DeliveryAttempt is one recorded attempt.
type DeliveryAttempt struct {
	Number      int
	AttemptedAt time.Time
	LatencyMs   float64
	StatusCode  *int
	Error       *string
}

func deliveryOf(r dbsqlc.ListDeliveriesRow) Delivery {
	d := Delivery{ID: r.ID, EventID: r.EventID, EventType: r.EventType, Status: r.Status, AttemptCount: int(r.Attempts),
		LastStatusCode: intPtr(r.LastStatusCode), LastError: r.LastError, CreatedAt: r.CreatedAt, DeliveredAt: r.DeliveredAt}
	if r.WebhookID != nil {
		d.WebhookID = *r.WebhookID
	}
	if r.Status == DeliveryPending {
		d.NextAttemptAt = ptr(r.NextAttemptAt)
	}
	return d
}

// ListDeliveries returns one page of a webhook's deliveries, newest first, each with its
// attempts, and the total. A webhook of another organization is ErrNotFound.
func (s *Store) ListDeliveries(ctx context.Context, orgID, webhookID uuid.UUID, limit, offset int64) ([]Delivery, int64, error) {
	exists, err := s.q.WebhookExists(ctx, dbsqlc.WebhookExistsParams{OrgID: orgID, ID: webhookID})
	if err != nil {
		return nil, 0, translate(err)
	}
	if !exists {
		return nil, 0, ErrNotFound
	}
	total, err := s.q.CountDeliveries(ctx, dbsqlc.CountDeliveriesParams{OrgID: orgID, WebhookID: &webhookID})
	if err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.q.ListDeliveries(ctx, dbsqlc.ListDeliveriesParams{OrgID: orgID, WebhookID: &webhookID,
		PageLimit: limit, PageOffset: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	list := make([]Delivery, len(rows))
	for i, r := range rows {
		list[i] = deliveryOf(r)
	}
	if err := s.loadAttempts(ctx, list); err != nil {
		return nil, 0, err
	}
	return list, total, nil
}

func (s *Store) loadAttempts(ctx context.Context, list []Delivery) error {
	if len(list) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(list))
	index := map[uuid.UUID]*Delivery{}
	for i := range list {
		ids[i] = list[i].ID
		list[i].Attempts = []DeliveryAttempt{}
		index[list[i].ID] = &list[i]
	}
	rows, err := s.q.DeliveryAttempts(ctx, ids)
	if err != nil {
		return translate(err)
	}
	for _, a := range rows {
		d := index[a.DeliveryID]
		d.Attempts = append(d.Attempts, DeliveryAttempt{Number: int(a.Number), AttemptedAt: a.AttemptedAt,
			LatencyMs: a.LatencyMs, StatusCode: intPtr(a.StatusCode), Error: a.Error})
	}
	return nil
}

// ErrDeliveryPending is returned by ResendDelivery for a delivery that is still being tried.
var ErrDeliveryPending = &ConflictError{Type: "delivery_pending", Code: 409,
	Message: "the delivery is still pending: it is retried automatically"}

// ResendDelivery makes a finished (delivered, failed or skipped) delivery due again at once,
// with a fresh retry schedule, and audits it. The same event id is sent again.
func (s *Store) ResendDelivery(ctx context.Context, actor Actor, orgID, webhookID, deliveryID uuid.UUID) (Delivery, error) {
	var d Delivery
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		status, err := q.LockDeliveryStatus(ctx, dbsqlc.LockDeliveryStatusParams{OrgID: orgID, WebhookID: &webhookID, ID: deliveryID})
		if err != nil {
			return err
		}
		if status == DeliveryPending {
			return ErrDeliveryPending
		}
		r, err := q.ResendDelivery(ctx, dbsqlc.ResendDeliveryParams{ID: deliveryID, Now: s.now()})
		if err != nil {
			return err
		}
		d = deliveryOf(dbsqlc.ListDeliveriesRow(r))
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "delivery_resent", AuditableType: "Webhook",
			AuditableID: webhookID.String(), Metadata: map[string]any{"delivery_id": deliveryID.String(), "event_id": d.EventID.String()}})
	})
	if err != nil {
		return d, err
	}
	list := []Delivery{d}
	if err := s.loadAttempts(ctx, list); err != nil {
		return d, err
	}
	return list[0], nil
}
