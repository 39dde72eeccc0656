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

// The outbox: every producer queues its events here, in its own transaction, and the notifier
// fans them out (stage 1, DispatchOutbox) into deliveries (stage 2, notifier.go). The two
// stages are described in migrations/0003_webhooks.sql.

// OutboxEvent is one event waiting for the notifier, with the columns that name what it is
// about.
type OutboxEvent struct {
	ID    uuid.UUID
	OrgID uuid.UUID
	Event event.Event
	// CheckID is the check or heartbeat an alert is about; IncidentID the check incident of an
	// uptime alert or the status page incident of a status page event; StatusPageID the page of
	// a status page event or subscriber e-mail.
	CheckID, IncidentID, StatusPageID *uuid.UUID
	AlertPriority                     string // LOW or HIGH; "" is LOW
	CreatedAt                         time.Time
}

// insertOutbox queues events, due at once, through db (a transaction of the producer's). An
// event without an id gets one.
func insertOutbox(ctx context.Context, db dbsqlc.DBTX, events []OutboxEvent) error {
	if len(events) == 0 {
		return nil
	}
	params := make([]dbsqlc.InsertOutboxParams, len(events))
	for i, e := range events {
		enc, err := event.Encode(e.Event)
		if err != nil {
			return err
		}
		if e.ID == uuid.Nil {
			e.ID = uuid.Must(uuid.NewV7())
		}
		if e.AlertPriority == "" {
			e.AlertPriority = "LOW"
		}
		params[i] = dbsqlc.InsertOutboxParams{ID: e.ID, OrgID: e.OrgID, EventType: enc.Type, EventVersion: enc.Version,
			CheckID: e.CheckID, IncidentID: e.IncidentID, StatusPageID: e.StatusPageID, AlertPriority: e.AlertPriority,
			Payload: enc.Payload, CreatedAt: e.CreatedAt}
	}
	var err error
	dbsqlc.New(db).InsertOutbox(ctx, params).Exec(func(_ int, e error) {
		if err == nil {
			err = e
		}
	})
	if err != nil {
		return fmt.Errorf("queue %d events: %w", len(events), err)
	}
	return nil
}

// Delivery statuses.
const (
	DeliveryPending   = "PENDING"
	DeliveryDelivered = "DELIVERED"
	DeliveryFailed    = "FAILED"
	DeliverySkipped   = "SKIPPED"
)

// Delivery channels.
const (
	ChannelWebhook = "webhook"
	ChannelEmail   = "email"
	// ChannelIntegration delivers to an integration (Slack, PagerDuty, …) in its own format.
	ChannelIntegration = "integration"
)

// PendingEvent is an outbox row that has not been fanned out yet.
type PendingEvent struct {
	ID                                uuid.UUID
	OrgID                             uuid.UUID
	Event                             event.Event
	CheckID, IncidentID, StatusPageID *uuid.UUID
	AlertPriority                     string
	CreatedAt                         time.Time
	Attempts                          int // failed fan-out attempts so far
}

// ResourceOrganization is the Fanout.ResourceKind of events about a whole organization.
const ResourceOrganization = "organization"

// Fanout is where one event goes, as the notifier decided it.
type Fanout struct {
	Body []byte // the document every channel sends (JSON)
	// ResourceKind and ResourceID name what the event is about: "check", "heartbeat" or
	// "status_page"; webhooks associated with it (and subscribed to the event type) receive it.
	// ResourceOrganization (the id is the organization's): every webhook of the organization
	// subscribed to the event type receives it.
	ResourceKind string
	ResourceID   uuid.UUID
	// WebhookIDs are webhooks the resource itself lists (a check's webhook_alerts); they receive
	// the event when subscribed to its type, associated or not.
	WebhookIDs []uuid.UUID
	// UserIDs are e-mailed (a check's user_alerts); only members of the organization are.
	UserIDs []uuid.UUID
	// IntegrationIDs are integrations the resource lists (its slack_alerts, oncall_alerts, …);
	// a status page event also goes to the integrations attached to its page.
	IntegrationIDs []uuid.UUID
	// Mail names the recipients of a subscriber or invitation e-mail.
	Mail *MailFanout
}

