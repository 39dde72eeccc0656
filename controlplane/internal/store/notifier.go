package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The notifier's SQL: fanning outbox events out into deliveries, claiming due deliveries with a
// lease, recording attempts, and the delivery log the API lists. The two stages are described
// in migrations/0003_webhooks.sql.

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
)

// PendingEvent is an outbox row that has not been fanned out yet.
type PendingEvent struct {
	ID            uuid.UUID
	OrgID         uuid.UUID
	EventType     string
	CheckID       *uuid.UUID
	IncidentID    *uuid.UUID
	AlertPriority string
	Payload       []byte
	CreatedAt     time.Time
	Attempts      int // failed fan-out attempts so far
}

// Fanout is where one event goes, as the notifier decided it.
type Fanout struct {
	Body []byte // the document every channel sends (JSON)
	// ResourceKind and ResourceID name what the event is about: "check", "heartbeat" or
	// "status_page"; webhooks associated with it (and subscribed to the event type) receive it.
	ResourceKind string
	ResourceID   uuid.UUID
	// WebhookIDs are webhooks the resource itself lists (a check's webhook_alerts); they receive
	// the event when subscribed to its type, associated or not.
	WebhookIDs []uuid.UUID
	// UserIDs are e-mailed (a check's user_alerts); only members of the organization are.
	UserIDs []uuid.UUID
	// Mail names the recipients of a subscriber or invitation e-mail (subscriber_mail.go).
	Mail *MailFanout
}

// DispatchResult counts what one DispatchOutbox call did.
type DispatchResult struct {
	Events     int // events fanned out
	Deliveries int // deliveries created
	Failed     int // events whose fan-out failed (retried later)
}

// DispatchOutbox fans out up to limit due outbox events, in one transaction that locks them
// FOR UPDATE SKIP LOCKED (so replicas share the work and no event is fanned out twice). route
// decides each event's destinations; when it fails, the event is retried after retryAfter.
func (s *Store) DispatchOutbox(ctx context.Context, limit int, retryAfter time.Duration,
	route func(ctx context.Context, ev PendingEvent) (Fanout, error)) (DispatchResult, error) {
	var res DispatchResult
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		res = DispatchResult{}
		now := s.now()
		rows, err := tx.Query(ctx, `SELECT id, org_id, event_type, check_id, incident_id, alert_priority, payload, created_at, attempts
			FROM outbox WHERE delivered_at IS NULL AND next_attempt_at <= $1
			ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED`, now, limit)
		if err != nil {
			return fmt.Errorf("claim outbox events: %w", err)
		}
		events, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (PendingEvent, error) {
			var e PendingEvent
			err := r.Scan(&e.ID, &e.OrgID, &e.EventType, &e.CheckID, &e.IncidentID, &e.AlertPriority, &e.Payload, &e.CreatedAt, &e.Attempts)
			return e, err
		})
		if err != nil {
			return fmt.Errorf("claim outbox events: %w", err)
		}
		for _, ev := range events {
			f, err := route(ctx, ev)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				res.Failed++
				if _, err := tx.Exec(ctx, `UPDATE outbox SET attempts = attempts + 1, last_error = $2, next_attempt_at = $3 WHERE id = $1`,
					ev.ID, err.Error(), now.Add(retryAfter)); err != nil {
					return fmt.Errorf("record fan-out failure of event %s: %w", ev.ID, err)
				}
				continue
			}
			n, err := fanOut(ctx, tx, ev, f, now)
			if err != nil {
				return fmt.Errorf("fan out event %s: %w", ev.ID, err)
			}
			res.Events++
			res.Deliveries += n
		}
		return nil
	})
	return res, err
}

