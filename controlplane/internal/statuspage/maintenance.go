package statuspage

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// The scheduled-maintenance lifecycle (api/openapi/status-page-maintenance.yaml):
//
//	SCHEDULED   → IN_PROGRESS at start_date: an IN_PROGRESS update, started set, the affected
//	              components set to MAINTENANCE (their status kept to restore), .updated queued
//	IN_PROGRESS → COMPLETED at start_date + duration_minutes: a COMPLETED update, ended set,
//	              the components restored, .resolved queued
//
// A maintenance whose whole window passed while nothing ran goes through both steps at once.
// Subscribers are e-mailed per the maintenance's notifications flags: an hour before the start,
// at the start, at the end.

// ErrMaintenanceStarted means a scheduled maintenance that has started can no longer be changed.
var ErrMaintenanceStarted = &store.ValidationError{Field: "start_date", Message: "the maintenance has already started and can no longer be changed"}

// ReminderLead is how long before its start a maintenance that asks for it announces itself.
const ReminderLead = time.Hour

// MaintenanceOf is the API's record of a stored scheduled maintenance with its components.
func MaintenanceOf(inc store.PageIncident, components []store.NamedRef) ScheduledMaintenance {
	sum := IncidentSummaryOf(inc)
	m := ScheduledMaintenance{IncidentBase: sum.IncidentBase, Components: refsOf(components),
		Notifications: Notifications{AnHourBefore: inc.NotifyAnHourBefore, AtStart: inc.NotifyAtStart, AtEnd: inc.NotifyAtEnd}}
	if sm := sum.ScheduledMaintenance; sm != nil {
		m.StartDate, m.DurationMinutes, m.State = sm.StartDate, sm.DurationMinutes, *inc.MaintenanceState
	}
	return m
}

// loadMaintenance reads a scheduled maintenance with its status and the announcement's text.
func loadMaintenance(ctx context.Context, r store.StatusPageReader, orgID, pageID, id uuid.UUID) (MaintenanceDetail, error) {
	inc, err := r.GetIncident(ctx, orgID, pageID, id)
	if err != nil {
		return MaintenanceDetail{}, err
	}
	if inc.MaintenanceState == nil {
		return MaintenanceDetail{}, store.ErrNotFound
	}
	comps, err := r.IncidentComponents(ctx, orgID, id)
	if err != nil {
		return MaintenanceDetail{}, err
	}
	timeline, err := r.Timeline(ctx, orgID, id)
	if err != nil {
		return MaintenanceDetail{}, err
	}
	m := MaintenanceOf(inc, comps[id])
	return MaintenanceDetail{ScheduledMaintenance: m, Status: m.State, Description: announcement(timeline)}, nil
}

// announcement is the text of a maintenance's first SCHEDULED update (the timeline is newest
// first): what its creator wrote and PATCH replaces, not the lifecycle's later updates.
func announcement(timeline []store.IncidentUpdate) string {
	for i := len(timeline) - 1; i >= 0; i-- {
		if timeline[i].Status == Scheduled {
			return timeline[i].Description
		}
	}
	return ""
}

// GetMaintenance returns a scheduled maintenance of the page.
func (s *Service) GetMaintenance(ctx context.Context, orgID, pageID, id uuid.UUID) (MaintenanceDetail, error) {
	return loadMaintenance(ctx, s.st.StatusPages(), orgID, pageID, id)
}

// NewMaintenance is the input of CreateMaintenance.
type NewMaintenance struct {
	Title           string
	Description     string
	StartDate       time.Time
	DurationMinutes int
	ComponentIDs    []uuid.UUID
	Notifications   Notifications
}

