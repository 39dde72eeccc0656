package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
	"github.com/vantagehq/vantage/pkg/check"
)

// Check is a stored check: its configuration (Spec), where it belongs, and the state the
// status machine and the scheduler keep. The Basic-auth password in Spec is plaintext here; it
// is sealed in auth_password_enc at rest.
type Check struct {
	ID         uuid.UUID
	OrgID      uuid.UUID
	ProjectID  *uuid.UUID // nil: Unassigned
	Spec       check.Spec
	State      string // PENDING, UP, VERIFYING, DOWN or RECOVERING (the status machine's own state)
	Paused     bool
	Muted      bool
	LastQueued *time.Time
	// SkippedRuns24h counts the regions' runs of the last 24 hours that did not run
	// (skipped_runs; set by GetCheck and UpdateCheck).
	SkippedRuns24h int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// InMaintenance: an active, enabled maintenance window lists the check (set by GetCheck
	// and UpdateCheck, as of the store's clock; false elsewhere).
	InMaintenance bool
	// DegradedReasons say why the check is degraded now (regional, slow), none when it is not
	// (set by GetCheck and UpdateCheck; nil elsewhere).
	DegradedReasons []string
}

// checkConfig is a spec as the checks table stores it: the columns of its common fields, the
// document of the rest (check.Spec.Document) and the sealed password.
type checkConfig struct {
	alerts, spec []byte
	passwordEnc  []byte
}

func (s *Store) checkConfig(sp check.Spec) (checkConfig, error) {
	var c checkConfig
	alerts := sp.Alerts
	alerts.Normalize()
	var err error
	if c.alerts, err = json.Marshal(alerts); err != nil {
		return c, fmt.Errorf("encode alerts: %w", err)
	}
	if c.spec, err = sp.Document(); err != nil {
		return c, err
	}
	if h := sp.HTTP; h != nil && h.AuthPassword != nil {
		if c.passwordEnc, err = s.sealer.Seal([]byte(*h.AuthPassword)); err != nil {
			return c, fmt.Errorf("seal auth password: %w", err)
		}
	}
	return c, nil
}

// checkOfRow is the Check a row of checks holds, its password opened.
func (s *Store) checkOfRow(r dbsqlc.Check) (Check, error) {
	c := Check{ID: r.ID, OrgID: r.OrgID, ProjectID: r.ProjectID, State: r.State, Paused: r.Paused, Muted: r.Muted,
		LastQueued: r.LastQueued, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	c.Spec = check.Spec{
		Kind:                         check.Kind(r.Kind),
		Name:                         r.Name,
		TestInterval:                 int(r.TestInterval),
		TestRegions:                  r.TestRegions,
		AlertPriority:                r.AlertPriority,
		ConfirmationPeriodSeconds:    int(r.ConfirmationPeriodSeconds),
		RecoveryPeriodSeconds:        int(r.RecoveryPeriodSeconds),
		ReminderAlertIntervalMinutes: intPtr(r.ReminderAlertIntervalMinutes),
		TimeoutMs:                    intPtr(r.TimeoutMs),
		RegionQuorum:                 check.Quorum(r.RegionQuorum),
		DependsOn:                    uuidStrings(r.DependsOn),
		DegradedResponseTimeMs:       intPtr(r.DegradedResponseTimeMs),
	}
	sp := &c.Spec
	if err := json.Unmarshal(r.Alerts, &sp.Alerts); err != nil {
		return c, fmt.Errorf("check %s: decode alerts: %w", c.ID, err)
	}
	sp.Alerts.Normalize()
	if err := sp.LoadDocument(r.Spec); err != nil {
		return c, fmt.Errorf("check %s: %w", c.ID, err)
	}
	if r.AuthPasswordEnc != nil && sp.HTTP != nil {
		pt, err := s.sealer.Open(r.AuthPasswordEnc)
		if err != nil {
			return c, fmt.Errorf("check %s: open auth password: %w", c.ID, err)
		}
		p := string(pt)
		sp.HTTP.AuthPassword = &p
	}
	return c, nil
}

// CreateCheck stores a new check in projectID (nil: Unassigned), binds its {{NAME}}
// references in that scope, and audits it, in one transaction. A project the organization
// does not have is ErrProjectNotFound; an unknown variable name is a *ValidationError.
func (s *Store) CreateCheck(ctx context.Context, actor Actor, orgID uuid.UUID, projectID *uuid.UUID, sp check.Spec) (Check, error) {
	now := s.now()
	c := Check{ID: uuid.Must(uuid.NewV7()), OrgID: orgID, ProjectID: projectID, Spec: sp, State: "PENDING", CreatedAt: now, UpdatedAt: now}
	cfg, err := s.checkConfig(sp)
	if err != nil {
		return c, err
	}
	deps, err := dependencyIDs(sp.DependsOn)
	if err != nil {
		return c, err
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockProjectForReference(ctx, tx, orgID, projectID); err != nil {
			return err
		}
		q := s.q.WithTx(tx)
		if err := checkDependencies(ctx, q, orgID, c.ID, deps); err != nil {
			return err
		}
		if err := checkAlertIntegrations(ctx, q, orgID, sp.Alerts, check.Alerts{}); err != nil {
			return err
		}
		if err := q.CreateCheck(ctx, dbsqlc.CreateCheckParams{
			ID: c.ID, OrgID: orgID, ProjectID: projectID, CreatedAt: now,
			Kind: string(sp.Kind), Name: sp.Name, TestInterval: int32(sp.TestInterval), TimeoutMs: int32Ptr(sp.TimeoutMs),
			TestRegions: sp.TestRegions, AlertPriority: sp.AlertPriority,
			ConfirmationPeriodSeconds:    int32(sp.ConfirmationPeriodSeconds),
			RecoveryPeriodSeconds:        int32(sp.RecoveryPeriodSeconds),
			ReminderAlertIntervalMinutes: int32Ptr(sp.ReminderAlertIntervalMinutes),
			Alerts:                       cfg.alerts, Spec: cfg.spec, AuthPasswordEnc: cfg.passwordEnc,
			RegionQuorum: quorumColumn(sp.RegionQuorum), DependsOn: uuidStrings(deps),
			DegradedResponseTimeMs: int32Ptr(sp.DegradedResponseTimeMs),
		}); err != nil {
			return fmt.Errorf("insert check: %w", err)
		}
		if err := bindCheckVars(ctx, q, orgID, c.ID, projectID, varRefs(sp)); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "created", AuditableType: "Check",
			AuditableID: c.ID.String(), AuditableDisplayName: sp.Name, Metadata: map[string]any{"check_type": string(sp.Kind)}})
	})
	return c, err
}

