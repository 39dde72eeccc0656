package statuspage

import (
	"context"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// SubscriberOf is the API's record of a stored subscriber.
func SubscriberOf(sub store.Subscriber) Subscriber {
	return Subscriber{ID: sub.ID.String(), EmailAddress: sub.EmailAddress, Confirmed: sub.Confirmed,
		ComponentSubscriptionMode: sub.ComponentSubscriptionMode, ComponentIDs: idStrings(sub.ComponentIDs), CreatedAt: Time(sub.CreatedAt)}
}

// ListSubscribers returns one page of a page's subscribers, newest first; search matches the
// e-mail address.
func (s *Service) ListSubscribers(ctx context.Context, orgID, pageID uuid.UUID, search string, limit, offset int64) ([]Subscriber, int64, error) {
	rows, total, err := s.st.StatusPages().ListSubscribers(ctx, orgID, pageID, search, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Subscriber, len(rows))
	for i, sub := range rows {
		out[i] = SubscriberOf(sub)
	}
	return out, total, nil
}

// CreateSubscriber adds an unconfirmed subscriber, queues its confirmation e-mail
// (subscriber.confirmation: double opt-in) in the same transaction, and audits it. The address
// is unique per page, case-insensitively: a second one is a subscriber_already_exists
// conflict. Component ids must be components of the page.
func (s *Service) CreateSubscriber(ctx context.Context, actor store.Actor, orgID, pageID uuid.UUID, in store.NewSubscriber) (Subscriber, error) {
	var sub Subscriber
	err := s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		page, err := tx.LockStatusPage(ctx, orgID, pageID)
		if err != nil {
			return err
		}
		// The page's row lock serializes creations, so the count cannot be raced past.
		if err := checkSubscriberPlan(ctx, tx.StatusPageReader, orgID, pageID); err != nil {
			return err
		}
		now := s.now()
		id := uuid.Must(uuid.NewV7())
		if err := tx.CreateSubscriber(ctx, orgID, pageID, id, in, now); err != nil {
			return err
		}
		if err := tx.QueueEvents(ctx, store.OutboxEvent{OrgID: orgID, StatusPageID: &pageID, CreatedAt: now,
			Event: event.SubscriberConfirmation{OccurredAt: now, SubscriberID: id, Email: in.EmailAddress,
				StatusPage: event.MailPage{ID: pageID, Name: page.Name, Subdomain: page.Subdomain}}}); err != nil {
			return err
		}
		row, err := tx.GetSubscriber(ctx, orgID, id)
		if err != nil {
			return err
		}
		sub = SubscriberOf(row)
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "created", AuditableType: "StatusPageSubscriber",
			AuditableID: sub.ID, AuditableDisplayName: sub.EmailAddress,
			Metadata: map[string]any{"status_page_id": pageID.String(), "component_subscription_mode": sub.ComponentSubscriptionMode}})
	})
	return sub, err
}

// DeleteSubscriber removes a subscriber of the page, and audits it.
func (s *Service) DeleteSubscriber(ctx context.Context, actor store.Actor, orgID, pageID, id uuid.UUID) error {
	return s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		email, err := tx.DeleteSubscriber(ctx, orgID, pageID, id)
		if err != nil {
			return err
		}
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "deleted", AuditableType: "StatusPageSubscriber",
			AuditableID: id.String(), AuditableDisplayName: email, Metadata: map[string]any{"status_page_id": pageID.String()}})
	})
}