// CreateMaintenance schedules a maintenance: an incident with impact MAINTENANCE and a first
// SCHEDULED update, affecting the given components (which must be on the page). It queues
// status_page.incident.started and is audited; Run moves it on from there.
func (s *Service) CreateMaintenance(ctx context.Context, actor store.Actor, orgID, pageID uuid.UUID, in NewMaintenance) (MaintenanceDetail, error) {
	var m MaintenanceDetail
	err := s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		if _, err := tx.LockStatusPage(ctx, orgID, pageID); err != nil {
			return err
		}
		now := s.now()
		id := uuid.Must(uuid.NewV7())
		if err := tx.CreateMaintenance(ctx, orgID, pageID, id, store.NewMaintenance{Title: in.Title, StartDate: in.StartDate,
			DurationMinutes: in.DurationMinutes, ComponentIDs: in.ComponentIDs, NotifyAnHourBefore: in.Notifications.AnHourBefore,
			NotifyAtStart: in.Notifications.AtStart, NotifyAtEnd: in.Notifications.AtEnd}, now); err != nil {
			return err
		}
		// The announcement is dated now, or at the start when the maintenance is back-dated, so
		// that the lifecycle's updates always come after it on the timeline.
		announced := now
		if in.StartDate.Before(now) {
			announced = in.StartDate
		}
		if _, err := tx.AddIncidentUpdate(ctx, orgID, pageID, id, store.NewUpdate{Status: Scheduled, Description: in.Description,
			DateHappened: announced, NotifySubscribers: true}, now); err != nil {
			return err
		}
		if err := announce(ctx, tx, orgID, pageID, id, event.TypeIncidentStarted, now); err != nil {
			return err
		}
		var err error
		if m, err = loadMaintenance(ctx, tx.StatusPageReader, orgID, pageID, id); err != nil {
			return err
		}
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "created", AuditableType: "StatusPageScheduledMaintenance",
			AuditableID: m.ID, AuditableDisplayName: m.Title, Metadata: map[string]any{"status_page_id": pageID.String(),
				"start_date": in.StartDate.UTC().Format(TimeLayout), "duration_minutes": in.DurationMinutes}})
	})
	return m, err
}

// UpdateMaintenance changes a maintenance that is still SCHEDULED (ErrMaintenanceStarted
// otherwise), queues status_page.incident.updated and audits it. A new start date re-arms the
// notice an hour before it.
func (s *Service) UpdateMaintenance(ctx context.Context, actor store.Actor, orgID, pageID, id uuid.UUID, p store.MaintenancePatch) (MaintenanceDetail, error) {
	var m MaintenanceDetail
	err := s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		inc, err := tx.LockIncident(ctx, orgID, pageID, id)
		if err != nil {
			return err
		}
		if inc.MaintenanceState == nil {
			return store.ErrNotFound
		}
		if *inc.MaintenanceState != Scheduled {
			return ErrMaintenanceStarted
		}
		now := s.now()
		if err := tx.EditMaintenance(ctx, orgID, pageID, id, p, now); err != nil {
			return err
		}
		if err := announce(ctx, tx, orgID, pageID, id, event.TypeIncidentUpdated, now); err != nil {
			return err
		}
		if m, err = loadMaintenance(ctx, tx.StatusPageReader, orgID, pageID, id); err != nil {
			return err
		}
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "updated", AuditableType: "StatusPageScheduledMaintenance",
			AuditableID: m.ID, AuditableDisplayName: m.Title, Metadata: map[string]any{"status_page_id": pageID.String()}})
	})
	return m, err
}

// AdvanceMaintenance runs the lifecycle as of now: it sends the notices an hour before, then
// moves every maintenance whose start or end has come. Each maintenance moves in its own
// transaction with its row locked (SKIP LOCKED), so several replicas may run this together.
// Changes are audited as the system's.
func (s *Service) AdvanceMaintenance(ctx context.Context, now time.Time) error {
	if err := s.remindUpcoming(ctx, now); err != nil {
		return err
	}
	due, err := s.st.StatusPages().DueMaintenance(ctx, now)
	if err != nil {
		return err
	}
	for _, d := range due {
		if err := s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error { return advance(ctx, tx, d, now) }); err != nil {
			return fmt.Errorf("advance maintenance %s: %w", d.ID, err)
		}
	}
	return nil
}

