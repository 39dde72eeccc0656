package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
)

const subscriberColumns = `s.id, s.email_address, s.confirmed, s.component_subscription_mode, s.created_at,
	coalesce((SELECT array_agg(sc.component_id ORDER BY sc.component_id) FROM status_page_subscriber_components sc
		WHERE sc.subscriber_id = s.id), '{}')`

func scanSubscriber(row pgx.Row) (statuspage.Subscriber, error) {
	var sub statuspage.Subscriber
	var id uuid.UUID
	var created time.Time
	var comps []uuid.UUID
	err := row.Scan(&id, &sub.EmailAddress, &sub.Confirmed, &sub.ComponentSubscriptionMode, &created, &comps)
	sub.ID, sub.CreatedAt, sub.ComponentIDs = id.String(), spTime(created), spStrings(comps)
	return sub, err
}

// ListSubscribers returns one page of a page's subscribers, newest first; search matches the
// e-mail address.
func (s *Store) ListSubscribers(ctx context.Context, orgID, pageID uuid.UUID, search string, limit, offset int64) ([]statuspage.Subscriber, int64, error) {
	if err := pageExists(ctx, s.pool, orgID, pageID); err != nil {
		return nil, 0, translate(err)
	}
	where := `s.org_id = $1 AND s.status_page_id = $2 AND ($3 = '' OR strpos(lower(s.email_address), lower($3)) > 0)`
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM status_page_subscribers s WHERE `+where, orgID, pageID, search).Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+subscriberColumns+` FROM status_page_subscribers s WHERE `+where+`
		ORDER BY s.created_at DESC, s.id DESC LIMIT $4 OFFSET $5`, orgID, pageID, search, limit, offset)
	if err != nil {
		return nil, 0, translate(err)
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (statuspage.Subscriber, error) { return scanSubscriber(r) })
	return items, total, translate(err)
}

// NewSubscriber is the input of CreateSubscriber.
type NewSubscriber struct {
	EmailAddress string
	Mode         string
	ComponentIDs []uuid.UUID
}

// CreateSubscriber adds an unconfirmed subscriber with fresh confirmation and unsubscribe
// tokens (hashed and sealed, see subscriber_mail.go), queues its confirmation e-mail
// (subscriber.confirmation) in the same transaction, and audits it. The address is
// unique per page, case-insensitively: a second one is a subscriber_already_exists conflict.
// Component ids must be components of the page.
func (s *Store) CreateSubscriber(ctx context.Context, actor Actor, orgID, pageID uuid.UUID, in NewSubscriber) (statuspage.Subscriber, error) {
	var sub statuspage.Subscriber
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := lockPage(ctx, tx, orgID, pageID); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM status_page_components WHERE org_id = $1 AND status_page_id = $2 AND id = ANY($3)`,
			orgID, pageID, in.ComponentIDs).Scan(&n); err != nil {
			return err
		}
		if n != len(in.ComponentIDs) {
			return spValidation("component_ids", "every id must be a component of this status page")
		}
		confirm, err := s.newLinkToken()
		if err != nil {
			return err
		}
		unsubscribe, err := s.newLinkToken()
		if err != nil {
			return err
		}
		id := uuid.Must(uuid.NewV7())
		_, err = tx.Exec(ctx, `INSERT INTO status_page_subscribers (id, org_id, status_page_id, email_address, confirmation_token_hash,
				confirmation_token_enc, unsubscribe_token_hash, unsubscribe_token_enc, component_subscription_mode, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			id, orgID, pageID, in.EmailAddress, confirm.Hash, confirm.Sealed, unsubscribe.Hash, unsubscribe.Sealed, in.Mode, s.now())
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "status_page_subscribers_email" {
			return &ConflictError{Type: "subscriber_already_exists", Code: 409,
				Message: "email_address: this address is already subscribed to the status page or has an invitation pending"}
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO status_page_subscriber_components (org_id, subscriber_id, component_id)
			SELECT $1, $2, unnest($3::uuid[])`, orgID, id, in.ComponentIDs); err != nil {
			return err
		}
		if err := queueSubscriberConfirmation(ctx, tx, orgID, pageID, id, in.EmailAddress, s.now()); err != nil {
			return err
		}
		if sub, err = scanSubscriber(tx.QueryRow(ctx, `SELECT `+subscriberColumns+` FROM status_page_subscribers s WHERE s.org_id = $1 AND s.id = $2`, orgID, id)); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "created", AuditableType: "StatusPageSubscriber",
			AuditableID: sub.ID, AuditableDisplayName: sub.EmailAddress,
			Metadata: map[string]any{"status_page_id": pageID.String(), "component_subscription_mode": sub.ComponentSubscriptionMode}})
	})
	return sub, err
}

// DeleteSubscriber removes a subscriber of the page, and audits it.
func (s *Store) DeleteSubscriber(ctx context.Context, actor Actor, orgID, pageID, id uuid.UUID) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var email string
		if err := tx.QueryRow(ctx, `DELETE FROM status_page_subscribers WHERE org_id = $1 AND status_page_id = $2 AND id = $3 RETURNING email_address`,
			orgID, pageID, id).Scan(&email); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "deleted", AuditableType: "StatusPageSubscriber",
			AuditableID: id.String(), AuditableDisplayName: email, Metadata: map[string]any{"status_page_id": pageID.String()}})
	})
}

var _ statuspage.Lifecycle = (*Store)(nil)
