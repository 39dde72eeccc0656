package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The e-mail flows of status page subscribers and invitations: their outbox events, their
// fan-out into one delivery per recipient, and the link tokens the e-mails carry.
//
// Tokens: a link token is 32 random bytes, base64url without padding (43 characters). The
// database keeps its SHA-256 (of the token string), which a clicked link is looked up by, and
// the token sealed with the store's Sealer, which the notifier opens when it renders the e-mail
// (SubscriberMail, InvitationMail). Neither the outbox payload nor the rendered body holds a
// token, and an e-mail whose recipient is gone by the time it is sent (unsubscribed, confirmed
// already, invitation accepted) is not sent.

// Event types of the e-mail flows. No webhook can subscribe to them; they only e-mail.
const (
	// EventSubscriberConfirmation asks a new subscriber to confirm (double opt-in).
	EventSubscriberConfirmation = "subscriber.confirmation"
	// EventSubscriberNotification tells a page's confirmed subscribers about an incident
	// update or a scheduled maintenance starting or ending.
	EventSubscriberNotification = "subscriber.notification"
	// EventInvitationCreated sends an invitation its e-mail.
	EventInvitationCreated = "invitation.created"
)

// Reasons of a subscriber.notification (payload.reason).
const (
	NotifyIncidentCreated      = "incident.created"
	NotifyIncidentUpdated      = "incident.updated"
	NotifyMaintenanceUpcoming  = "maintenance.upcoming"
	NotifyMaintenanceStarted   = "maintenance.started"
	NotifyMaintenanceCompleted = "maintenance.completed"
)

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