// fanOut inserts the deliveries of one event and marks it dispatched.
func fanOut(ctx context.Context, tx pgx.Tx, ev PendingEvent, f Fanout, now time.Time) (int, error) {
	if f.WebhookIDs == nil {
		f.WebhookIDs = []uuid.UUID{}
	}
	if f.UserIDs == nil {
		f.UserIDs = []uuid.UUID{}
	}
	tag, err := tx.Exec(ctx, `INSERT INTO deliveries (id, org_id, event_id, event_type, channel, target, webhook_id,
			status, next_attempt_at, created_at)
		SELECT gen_random_uuid(), w.org_id, $2, $3, 'webhook', w.id, w.id, 'PENDING', $7, $7
		FROM webhooks w
		WHERE w.org_id = $1 AND $3 = ANY (w.events) AND (
			w.id = ANY ($4::uuid[])
			OR ($5 = 'check' AND EXISTS (SELECT 1 FROM webhook_checks l WHERE l.webhook_id = w.id AND l.check_id = $6))
			OR ($5 = 'heartbeat' AND EXISTS (SELECT 1 FROM webhook_heartbeats l WHERE l.webhook_id = w.id AND l.heartbeat_id = $6))
			OR ($5 = 'status_page' AND EXISTS (SELECT 1 FROM webhook_status_pages l WHERE l.webhook_id = w.id AND l.status_page_id = $6)))
		ON CONFLICT (event_id, channel, target) DO NOTHING`,
		ev.OrgID, ev.ID, ev.EventType, f.WebhookIDs, f.ResourceKind, f.ResourceID, now)
	if err != nil {
		return 0, err
	}
	n := int(tag.RowsAffected())
	tag, err = tx.Exec(ctx, `INSERT INTO deliveries (id, org_id, event_id, event_type, channel, target, address,
			status, next_attempt_at, created_at)
		SELECT gen_random_uuid(), m.org_id, $2, $3, 'email', u.id, u.email, 'PENDING', $5, $5
		FROM users u JOIN memberships m ON m.user_id = u.id AND m.org_id = $1
		WHERE u.id = ANY ($4::uuid[])
		ON CONFLICT (event_id, channel, target) DO NOTHING`, ev.OrgID, ev.ID, ev.EventType, f.UserIDs, now)
	if err != nil {
		return 0, err
	}
	n += int(tag.RowsAffected())
	if f.Mail != nil {
		k, err := fanOutMail(ctx, tx, ev, *f.Mail, now)
		if err != nil {
			return 0, err
		}
		n += k
	}
	_, err = tx.Exec(ctx, `UPDATE outbox SET body = $2, delivered_at = $3, attempts = attempts + 1, last_error = NULL WHERE id = $1`,
		ev.ID, f.Body, now)
	return n, err
}

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
	Body      []byte
	URL       string // webhook URL template
	Secret    string // webhook signing secret, "whsec_..."
}