// GetCheck returns one check of the organization (ErrNotFound when missing): one primary-key
// lookup. withScript keeps the browser script, which only GET retrieve shows.
func (s *Store) GetCheck(ctx context.Context, orgID, id uuid.UUID, withScript bool) (Check, error) {
	row, err := s.q.GetCheck(ctx, dbsqlc.GetCheckParams{OrgID: orgID, ID: id})
	if err != nil {
		return Check{}, translate(err)
	}
	c, err := s.checkOfRow(row.Check)
	if err != nil {
		return c, err
	}
	if !withScript && c.Spec.HTTP != nil {
		c.Spec.HTTP.Script = nil
	}
	c.LastQueued = lastQueued(c.ID, time.Duration(c.Spec.TestInterval)*time.Second, c.Paused, c.CreatedAt, c.LastQueued, s.schedulerProgress(ctx))
	skipped, err := s.skippedRunCounts(ctx, s.q, orgID, []uuid.UUID{id})
	if err != nil {
		return c, err
	}
	c.SkippedRuns24h = skipped[id]
	if c.DegradedReasons, err = s.degradedReasons(ctx, orgID, id); err != nil {
		return c, err
	}
	c.InMaintenance, err = windowsActive(row.MaintenanceWindows, s.now())
	return c, err
}

// CheckKind returns the kind of one check of the organization (ErrNotFound when missing).
func (s *Store) CheckKind(ctx context.Context, orgID, id uuid.UUID) (check.Kind, error) {
	k, err := s.q.CheckKind(ctx, dbsqlc.CheckKindParams{OrgID: orgID, ID: id})
	return check.Kind(k), translate(err)
}