// advance takes one maintenance through the steps that are due.
func advance(ctx context.Context, tx *store.StatusPageTx, d store.IncidentKey, now time.Time) error {
	orgID, pageID, id := d.OrgID, d.StatusPageID, d.ID
	m, ok, err := tx.ClaimMaintenance(ctx, orgID, id)
	if err != nil || !ok {
		return err // !ok: another replica has it, or it was deleted
	}
	state, start := *m.MaintenanceState, *m.StartDate
	end := start.Add(time.Duration(*m.DurationMinutes) * time.Minute)
	// A lifecycle update is dated at its step's time, but never before the latest update on the
	// timeline (a start moved into the past, a hand-written update), so that it becomes the
	// latest update and the end follows it.
	latest, _, err := tx.LatestDateHappened(ctx, orgID, id)
	if err != nil {
		return err
	}
	at := func(t time.Time) time.Time {
		if t.Before(latest) {
			return latest
		}
		return t
	}
	audit := func(action string) error {
		return tx.Audit(ctx, orgID, store.SystemActor, store.AuditEvent{Action: action, AuditableType: "StatusPageScheduledMaintenance",
			AuditableID: id.String(), AuditableDisplayName: m.Title, Metadata: map[string]any{"status_page_id": pageID.String()}})
	}
	if state == Scheduled && !start.After(now) {
		upd, err := tx.AddIncidentUpdate(ctx, orgID, pageID, id, store.NewUpdate{Status: InProgress,
			Description: "Scheduled maintenance is in progress.", DateHappened: at(start), NotifySubscribers: true}, now)
		if err != nil {
			return err
		}
		comps, err := tx.StartMaintenanceComponents(ctx, orgID, id)
		if err != nil {
			return err
		}
		for _, c := range comps {
			old := c.Status
			if err := tx.ChangeComponent(ctx, orgID, upd, c.ID, &old, Maintenance, now); err != nil {
				return err
			}
		}
		if err := tx.SetMaintenanceState(ctx, orgID, id, InProgress, &start, now); err != nil {
			return err
		}
		if err := refreshEnded(ctx, tx, orgID, pageID, id, now); err != nil {
			return err
		}
		if err := announce(ctx, tx, orgID, pageID, id, event.TypeIncidentUpdated, now); err != nil {
			return err
		}
		if m.NotifyAtStart {
			if err := notifySubscribers(ctx, tx, orgID, pageID, id, upd, event.ReasonMaintenanceStarted, now); err != nil {
				return err
			}
		}
		if err := audit("started"); err != nil {
			return err
		}
		state, latest = InProgress, at(start)
	}
	if state == InProgress && !end.After(now) {
		upd, err := tx.AddIncidentUpdate(ctx, orgID, pageID, id, store.NewUpdate{Status: Completed,
			Description: "Scheduled maintenance is completed.", DateHappened: at(end), NotifySubscribers: true}, now)
		if err != nil {
			return err
		}
		if err := restoreComponents(ctx, tx, orgID, id, &upd, now); err != nil {
			return err
		}
		if err := tx.SetMaintenanceState(ctx, orgID, id, Completed, nil, now); err != nil {
			return err
		}
		if err := refreshEnded(ctx, tx, orgID, pageID, id, now); err != nil {
			return err
		}
		if err := announce(ctx, tx, orgID, pageID, id, event.TypeIncidentResolved, now); err != nil {
			return err
		}
		if m.NotifyAtEnd {
			if err := notifySubscribers(ctx, tx, orgID, pageID, id, upd, event.ReasonMaintenanceCompleted, now); err != nil {
				return err
			}
		}
		return audit("completed")
	}
	return nil
}

// remindUpcoming queues the "an hour before" notice of every scheduled maintenance that asks
// for one and starts within ReminderLead, once. A maintenance whose start has passed gets the
// at_start notice instead. Each is handled in its own transaction with its row locked (SKIP
// LOCKED), so several replicas may run this together.
func (s *Service) remindUpcoming(ctx context.Context, now time.Time) error {
	due, err := s.st.StatusPages().DueReminders(ctx, now, now.Add(ReminderLead))
	if err != nil {
		return err
	}
	for _, d := range due {
		err := s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
			latest, ok, err := tx.ClaimReminder(ctx, d.OrgID, d.ID, now)
			if err != nil || !ok {
				return err // !ok: another replica has it, or it changed meanwhile
			}
			return notifySubscribers(ctx, tx, d.OrgID, d.StatusPageID, d.ID, latest, event.ReasonMaintenanceUpcoming, now)
		})
		if err != nil {
			return fmt.Errorf("remind subscribers of maintenance %s: %w", d.ID, err)
		}
	}
	return nil
}