// fanOutMail inserts one e-mail delivery per recipient of m (target = subscriber or invitation
// id); the (event, channel, target) key makes a second fan-out of the same event a no-op.
func fanOutMail(ctx context.Context, tx pgx.Tx, ev PendingEvent, m MailFanout, now time.Time) (int, error) {
	const insert = `INSERT INTO deliveries (id, org_id, event_id, event_type, channel, target, address,
			status, next_attempt_at, created_at) `
	var sql string
	args := []any{ev.OrgID, ev.ID, ev.EventType, now}
	switch {
	case m.SubscriberID != nil:
		sql = insert + `SELECT gen_random_uuid(), s.org_id, $2, $3, 'email', s.id, s.email_address, 'PENDING', $4, $4
			FROM status_page_subscribers s WHERE s.org_id = $1 AND s.id = $5 AND NOT s.confirmed`
		args = append(args, *m.SubscriberID)
	case m.PageID != nil:
		ids := m.ComponentIDs
		if ids == nil {
			ids = []uuid.UUID{}
		}
		sql = insert + `SELECT gen_random_uuid(), s.org_id, $2, $3, 'email', s.id, s.email_address, 'PENDING', $4, $4
			FROM status_page_subscribers s WHERE s.org_id = $1 AND s.status_page_id = $5 AND s.confirmed
				AND (s.component_subscription_mode = 'ALL_COMPONENTS' OR EXISTS (SELECT 1 FROM status_page_subscriber_components sc
					WHERE sc.subscriber_id = s.id AND sc.component_id = ANY ($6::uuid[])))`
		args = append(args, *m.PageID, ids)
	case m.InvitationID != nil:
		sql = insert + `SELECT gen_random_uuid(), i.org_id, $2, $3, 'email', i.id, i.email, 'PENDING', $4, $4
			FROM invitations i WHERE i.org_id = $1 AND i.id = $5 AND i.accepted_at IS NULL`
		args = append(args, *m.InvitationID)
	default:
		return 0, nil
	}
	tag, err := tx.Exec(ctx, sql+` ON CONFLICT (event_id, channel, target) DO NOTHING`, args...)
	if err != nil {
		return 0, fmt.Errorf("fan out e-mails: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// linkToken is a fresh link token, its lookup hash and its sealed form.
type linkToken struct {
	Token  string
	Hash   []byte
	Sealed []byte
}

func (s *Store) newLinkToken() (linkToken, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return linkToken{}, err
	}
	t := linkToken{Token: base64.RawURLEncoding.EncodeToString(b)}
	t.Hash = hashLinkToken(t.Token)
	sealed, err := s.sealer.Seal([]byte(t.Token))
	if err != nil {
		return t, fmt.Errorf("seal link token: %w", err)
	}
	t.Sealed = sealed
	return t, nil
}

// hashLinkToken is the lookup key of a link token.
func hashLinkToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// queueMail writes one outbox row of an e-mail flow inside tx. outbox.incident_id stays NULL:
// it names the incident of webhook events, and these rows are no webhook's business.
func queueMail(ctx context.Context, tx pgx.Tx, orgID uuid.UUID, pageID *uuid.UUID, event string, payload map[string]any, now time.Time) error {
	payload["event"] = event
	payload["occurred_at"] = now.UTC()
	body, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("encode %s: %w", event, err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO outbox (id, org_id, event_type, status_page_id, alert_priority, payload,
			created_at, next_attempt_at) VALUES ($1, $2, $3, $4, 'LOW', $5, $6, $6)`,
		uuid.Must(uuid.NewV7()), orgID, event, pageID, body, now); err != nil {
		return fmt.Errorf("queue %s: %w", event, err)
	}
	return nil
}

// pageMailRef is the page as subscriber e-mails name it.
func pageMailRef(ctx context.Context, tx pgx.Tx, orgID, pageID uuid.UUID) (map[string]any, error) {
	var name, subdomain string
	if err := tx.QueryRow(ctx, `SELECT name, subdomain FROM status_pages WHERE org_id = $1 AND id = $2`, orgID, pageID).
		Scan(&name, &subdomain); err != nil {
		return nil, err
	}
	return map[string]any{"id": pageID.String(), "name": name, "subdomain": subdomain}, nil
}

// queueSubscriberConfirmation queues the confirmation e-mail of a new subscriber.
func queueSubscriberConfirmation(ctx context.Context, tx pgx.Tx, orgID, pageID, subscriberID uuid.UUID, email string, now time.Time) error {
	page, err := pageMailRef(ctx, tx, orgID, pageID)
	if err != nil {
		return err
	}
	return queueMail(ctx, tx, orgID, &pageID, EventSubscriberConfirmation, map[string]any{"status_page": page,
		"subscriber": map[string]any{"id": subscriberID.String(), "email_address": email}}, now)
}

// queueSubscriberNotification queues the e-mail to the page's confirmed subscribers about
// update updateID of an incident. The components that decide who in SELECTED_COMPONENTS mode
// hears of it are all the components the incident affects (so far, this update's included): a
// follow-up that changes no component still reaches everyone who heard of the incident.
func queueSubscriberNotification(ctx context.Context, tx pgx.Tx, orgID, pageID, incidentID, updateID uuid.UUID, reason string, now time.Time) error {
	page, err := pageMailRef(ctx, tx, orgID, pageID)
	if err != nil {
		return err
	}
	var title, impact, status, description string
	var happened time.Time
	var start *time.Time
	var duration *int
	if err := tx.QueryRow(ctx, `SELECT i.title, i.impact, u.status, u.description, u.date_happened, i.start_date, i.duration_minutes
		FROM status_page_incidents i JOIN status_page_incident_updates u ON u.incident_id = i.id
		WHERE i.org_id = $1 AND i.id = $2 AND u.id = $3`, orgID, incidentID, updateID).
		Scan(&title, &impact, &status, &description, &happened, &start, &duration); err != nil {
		return fmt.Errorf("read incident update for subscribers: %w", err)
	}
	rows, err := tx.Query(ctx, `SELECT c.id, c.name, c.status FROM status_page_incident_components ic
		JOIN status_page_components c ON c.id = ic.component_id
		WHERE ic.org_id = $1 AND ic.incident_id = $2 ORDER BY c.sort_order NULLS LAST, c.name, c.id`, orgID, incidentID)
	if err != nil {
		return err
	}
	type comp struct {
		ID     uuid.UUID `json:"id"`
		Name   string    `json:"name"`
		Status string    `json:"status"`
	}
	comps, err := pgx.CollectRows(rows, pgx.RowToStructByPos[comp])
	if err != nil {
		return err
	}
	ids := make([]uuid.UUID, len(comps))
	for i, c := range comps {
		ids[i] = c.ID
	}
	if comps == nil {
		comps = []comp{}
	}
	incident := map[string]any{"id": incidentID.String(), "title": title, "impact": impact}
	if start != nil && duration != nil {
		incident["start_date"], incident["duration_minutes"] = start.UTC(), *duration
	}
	return queueMail(ctx, tx, orgID, &pageID, EventSubscriberNotification, map[string]any{
		"reason": reason, "status_page": page, "incident": incident,
		"update":     map[string]any{"id": updateID.String(), "status": status, "description": description, "date_happened": happened.UTC()},
		"components": comps, "component_ids": ids}, now)
}

// queueMaintenanceNotification queues the subscribers' e-mail of a maintenance step when the
// maintenance's notifications flag for it (at_start or at_end) is set.
func queueMaintenanceNotification(ctx context.Context, tx pgx.Tx, orgID, pageID, incidentID, updateID uuid.UUID, reason string, now time.Time) error {
	var atStart, atEnd bool
	if err := tx.QueryRow(ctx, `SELECT coalesce(notify_at_start, false), coalesce(notify_at_end, false)
		FROM status_page_incidents WHERE org_id = $1 AND id = $2`, orgID, incidentID).Scan(&atStart, &atEnd); err != nil {
		return err
	}
	if (reason == NotifyMaintenanceStarted && !atStart) || (reason == NotifyMaintenanceCompleted && !atEnd) {
		return nil
	}
	return queueSubscriberNotification(ctx, tx, orgID, pageID, incidentID, updateID, reason, now)
}

// remindUpcomingMaintenance queues the "an hour before" notice of every scheduled maintenance
// that asks for one (notifications.an_hour_before) and starts within the hour, once
// (reminded_at). A maintenance whose start has passed gets the at_start notice instead. Each
// maintenance is handled in its own transaction with its row locked (SKIP LOCKED), so several
// replicas may run this together.
func (s *Store) remindUpcomingMaintenance(ctx context.Context, now time.Time) error {
	rows, err := s.pool.Query(ctx, `SELECT org_id, status_page_id, id FROM status_page_incidents
		WHERE maintenance_state = 'SCHEDULED' AND notify_an_hour_before AND reminded_at IS NULL
			AND start_date > $1 AND start_date <= $1 + interval '1 hour'
		ORDER BY start_date, id LIMIT 500`, now)
	if err != nil {
		return translate(err)
	}
	type due struct{ Org, Page, ID uuid.UUID }
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[due])
	if err != nil {
		return translate(err)
	}
	for _, d := range list {
		err := s.inTx(ctx, func(tx pgx.Tx) error {
			var latest uuid.UUID
			err := tx.QueryRow(ctx, `UPDATE status_page_incidents i SET reminded_at = $3
				WHERE i.org_id = $1 AND i.id = $2 AND i.reminded_at IS NULL AND i.maintenance_state = 'SCHEDULED'
					AND i.id = (SELECT id FROM status_page_incidents WHERE id = $2 FOR UPDATE SKIP LOCKED)
				RETURNING (SELECT u.id FROM status_page_incident_updates u WHERE u.incident_id = i.id
					ORDER BY u.date_happened DESC, u.created_at DESC, u.id DESC LIMIT 1)`, d.Org, d.ID, now).Scan(&latest)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil // another replica has it, or it changed meanwhile
			}
			if err != nil {
				return err
			}
			return queueSubscriberNotification(ctx, tx, d.Org, d.Page, d.ID, latest, NotifyMaintenanceUpcoming, now)
		})
		if err != nil {
			return fmt.Errorf("remind subscribers of maintenance %s: %w", d.ID, err)
		}
	}
	return nil
}

// SubscriberMail is what the notifier needs to render one subscriber's e-mail.
type SubscriberMail struct {
	Email            string
	Confirmed        bool
	ConfirmToken     string // "" once confirmed
	UnsubscribeToken string
	PageName         string
	PageSubdomain    string
}

// SubscriberMail opens the link tokens of a subscriber for its e-mail; ErrNotFound when the
// subscriber is gone. A subscriber without an unsubscribe token (created before tokens were
// kept) gets one now.
func (s *Store) SubscriberMail(ctx context.Context, orgID, subscriberID uuid.UUID) (SubscriberMail, error) {
	var m SubscriberMail
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var confirmEnc, unsubEnc []byte
		if err := tx.QueryRow(ctx, `SELECT s.email_address, s.confirmed, s.confirmation_token_enc, s.unsubscribe_token_enc, p.name, p.subdomain
			FROM status_page_subscribers s JOIN status_pages p ON p.id = s.status_page_id
			WHERE s.org_id = $1 AND s.id = $2 FOR UPDATE OF s`, orgID, subscriberID).
			Scan(&m.Email, &m.Confirmed, &confirmEnc, &unsubEnc, &m.PageName, &m.PageSubdomain); err != nil {
			return err
		}
		if !m.Confirmed && confirmEnc != nil {
			tok, err := s.sealer.Open(confirmEnc)
			if err != nil {
				return fmt.Errorf("open confirmation token of subscriber %s: %w", subscriberID, err)
			}
			m.ConfirmToken = string(tok)
		}
		if unsubEnc != nil {
			tok, err := s.sealer.Open(unsubEnc)
			if err != nil {
				return fmt.Errorf("open unsubscribe token of subscriber %s: %w", subscriberID, err)
			}
			m.UnsubscribeToken = string(tok)
			return nil
		}
		t, err := s.newLinkToken()
		if err != nil {
			return err
		}
		m.UnsubscribeToken = t.Token
		_, err = tx.Exec(ctx, `UPDATE status_page_subscribers SET unsubscribe_token_hash = $3, unsubscribe_token_enc = $4
			WHERE org_id = $1 AND id = $2`, orgID, subscriberID, t.Hash, t.Sealed)
		return err
	})
	return m, err
}

// Subscription is a subscriber as its public confirm and unsubscribe pages show it.
type Subscription struct {
	Email     string
	PageName  string
	Subdomain string
}

// subscriberLinkActor is who the audit log names for changes made through e-mailed links.
var subscriberLinkActor = Actor{Type: "System", DisplayName: "Subscriber e-mail link"}

// ErrLinkInvalid is a confirm or unsubscribe link whose token matches nothing on its page
// (already used, unsubscribed, or made up).
var ErrLinkInvalid = errors.New("the link is invalid or has already been used")

// ConfirmSubscriber confirms the subscriber whose confirmation token this is, on the page served
// at subdomain; the token is spent. ErrLinkInvalid when nothing matches.
func (s *Store) ConfirmSubscriber(ctx context.Context, subdomain, token string) (Subscription, error) {
	var sub Subscription
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var orgID, id uuid.UUID
		err := tx.QueryRow(ctx, `UPDATE status_page_subscribers s SET confirmed = true, confirmation_token_hash = NULL, confirmation_token_enc = NULL
			FROM status_pages p WHERE p.id = s.status_page_id AND lower(p.subdomain) = lower($1) AND s.confirmation_token_hash = $2
			RETURNING s.org_id, s.id, s.email_address, p.name, p.subdomain`, subdomain, hashLinkToken(token)).
			Scan(&orgID, &id, &sub.Email, &sub.PageName, &sub.Subdomain)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrLinkInvalid
		}
		if err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, subscriberLinkActor,
			AuditEvent{Action: "confirmed", AuditableType: "StatusPageSubscriber", AuditableID: id.String(), AuditableDisplayName: sub.Email})
	})
	return sub, err
}

// SubscriptionByUnsubscribeToken names the subscription an unsubscribe link is for, without
// changing anything. ErrLinkInvalid when nothing matches.
func (s *Store) SubscriptionByUnsubscribeToken(ctx context.Context, subdomain, token string) (Subscription, error) {
	var sub Subscription
	err := s.pool.QueryRow(ctx, `SELECT s.email_address, p.name, p.subdomain FROM status_page_subscribers s
		JOIN status_pages p ON p.id = s.status_page_id
		WHERE lower(p.subdomain) = lower($1) AND s.unsubscribe_token_hash = $2`, subdomain, hashLinkToken(token)).
		Scan(&sub.Email, &sub.PageName, &sub.Subdomain)
	if errors.Is(err, pgx.ErrNoRows) {
		return sub, ErrLinkInvalid
	}
	return sub, translate(err)
}

// Unsubscribe deletes the subscriber whose unsubscribe token this is, on the page served at
// subdomain, and audits it. ErrLinkInvalid when nothing matches (unsubscribed already).
func (s *Store) Unsubscribe(ctx context.Context, subdomain, token string) (Subscription, error) {
	var sub Subscription
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var orgID, id, pageID uuid.UUID
		err := tx.QueryRow(ctx, `DELETE FROM status_page_subscribers s USING status_pages p
			WHERE p.id = s.status_page_id AND lower(p.subdomain) = lower($1) AND s.unsubscribe_token_hash = $2
			RETURNING s.org_id, s.id, s.status_page_id, s.email_address, p.name, p.subdomain`, subdomain, hashLinkToken(token)).
			Scan(&orgID, &id, &pageID, &sub.Email, &sub.PageName, &sub.Subdomain)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrLinkInvalid
		}
		if err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, subscriberLinkActor,
			AuditEvent{Action: "unsubscribed", AuditableType: "StatusPageSubscriber", AuditableID: id.String(),
				AuditableDisplayName: sub.Email, Metadata: map[string]any{"status_page_id": pageID.String()}})
	})
	return sub, err
}