// UpdateCheck changes one check in one transaction: it locks the stored check, lets change
// edit a copy of it (the script loaded), and writes the result back. kind, when not empty,
// makes a check of another kind ErrNotFound (typed routes). An error from change aborts the
// update and is returned as is.
//
// A changed ProjectID is a move with the rules of MoveCheck (ErrProjectNotFound, the
// project_move_variable_conflict ConflictError, a "moved" audit event); then the references of
// the new configuration are bound in the check's (new) scope, where an unknown name is a
// *ValidationError. The update is audited as "updated".
func (s *Store) UpdateCheck(ctx context.Context, actor Actor, orgID, id uuid.UUID, kind check.Kind, change func(*Check) error) (Check, error) {
	var out Check
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		row, err := q.LockCheck(ctx, dbsqlc.LockCheckParams{OrgID: orgID, ID: id})
		if err != nil {
			return err
		}
		cur, err := s.checkOfRow(row.Check)
		if err != nil {
			return err
		}
		if kind != "" && cur.Spec.Kind != kind {
			return ErrNotFound
		}
		next := cur
		if err := change(&next); err != nil {
			return err
		}
		if !sameScope(cur.ProjectID, next.ProjectID) {
			// Only variables the new configuration still references must follow the check:
			// forget the others first, since the move judges the recorded references.
			if err := keepVarRefs(ctx, q, orgID, id, varRefs(next.Spec)); err != nil {
				return err
			}
			if _, err := s.moveCheckTx(ctx, tx, actor, orgID, id, next.ProjectID); err != nil {
				return err
			}
		}
		cfg, err := s.checkConfig(next.Spec)
		if err != nil {
			return err
		}
		if err := checkAlertIntegrations(ctx, q, orgID, next.Spec.Alerts, cur.Spec.Alerts); err != nil {
			return err
		}
		sp := next.Spec
		deps, err := dependencyIDs(sp.DependsOn)
		if err != nil {
			return err
		}
		if err := checkDependencies(ctx, q, orgID, id, deps); err != nil {
			return err
		}
		next.UpdatedAt = s.now()
		n, err := q.UpdateCheck(ctx, dbsqlc.UpdateCheckParams{
			OrgID: orgID, ID: id, Paused: next.Paused, Muted: next.Muted, UpdatedAt: next.UpdatedAt,
			Kind: string(sp.Kind), Name: sp.Name, TestInterval: int32(sp.TestInterval), TimeoutMs: int32Ptr(sp.TimeoutMs),
			TestRegions: sp.TestRegions, AlertPriority: sp.AlertPriority,
			ConfirmationPeriodSeconds:    int32(sp.ConfirmationPeriodSeconds),
			RecoveryPeriodSeconds:        int32(sp.RecoveryPeriodSeconds),
			ReminderAlertIntervalMinutes: int32Ptr(sp.ReminderAlertIntervalMinutes),
			Alerts:                       cfg.alerts, Spec: cfg.spec, AuthPasswordEnc: cfg.passwordEnc,
			RegionQuorum: quorumColumn(sp.RegionQuorum), DependsOn: uuidStrings(deps),
			DegradedResponseTimeMs: int32Ptr(sp.DegradedResponseTimeMs),
		})
		if err != nil {
			return fmt.Errorf("update check: %w", err)
		}
		if n != 1 {
			return ErrNotFound
		}
		if err := bindCheckVars(ctx, q, orgID, id, next.ProjectID, varRefs(sp)); err != nil {
			return err
		}
		inWindow, err := inMaintenance(ctx, tx, "checks", []uuid.UUID{id}, next.UpdatedAt)
		if err != nil {
			return err
		}
		next.InMaintenance = inWindow[id]
		out = next
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "updated", AuditableType: "Check",
			AuditableID: id.String(), AuditableDisplayName: sp.Name, Metadata: map[string]any{"check_type": string(sp.Kind)}})
	})
	if err != nil {
		return out, err
	}
	out.LastQueued = lastQueued(out.ID, time.Duration(out.Spec.TestInterval)*time.Second, out.Paused, out.CreatedAt, out.LastQueued, s.schedulerProgress(ctx))
	skipped, err := s.skippedRunCounts(ctx, s.q, orgID, []uuid.UUID{id})
	if err != nil {
		return out, err
	}
	out.SkippedRuns24h = skipped[id]
	out.DegradedReasons, err = s.degradedReasons(ctx, orgID, id)
	return out, err
}

// DeleteCheck deletes one check (its variable references and incidents go with it; its results
// stay until retention drops their partition) and audits it. kind, when not empty, makes a
// check of another kind ErrNotFound.
func (s *Store) DeleteCheck(ctx context.Context, actor Actor, orgID, id uuid.UUID, kind check.Kind) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		gone, err := s.q.WithTx(tx).DeleteCheck(ctx, dbsqlc.DeleteCheckParams{OrgID: orgID, ID: id, Kind: string(kind)})
		if err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "deleted", AuditableType: "Check",
			AuditableID: id.String(), AuditableDisplayName: gone.Name, Metadata: map[string]any{"check_type": gone.Kind}})
	})
}

// varRefs converts the spec's references for bindCheckVars.
func varRefs(sp check.Spec) []VarRef {
	refs := sp.VarRefs()
	out := make([]VarRef, len(refs))
	for i, r := range refs {
		out[i] = VarRef{Field: r.Field, Name: r.Name}
	}
	return out
}

// quorumColumn is the region_quorum column of a quorum; a Spec built without Defaults has the
// empty quorum, which is the majority.
func quorumColumn(q check.Quorum) string {
	if q == "" {
		return string(check.QuorumMajority)
	}
	return string(q)
}
