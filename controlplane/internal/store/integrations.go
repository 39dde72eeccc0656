package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/integration"
	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
	"github.com/vantagehq/vantage/pkg/check"
)

// Integration is a destination of alerts (package integration). Its settings are sealed at
// rest as one document and opened here; callers redact them before showing them.
type Integration struct {
	ID          uuid.UUID
	OrgID       uuid.UUID
	Name        string
	Type        string
	Settings    integration.Settings
	StatusPages []NamedRef // status pages whose incident events it receives
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// NewIntegration is the input of CreateIntegration; Settings are validated already.
type NewIntegration struct {
	Name          string
	Type          string
	Settings      integration.Settings
	StatusPageIDs []uuid.UUID
}

// IntegrationPatch is the input of UpdateIntegration's change function.
type IntegrationPatch struct {
	Name          string
	Settings      integration.Settings
	StatusPageIDs []uuid.UUID // nil: unchanged
}

func (s *Store) integrationOf(r dbsqlc.Integration) (Integration, error) {
	pt, err := s.sealer.Open(r.SettingsEnc)
	if err != nil {
		return Integration{}, fmt.Errorf("open settings of integration %s: %w", r.ID, err)
	}
	set, err := integration.Decode(pt)
	if err != nil {
		return Integration{}, err
	}
	return Integration{ID: r.ID, OrgID: r.OrgID, Name: r.Name, Type: r.Type, Settings: set, CreatedAt: r.CreatedAt,
		UpdatedAt: r.UpdatedAt, StatusPages: []NamedRef{}}, nil
}

func (s *Store) sealSettings(set integration.Settings) ([]byte, error) {
	b, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("encode integration settings: %w", err)
	}
	sealed, err := s.sealer.Seal(b)
	if err != nil {
		return nil, fmt.Errorf("seal integration settings: %w", err)
	}
	return sealed, nil
}

// setIntegrationPages replaces the status pages an integration is attached to (nil: unchanged);
// an id that is not a status page of the organization is a ValidationError.
func setIntegrationPages(ctx context.Context, q *dbsqlc.Queries, orgID, id uuid.UUID, pages []uuid.UUID) error {
	if pages == nil {
		return nil
	}
	ids := dedupeIDs(pages)
	found, err := q.OrgStatusPageIDs(ctx, dbsqlc.OrgStatusPageIDsParams{OrgID: orgID, Ids: ids})
	if err := unknownIDs("status_page_ids", "status page", ids, found, err); err != nil {
		return err
	}
	if err := q.ClearIntegrationStatusPages(ctx, dbsqlc.ClearIntegrationStatusPagesParams{OrgID: orgID, IntegrationID: id}); err != nil {
		return err
	}
	return q.AddIntegrationStatusPages(ctx, dbsqlc.AddIntegrationStatusPagesParams{OrgID: orgID, IntegrationID: id, Ids: ids})
}

func loadIntegrationPages(ctx context.Context, q *dbsqlc.Queries, orgID uuid.UUID, list []Integration) error {
	if len(list) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(list))
	index := map[uuid.UUID]*Integration{}
	for i := range list {
		ids[i] = list[i].ID
		index[list[i].ID] = &list[i]
	}
	rows, err := q.IntegrationStatusPageRefs(ctx, dbsqlc.IntegrationStatusPageRefsParams{OrgID: orgID, IntegrationIds: ids})
	if err != nil {
		return err
	}
	for _, r := range rows {
		in := index[r.IntegrationID]
		in.StatusPages = append(in.StatusPages, NamedRef{ID: r.ID, Name: r.Name})
	}
	return nil
}

// CreateIntegration stores an integration with its sealed settings and audits it (never with
// its settings).
func (s *Store) CreateIntegration(ctx context.Context, actor Actor, orgID uuid.UUID, in NewIntegration) (Integration, error) {
	sealed, err := s.sealSettings(in.Settings)
	if err != nil {
		return Integration{}, err
	}
	var out Integration
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		r, err := q.CreateIntegration(ctx, dbsqlc.CreateIntegrationParams{ID: uuid.Must(uuid.NewV7()), OrgID: orgID,
			Name: in.Name, Type: in.Type, SettingsEnc: sealed, Now: s.now()})
		if err != nil {
			return err
		}
		if out, err = s.integrationOf(r); err != nil {
			return err
		}
		if err := setIntegrationPages(ctx, q, orgID, out.ID, in.StatusPageIDs); err != nil {
			return err
		}
		list := []Integration{out}
		if err := loadIntegrationPages(ctx, q, orgID, list); err != nil {
			return err
		}
		out = list[0]
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "created", AuditableType: "Integration",
			AuditableID: out.ID.String(), AuditableDisplayName: out.Name, Metadata: map[string]any{"type": out.Type}})
	})
	return out, translate(err)
}