// ClaimDeliveries claims up to limit due deliveries: each is locked FOR UPDATE SKIP LOCKED, its
// attempt counter taken and its next_attempt_at pushed lease into the future, in one statement.
// A replica that dies mid-attempt thus leaves the delivery due again once the lease runs out.
func (s *Store) ClaimDeliveries(ctx context.Context, limit int, lease time.Duration) ([]DueDelivery, error) {
	now := s.now()
	rows, err := s.pool.Query(ctx, `WITH due AS (
			SELECT id FROM deliveries WHERE status = 'PENDING' AND next_attempt_at <= $1
			ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
		UPDATE deliveries d SET attempts = d.attempts + 1, next_attempt_at = $3
		FROM due WHERE d.id = due.id
		RETURNING d.id, d.org_id, d.event_id, d.event_type, d.channel, d.target, d.webhook_id, d.address, d.attempts, d.tries, d.created_at,
			(SELECT o.body FROM outbox o WHERE o.id = d.event_id),
			(SELECT w.url FROM webhooks w WHERE w.id = d.webhook_id),
			(SELECT w.secret_enc FROM webhooks w WHERE w.id = d.webhook_id)`, now, limit, now.Add(lease))
	if err != nil {
		return nil, translate(err)
	}
	var out []DueDelivery
	for rows.Next() {
		var d DueDelivery
		var url *string
		var sealed []byte
		if err := rows.Scan(&d.ID, &d.OrgID, &d.EventID, &d.EventType, &d.Channel, &d.Target, &d.WebhookID, &d.Address,
			&d.Attempt, &d.Tries, &d.CreatedAt, &d.Body, &url, &sealed); err != nil {
			rows.Close()
			return nil, translate(err)
		}
		if url != nil {
			d.URL = *url
		}
		if sealed != nil {
			pt, err := s.sealer.Open(sealed)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("open secret of webhook %s: %w", d.WebhookID, err)
			}
			d.Secret = string(pt)
		}
		out = append(out, d)
	}
	return out, translate(rows.Err())
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
		// Lock the deliveries (in id order, like every other locker) so that one deleted with
		// its webhook meanwhile is skipped rather than failing the whole batch.
		rows, err := tx.Query(ctx, `SELECT id FROM deliveries WHERE id = ANY($1) ORDER BY id FOR UPDATE`, ids)
		if err != nil {
			return fmt.Errorf("lock deliveries: %w", err)
		}
		live, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		if err != nil {
			return fmt.Errorf("lock deliveries: %w", err)
		}
		exists := make(map[uuid.UUID]bool, len(live))
		for _, id := range live {
			exists[id] = true
		}
		b := &pgx.Batch{}
		for _, r := range recs {
			d, a := r.Delivery, r.Attempt
			if !exists[d.ID] {
				continue
			}
			var errText *string
			if a.Error != "" {
				e := a.Error
				errText = &e
			}
			var delivered *time.Time
			next := a.NextAttempt
			if a.Status == DeliveryDelivered {
				delivered = &a.At
			}
			if a.Status != DeliveryPending {
				next = a.At
			}
			b.Queue(`INSERT INTO delivery_attempts (delivery_id, number, attempted_at, latency_ms, status_code, error)
				VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
				d.ID, d.Attempt, a.At, float64(a.Latency.Microseconds())/1000, a.StatusCode, errText)
			b.Queue(`UPDATE deliveries SET status = $3, tries = tries + 1, next_attempt_at = $4,
					last_status_code = $5, last_error = $6, delivered_at = coalesce($7, delivered_at)
				WHERE id = $1 AND attempts = $2`, d.ID, d.Attempt, a.Status, next, a.StatusCode, errText, delivered)
		}
		if b.Len() == 0 {
			return nil
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("record %d delivery attempts: %w", len(recs), err)
		}
		return nil
	})
}

// Delivery is one entry of a webhook's delivery log.
type Delivery struct {
	ID             uuid.UUID
	WebhookID      uuid.UUID
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

const deliveryColumns = `id, webhook_id, event_id, event_type, status, attempts,
	CASE WHEN status = 'PENDING' THEN next_attempt_at END, last_status_code, last_error, created_at, delivered_at`

func scanDelivery(row pgx.Row) (Delivery, error) {
	var d Delivery
	err := row.Scan(&d.ID, &d.WebhookID, &d.EventID, &d.EventType, &d.Status, &d.AttemptCount, &d.NextAttemptAt,
		&d.LastStatusCode, &d.LastError, &d.CreatedAt, &d.DeliveredAt)
	return d, err
}

// ListDeliveries returns one page of a webhook's deliveries, newest first, each with its
// attempts, and the total. A webhook of another organization is ErrNotFound.
func (s *Store) ListDeliveries(ctx context.Context, orgID, webhookID uuid.UUID, limit, offset int64) ([]Delivery, int64, error) {
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhooks WHERE org_id = $1 AND id = $2)`, orgID, webhookID).Scan(&exists); err != nil {
		return nil, 0, translate(err)
	}
	if !exists {
		return nil, 0, ErrNotFound
	}
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM deliveries WHERE org_id = $1 AND webhook_id = $2`, orgID, webhookID).Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE org_id = $1 AND webhook_id = $2
		ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`, orgID, webhookID, limit, offset)
	if err != nil {
		return nil, 0, translate(err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Delivery, error) { return scanDelivery(r) })
	if err != nil {
		return nil, 0, translate(err)
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
	rows, err := s.pool.Query(ctx, `SELECT delivery_id, number, attempted_at, latency_ms, status_code, error
		FROM delivery_attempts WHERE delivery_id = ANY($1) ORDER BY delivery_id, number`, ids)
	if err != nil {
		return translate(err)
	}
	var id uuid.UUID
	var a DeliveryAttempt
	_, err = pgx.ForEachRow(rows, []any{&id, &a.Number, &a.AttemptedAt, &a.LatencyMs, &a.StatusCode, &a.Error}, func() error {
		d := index[id]
		d.Attempts = append(d.Attempts, a)
		return nil
	})
	return translate(err)
}

// ErrDeliveryPending is returned by ResendDelivery for a delivery that is still being tried.
var ErrDeliveryPending = &ConflictError{Type: "delivery_pending", Code: 409,
	Message: "the delivery is still pending: it is retried automatically"}

// ResendDelivery makes a finished (delivered, failed or skipped) delivery due again at once,
// with a fresh retry schedule, and audits it. The same event id is sent again.
func (s *Store) ResendDelivery(ctx context.Context, actor Actor, orgID, webhookID, deliveryID uuid.UUID) (Delivery, error) {
	var d Delivery
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var status string
		err := tx.QueryRow(ctx, `SELECT status FROM deliveries WHERE org_id = $1 AND webhook_id = $2 AND id = $3 FOR UPDATE`,
			orgID, webhookID, deliveryID).Scan(&status)
		if err != nil {
			return err
		}
		if status == DeliveryPending {
			return ErrDeliveryPending
		}
		d, err = scanDelivery(tx.QueryRow(ctx, `UPDATE deliveries SET status = 'PENDING', tries = 0, next_attempt_at = $2
			WHERE id = $1 RETURNING `+deliveryColumns, deliveryID, s.now()))
		if err != nil {
			return err
		}
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