// MailFanout names the e-mail recipients of a subscriber or invitation event (Fanout.Mail).
// Exactly one of its selectors is set.
type MailFanout struct {
	// SubscriberID: this subscriber while still unconfirmed (a confirmation e-mail).
	SubscriberID *uuid.UUID
	// PageID: every confirmed subscriber of the page; those in SELECTED_COMPONENTS mode only when
	// one of their components is among ComponentIDs.
	PageID       *uuid.UUID
	ComponentIDs []uuid.UUID
	// InvitationID: the invitation's address while it is pending.
	InvitationID *uuid.UUID
}

// DispatchResult counts what one DispatchOutbox call did.
type DispatchResult struct {
	Events     int // events fanned out
	Deliveries int // deliveries created
	Failed     int // events whose fan-out failed (retried later)
}

// DispatchOutbox fans out up to limit due outbox events, in one transaction that locks them
// FOR UPDATE SKIP LOCKED (so replicas share the work and no event is fanned out twice). route
// decides each event's destinations; when it fails, or the stored event does not decode, the
// event is retried after retryAfter.
func (s *Store) DispatchOutbox(ctx context.Context, limit int, retryAfter time.Duration,
	route func(ctx context.Context, ev PendingEvent) (Fanout, error)) (DispatchResult, error) {
	var res DispatchResult
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		res = DispatchResult{}
		q := s.q.WithTx(tx)
		now := s.now()
		rows, err := q.ClaimOutbox(ctx, dbsqlc.ClaimOutboxParams{Now: now, BatchLimit: int64(limit)})
		if err != nil {
			return fmt.Errorf("claim outbox events: %w", err)
		}
		for _, r := range rows {
			ev := PendingEvent{ID: r.ID, OrgID: r.OrgID, CheckID: r.CheckID, IncidentID: r.IncidentID,
				StatusPageID: r.StatusPageID, AlertPriority: r.AlertPriority, CreatedAt: r.CreatedAt, Attempts: int(r.Attempts)}
			var f Fanout
			ev.Event, err = event.Decode(event.Encoded{Type: r.EventType, Version: r.EventVersion, Payload: r.Payload})
			if err == nil {
				f, err = route(ctx, ev)
			}
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				res.Failed++
				if err := q.PostponeOutbox(ctx, dbsqlc.PostponeOutboxParams{ID: r.ID, LastError: ptr(err.Error()),
					NextAttemptAt: now.Add(retryAfter)}); err != nil {
					return fmt.Errorf("record fan-out failure of event %s: %w", r.ID, err)
				}
				continue
			}
			n, err := fanOut(ctx, q, ev, r.EventType, f, now)
			if err != nil {
				return fmt.Errorf("fan out event %s: %w", r.ID, err)
			}
			res.Events++
			res.Deliveries += n
		}
		return nil
	})
	return res, err
}