// GetIntegration returns one integration of the organization (ErrNotFound when missing).
func (s *Store) GetIntegration(ctx context.Context, orgID, id uuid.UUID) (Integration, error) {
	r, err := s.q.GetIntegration(ctx, dbsqlc.GetIntegrationParams{OrgID: orgID, ID: id})
	if err != nil {
		return Integration{}, translate(err)
	}
	in, err := s.integrationOf(r)
	if err != nil {
		return in, err
	}
	list := []Integration{in}
	if err := loadIntegrationPages(ctx, s.q, orgID, list); err != nil {
		return in, translate(err)
	}
	return list[0], nil
}

// ListIntegrations returns one page of the organization's integrations (of type t, unless
// ""), newest first, and the total.
func (s *Store) ListIntegrations(ctx context.Context, orgID uuid.UUID, t string, limit, offset int64) ([]Integration, int64, error) {
	var typ *string
	if t != "" {
		typ = &t
	}
	total, err := s.q.CountIntegrations(ctx, dbsqlc.CountIntegrationsParams{OrgID: orgID, Type: typ})
	if err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.q.ListIntegrations(ctx, dbsqlc.ListIntegrationsParams{OrgID: orgID, Type: typ, PageLimit: limit, PageOffset: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	out := make([]Integration, len(rows))
	for i, r := range rows {
		if out[i], err = s.integrationOf(r); err != nil {
			return nil, 0, err
		}
	}
	if err := loadIntegrationPages(ctx, s.q, orgID, out); err != nil {
		return nil, 0, translate(err)
	}
	return out, total, nil
}

// UpdateIntegration locks an integration, lets change compute its new name, settings and
// pages from the stored ones (an error from change aborts and is returned as is), saves and
// audits them.
func (s *Store) UpdateIntegration(ctx context.Context, actor Actor, orgID, id uuid.UUID,
	change func(Integration) (IntegrationPatch, error)) (Integration, error) {
	var out Integration
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		r, err := q.LockIntegration(ctx, dbsqlc.LockIntegrationParams{OrgID: orgID, ID: id})
		if err != nil {
			return err
		}
		cur, err := s.integrationOf(r)
		if err != nil {
			return err
		}
		p, err := change(cur)
		if err != nil {
			return err
		}
		sealed, err := s.sealSettings(p.Settings)
		if err != nil {
			return err
		}
		u, err := q.UpdateIntegration(ctx, dbsqlc.UpdateIntegrationParams{OrgID: orgID, ID: id, Name: p.Name,
			SettingsEnc: sealed, Now: s.now()})
		if err != nil {
			return err
		}
		if out, err = s.integrationOf(u); err != nil {
			return err
		}
		if err := setIntegrationPages(ctx, q, orgID, id, p.StatusPageIDs); err != nil {
			return err
		}
		list := []Integration{out}
		if err := loadIntegrationPages(ctx, q, orgID, list); err != nil {
			return err
		}
		out = list[0]
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "updated", AuditableType: "Integration",
			AuditableID: id.String(), AuditableDisplayName: out.Name, Metadata: map[string]any{"type": out.Type}})
	})
	return out, translate(err)
}

// DeleteIntegration deletes an integration that no check or heartbeat names in its *_alerts
// and audits it; one in use is a *ConflictError integration_in_use naming its users. Its
// deliveries go with it.
func (s *Store) DeleteIntegration(ctx context.Context, actor Actor, orgID, id uuid.UUID) error {
	return translate(s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		// FOR UPDATE conflicts with the KEY SHARE lock a check or heartbeat takes when it starts
		// naming the integration (checkAlertIntegrations), so none can start between the look-up
		// of the users and the delete.
		r, err := q.LockIntegration(ctx, dbsqlc.LockIntegrationParams{OrgID: orgID, ID: id})
		if err != nil {
			return err
		}
		users, err := q.IntegrationUsers(ctx, dbsqlc.IntegrationUsersParams{OrgID: orgID,
			Field: integration.AlertsField(r.Type), IntegrationID: id.String()})
		if err != nil {
			return err
		}
		if len(users) > 0 {
			names := make([]string, len(users))
			for i, u := range users {
				names[i] = fmt.Sprintf("%s %q (%s)", u.Kind, u.Name, u.ID)
			}
			return &ConflictError{Type: "integration_in_use", Code: 409, Message: fmt.Sprintf(
				"integration %s is named in the %s of %s; remove it there first", r.Name, integration.AlertsField(r.Type),
				strings.Join(names, ", "))}
		}
		if err := q.DeleteIntegration(ctx, dbsqlc.DeleteIntegrationParams{OrgID: orgID, ID: id}); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "deleted", AuditableType: "Integration",
			AuditableID: id.String(), AuditableDisplayName: r.Name, Metadata: map[string]any{"type": r.Type}})
	}))
}

