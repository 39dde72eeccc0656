package statuspage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// notifySubscribers queues the e-mail to the page's confirmed subscribers about update updateID
// of an incident. The components that decide who in SELECTED_COMPONENTS mode hears of it are
// all the components the incident affects (so far, this update's included): a follow-up that
// changes no component still reaches everyone who heard of the incident.
func notifySubscribers(ctx context.Context, tx *store.StatusPageTx, orgID, pageID, incidentID, updateID uuid.UUID, reason string, now time.Time) error {
	page, err := tx.StatusPageName(ctx, orgID, pageID)
	if err != nil {
		return err
	}
	n, err := tx.IncidentNotice(ctx, orgID, incidentID, updateID)
	if err != nil {
		return fmt.Errorf("read incident update for subscribers: %w", err)
	}
	ev := event.SubscriberNotification{OccurredAt: now, Reason: reason,
		StatusPage: event.MailPage{ID: pageID, Name: page.Name, Subdomain: page.Subdomain},
		Incident: event.NoticeIncident{ID: incidentID, Title: n.Title, Impact: n.Impact, StartDate: n.StartDate,
			DurationMinutes: n.DurationMinutes},
		Update:     event.NoticeUpdate{ID: updateID, Status: n.Status, Description: n.Description, DateHappened: n.DateHappened},
		Components: make([]event.NoticeComponent, len(n.Components))}
	for i, c := range n.Components {
		ev.Components[i] = event.NoticeComponent(c)
	}
	return tx.QueueEvents(ctx, store.OutboxEvent{OrgID: orgID, Event: ev, StatusPageID: &pageID, CreatedAt: now})
}
