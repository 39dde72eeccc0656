package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// Subscriber is an e-mail subscriber of a status page.
type Subscriber struct {
	ID                        uuid.UUID
	EmailAddress              string
	Confirmed                 bool
	ComponentSubscriptionMode string
	CreatedAt                 time.Time
	ComponentIDs              []uuid.UUID // in id order
}

// ListSubscribers returns one page of a page's subscribers, newest first, and the total; search
// matches the e-mail address.
func (r StatusPageReader) ListSubscribers(ctx context.Context, orgID, pageID uuid.UUID, search string, limit, offset int64) ([]Subscriber, int64, error) {
	if err := r.StatusPageExists(ctx, orgID, pageID); err != nil {
		return nil, 0, err
	}
	total, err := r.q.CountSubscribers(ctx, dbsqlc.CountSubscribersParams{OrgID: orgID, StatusPageID: pageID, Search: search})
	if err != nil {
		return nil, 0, translate(err)
	}
	rows, err := r.q.ListSubscribers(ctx, dbsqlc.ListSubscribersParams{OrgID: orgID, StatusPageID: pageID, Search: search,
		PageLimit: limit, PageOffset: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	out := make([]Subscriber, len(rows))
	for i, row := range rows {
		out[i] = subscriberOf(dbsqlc.GetSubscriberRow(row))
	}
	return out, total, nil
}

// GetSubscriber returns one subscriber of the organization.
func (r StatusPageReader) GetSubscriber(ctx context.Context, orgID, id uuid.UUID) (Subscriber, error) {
	row, err := r.q.GetSubscriber(ctx, dbsqlc.GetSubscriberParams{OrgID: orgID, ID: id})
	return subscriberOf(row), translate(err)
}

func subscriberOf(r dbsqlc.GetSubscriberRow) Subscriber {
	return Subscriber{ID: r.ID, EmailAddress: r.EmailAddress, Confirmed: r.Confirmed,
		ComponentSubscriptionMode: r.ComponentSubscriptionMode, CreatedAt: r.CreatedAt, ComponentIDs: r.ComponentIds}
}

// NewSubscriber is the input of CreateSubscriber.
type NewSubscriber struct {
	EmailAddress string
	Mode         string
	ComponentIDs []uuid.UUID
}

// CreateSubscriber adds an unconfirmed subscriber to the page with fresh confirmation and
// unsubscribe tokens (hashed and sealed, see subscriber_mail.go). The address is unique per
// page, case-insensitively: a second one is a subscriber_already_exists conflict. Component ids
// must be components of the page (a ValidationError otherwise).
func (t *StatusPageTx) CreateSubscriber(ctx context.Context, orgID, pageID, id uuid.UUID, in NewSubscriber, now time.Time) error {
	n, err := t.q.CountPageComponents(ctx, dbsqlc.CountPageComponentsParams{OrgID: orgID, StatusPageID: pageID, Ids: in.ComponentIDs})
	if err != nil {
		return translate(err)
	}
	if int(n) != len(in.ComponentIDs) {
		return spValidation("component_ids", "every id must be a component of this status page")
	}
	confirm, err := t.s.newLinkToken()
	if err != nil {
		return err
	}
	unsubscribe, err := t.s.newLinkToken()
	if err != nil {
		return err
	}
	err = t.q.CreateSubscriber(ctx, dbsqlc.CreateSubscriberParams{ID: id, OrgID: orgID, StatusPageID: pageID,
		EmailAddress: in.EmailAddress, ConfirmationTokenHash: confirm.Hash, ConfirmationTokenEnc: confirm.Sealed,
		UnsubscribeTokenHash: unsubscribe.Hash, UnsubscribeTokenEnc: unsubscribe.Sealed, ComponentSubscriptionMode: in.Mode, Now: now})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "status_page_subscribers_email" {
		return &ConflictError{Type: "subscriber_already_exists", Code: 409,
			Message: "email_address: this address is already subscribed to the status page or has an invitation pending"}
	}
	if err != nil {
		return translate(err)
	}
	return translate(t.q.AddSubscriberComponents(ctx, dbsqlc.AddSubscriberComponentsParams{OrgID: orgID, SubscriberID: id,
		ComponentIds: in.ComponentIDs}))
}

// DeleteSubscriber removes a subscriber of the page and returns its address.
func (t *StatusPageTx) DeleteSubscriber(ctx context.Context, orgID, pageID, id uuid.UUID) (string, error) {
	email, err := t.q.DeleteSubscriber(ctx, dbsqlc.DeleteSubscriberParams{OrgID: orgID, StatusPageID: pageID, ID: id})
	return email, translate(err)
}

// OrganizationPlan returns the organization's plan ("free" or "paid"), for the plan limits of
// status page features.
func (r StatusPageReader) OrganizationPlan(ctx context.Context, orgID uuid.UUID) (string, error) {
	plan, err := r.q.OrganizationPlan(ctx, orgID)
	return plan, translate(err)
}

// CountPageSubscribers counts the page's subscribers, confirmed or not.
func (r StatusPageReader) CountPageSubscribers(ctx context.Context, orgID, pageID uuid.UUID) (int64, error) {
	n, err := r.q.CountSubscribers(ctx, dbsqlc.CountSubscribersParams{OrgID: orgID, StatusPageID: pageID})
	return n, translate(err)
}
