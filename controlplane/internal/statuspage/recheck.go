package statuspage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Defaults of the custom domain re-check (Config.DomainRecheck, Config.DomainGrace).
const (
	DefaultDomainRecheck = time.Hour
	DefaultDomainGrace   = 72 * time.Hour
	// recheckBatch bounds the domains one round looks up; the rest are due at the next round.
	recheckBatch = 100
)

// RunDomainRechecks re-checks verified custom domains until ctx ends: every Config.Interval it
// looks up the records of the domains last looked for Config.DomainRecheck ago
// (RecheckDomains). A failed round is logged and the next one retries. Every replica may run
// it: a domain is claimed by one replica's round (store.ClaimDomainRechecks), and taking a
// verification off happens once (store.MarkDomainRecordMissing).
func (s *Service) RunDomainRechecks(ctx context.Context) error {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		if err := s.RecheckDomains(ctx); err != nil && ctx.Err() == nil {
			s.log.ErrorContext(ctx, "custom domain re-check failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// RecheckDomains does one round of the re-check at the clock's current time: each verified
// domain due is looked up, and one whose record has been missing for the grace period is
// PENDING again, the page no longer answering on it, with a
// status_page.custom_domain_unverified event and an audit entry in the page's organization.
// A failed lookup counts as a missing record: the grace period absorbs a passing DNS outage.
func (s *Service) RecheckDomains(ctx context.Context) error {
	now := s.now()
	due, err := s.st.ClaimDomainRechecks(ctx, now.Add(-s.domainRecheck), now, recheckBatch)
	if err != nil {
		return fmt.Errorf("claim custom domains to re-check: %w", err)
	}
	// One page's failure does not skip the others: they were claimed for this round.
	var errs []error
	for _, d := range due {
		found := s.lookUpChallenge(ctx, d.Domain, d.Token) == ""
		if err := s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
			return s.recordRecheck(ctx, tx, d, found, now)
		}); err != nil {
			errs = append(errs, fmt.Errorf("re-check custom domain of status page %s: %w", d.ID, err))
		}
	}
	return errors.Join(errs...)
}

// recordRecheck records what the lookup of d's record found, and takes the verification off
// once the record has been missing for the grace period.
func (s *Service) recordRecheck(ctx context.Context, tx *store.StatusPageTx, d store.DomainRecheck, found bool, now time.Time) error {
	if found {
		return tx.MarkDomainRecordFound(ctx, d.OrgID, d.ID, d.Domain)
	}
	m, err := tx.MarkDomainRecordMissing(ctx, d.OrgID, d.ID, d.Domain, now, now.Add(-s.domainGrace))
	if err != nil || !m.Lost {
		return err
	}
	s.log.InfoContext(ctx, "custom domain no longer verified: its TXT record is missing", "org_id", d.OrgID,
		"status_page_id", d.ID, "custom_domain", d.Domain, "missing_since", m.MissingSince)
	ev := event.CustomDomainUnverified{CustomDomainChange: event.CustomDomainChange{OccurredAt: now,
		StatusPage: event.PageRef{ID: d.ID, Name: m.PageName}, Domain: d.Domain}, MissingSince: m.MissingSince}
	if err := tx.QueueEvents(ctx, store.OutboxEvent{OrgID: d.OrgID, Event: ev, StatusPageID: &d.ID, CreatedAt: now}); err != nil {
		return err
	}
	return tx.Audit(ctx, d.OrgID, store.SystemActor, store.AuditEvent{Action: "updated", AuditableType: "StatusPage",
		AuditableID: d.ID.String(), AuditableDisplayName: m.PageName,
		Metadata: map[string]any{"custom_domain_unverified": d.Domain, "missing_since": m.MissingSince.UTC().Format(TimeLayout)}})
}