// checkAlertIntegrations makes sure that every id in the integration lists of alerts
// (slack_alerts, oncall_alerts, …) that differ from before names an integration of the list's
// type in the organization, and locks those FOR KEY SHARE until the transaction ends; anything
// else is a ValidationError naming the list. Lists left as they were are not judged again, so
// a configuration saved before integrations existed still takes other changes.
func checkAlertIntegrations(ctx context.Context, q *dbsqlc.Queries, orgID uuid.UUID, alerts, before check.Alerts) error {
	var ids []uuid.UUID
	prev := before.Lists()
	changed := map[string]bool{}
	for i, l := range alerts.Lists() {
		if integration.TypeOfAlertsField(l.Field) == "" || slices.Equal(*l.IDs, *prev[i].IDs) {
			continue
		}
		changed[l.Field] = true
		for _, s := range *l.IDs {
			id, err := uuid.Parse(s)
			if err != nil || s != id.String() {
				return &ValidationError{Field: l.Field, Message: fmt.Sprintf("unknown integration %s", s)}
			}
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := q.ReferenceIntegrations(ctx, dbsqlc.ReferenceIntegrationsParams{OrgID: orgID, Ids: dedupeIDs(ids)})
	if err != nil {
		return err
	}
	types := make(map[string]string, len(rows))
	for _, r := range rows {
		types[r.ID.String()] = r.Type
	}
	for _, l := range alerts.Lists() {
		want := integration.TypeOfAlertsField(l.Field)
		if !changed[l.Field] {
			continue
		}
		for _, s := range *l.IDs {
			switch t, ok := types[s]; {
			case !ok:
				return &ValidationError{Field: l.Field, Message: fmt.Sprintf("unknown integration %s", s)}
			case t != want:
				return &ValidationError{Field: l.Field, Message: fmt.Sprintf("integration %s is of type %s, not %s", s, t, want)}
			}
		}
	}
	return nil
}

// IntegrationDeliveries returns one page of an integration's deliveries, newest first, each
// with its attempts, and the total. An integration of another organization is ErrNotFound.
func (s *Store) IntegrationDeliveries(ctx context.Context, orgID, id uuid.UUID, limit, offset int64) ([]Delivery, int64, error) {
	if _, err := s.q.GetIntegration(ctx, dbsqlc.GetIntegrationParams{OrgID: orgID, ID: id}); err != nil {
		return nil, 0, translate(err)
	}
	total, err := s.q.CountIntegrationDeliveries(ctx, dbsqlc.CountIntegrationDeliveriesParams{OrgID: orgID, IntegrationID: &id})
	if err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.q.ListIntegrationDeliveries(ctx, dbsqlc.ListIntegrationDeliveriesParams{OrgID: orgID, IntegrationID: &id,
		PageLimit: limit, PageOffset: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	list := make([]Delivery, len(rows))
	for i, r := range rows {
		list[i] = deliveryOf(dbsqlc.ListDeliveriesRow{ID: r.ID, EventID: r.EventID, EventType: r.EventType, Status: r.Status,
			Attempts: r.Attempts, NextAttemptAt: r.NextAttemptAt, LastStatusCode: r.LastStatusCode, LastError: r.LastError,
			CreatedAt: r.CreatedAt, DeliveredAt: r.DeliveredAt})
		list[i].IntegrationID = id
	}
	if err := s.loadAttempts(ctx, list); err != nil {
		return nil, 0, err
	}
	return list, total, nil
}

// RunResult is one region's final attempt of a run, as an alert summarises it.
type RunResult struct {
	Region       string
	Passing      bool
	Summary      *string
	ResponseCode *int
	FailureType  *string
}

// LatestRun returns the final attempts of a check's latest run at or before at (looking back
// one day), one per region; none when there is no such run.
func (s *Store) LatestRun(ctx context.Context, orgID, checkID uuid.UUID, at time.Time) ([]RunResult, error) {
	rows, err := s.q.LatestRunResults(ctx, dbsqlc.LatestRunResultsParams{OrgID: orgID, CheckID: checkID,
		Since: at.Add(-24 * time.Hour), Until: at})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]RunResult, len(rows))
	for i, r := range rows {
		out[i] = RunResult{Region: r.Region, Passing: r.Passing, Summary: r.ResultSummary, ResponseCode: intPtr(r.ResponseCode),
			FailureType: r.FailureType}
	}
	return out, nil
}