// fanOut inserts the deliveries of one event and marks it dispatched. The (event, channel,
// target) key makes a second fan-out of the same event a no-op.
func fanOut(ctx context.Context, q *dbsqlc.Queries, ev PendingEvent, eventType string, f Fanout, now time.Time) (int, error) {
	if f.WebhookIDs == nil {
		f.WebhookIDs = []uuid.UUID{}
	}
	if f.UserIDs == nil {
		f.UserIDs = []uuid.UUID{}
	}
	n, err := q.FanOutWebhooks(ctx, dbsqlc.FanOutWebhooksParams{EventID: ev.ID, EventType: eventType, Now: now, OrgID: ev.OrgID,
		WebhookIds: f.WebhookIDs, ResourceKind: f.ResourceKind, ResourceID: f.ResourceID})
	if err != nil {
		return 0, err
	}
	if f.IntegrationIDs == nil {
		f.IntegrationIDs = []uuid.UUID{}
	}
	k, err := q.FanOutIntegrations(ctx, dbsqlc.FanOutIntegrationsParams{EventID: ev.ID, EventType: eventType, Now: now,
		OrgID: ev.OrgID, IntegrationIds: f.IntegrationIDs, ResourceKind: f.ResourceKind, ResourceID: f.ResourceID})
	if err != nil {
		return 0, fmt.Errorf("fan out to integrations: %w", err)
	}
	n += k
	k, err = q.FanOutUserMails(ctx, dbsqlc.FanOutUserMailsParams{EventID: ev.ID, EventType: eventType, Now: now,
		OrgID: ev.OrgID, UserIds: f.UserIDs})
	if err != nil {
		return 0, err
	}
	n += k
	if m := f.Mail; m != nil {
		switch {
		case m.SubscriberID != nil:
			k, err = q.FanOutConfirmationMail(ctx, dbsqlc.FanOutConfirmationMailParams{EventID: ev.ID, EventType: eventType,
				Now: now, OrgID: ev.OrgID, SubscriberID: *m.SubscriberID})
		case m.PageID != nil:
			ids := m.ComponentIDs
			if ids == nil {
				ids = []uuid.UUID{}
			}
			k, err = q.FanOutSubscriberMails(ctx, dbsqlc.FanOutSubscriberMailsParams{EventID: ev.ID, EventType: eventType,
				Now: now, OrgID: ev.OrgID, StatusPageID: *m.PageID, ComponentIds: ids})
		case m.InvitationID != nil:
			k, err = q.FanOutInvitationMail(ctx, dbsqlc.FanOutInvitationMailParams{EventID: ev.ID, EventType: eventType,
				Now: now, OrgID: ev.OrgID, InvitationID: *m.InvitationID})
		default:
			k = 0
		}
		if err != nil {
			return 0, fmt.Errorf("fan out e-mails: %w", err)
		}
		n += k
	}
	// The alerts of one check or heartbeat (and the incident events of one page) reach each
	// target in the order they were raised: ClaimDeliveries holds a delivery back while an
	// earlier one of the same resource and target is pending.
	resource := ev.CheckID
	if resource == nil && f.ResourceKind == "status_page" {
		resource = &f.ResourceID
	}
	if n > 0 && resource != nil {
		if err := q.OrderDeliveries(ctx, dbsqlc.OrderDeliveriesParams{ResourceID: resource, EventAt: &ev.CreatedAt,
			EventID: ev.ID}); err != nil {
			return 0, fmt.Errorf("order deliveries: %w", err)
		}
	}
	return int(n), q.MarkOutboxDispatched(ctx, dbsqlc.MarkOutboxDispatchedParams{ID: ev.ID, Body: f.Body, Now: &now})
}

// OutboxChannel is the PostgreSQL notification channel an outbox insert signals.
const OutboxChannel = "vantage_outbox"

// ListenOutbox calls wake whenever events are queued in the outbox (a trigger NOTIFYs), until
// ctx ends or the connection fails. It holds one pool connection while it runs.
func (s *Store) ListenOutbox(ctx context.Context, wake func()) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return translate(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `LISTEN `+OutboxChannel); err != nil {
		return translate(err)
	}
	// The session's LISTEN must not outlive this call on a pooled connection.
	defer conn.Exec(context.WithoutCancel(ctx), `UNLISTEN `+OutboxChannel) //nolint:errcheck // best effort; the connection may be broken
	for {
		if _, err := conn.Conn().WaitForNotification(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			conn.Conn().Close(context.WithoutCancel(ctx)) //nolint:errcheck // discard a connection in an unknown state
			return translate(err)
		}
		wake()
	}
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }
