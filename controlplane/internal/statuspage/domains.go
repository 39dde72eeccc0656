package statuspage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/event"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/netpolicy"
)

// Custom domains answer only once their owner has proven control of the name: a TXT record
// ChallengeLabel.<domain> holding ChallengeValuePrefix + the page's token, checked by
// VerifyCustomDomain (POST /v1/status_pages/{id}/custom_domain/verify). A new or changed
// domain gets a new token and must be verified again (docs/api-extensions.md).
//
// Only a VERIFIED domain is exclusive: pages of any organizations may claim one domain while
// PENDING, the first to verify it takes it and the other claims go back to NONE (with a
// status_page.custom_domain_released event). A verified domain keeps proving it: RunDomainRechecks
// looks its record up again every Config.DomainRecheck, and one missing for Config.DomainGrace
// is PENDING again (status_page.custom_domain_unverified; recheck.go).
const (
	ChallengeLabel       = "_vantage-challenge"
	ChallengeValuePrefix = "vantage-domain-verification="
	// lookupTimeout bounds one verification's DNS lookup.
	lookupTimeout = 5 * time.Second
)

// Verification statuses of a custom domain.
const (
	DomainNone     = "NONE"     // the page has no custom domain
	DomainPending  = "PENDING"  // set, not verified: the page does not answer on it
	DomainVerified = "VERIFIED" // the page answers on it
)

// DomainStatus is a page's custom domain verification, as the API shows it.
type DomainStatus struct {
	CustomDomain *string `json:"custom_domain"`
	Status       string  `json:"status"`
	RecordType   string  `json:"record_type"`
	RecordName   *string `json:"record_name"`
	RecordValue  *string `json:"record_value"`
	VerifiedAt   *string `json:"verified_at"`
	// Problem says why the last verification did not succeed (verify only).
	Problem *string `json:"problem"`
}

func domainStatusOf(v store.DomainVerification) DomainStatus {
	d := DomainStatus{CustomDomain: v.Domain, Status: DomainNone, RecordType: "TXT"}
	if v.Domain == nil || v.Token == nil {
		return d
	}
	name := ChallengeLabel + "." + *v.Domain
	value := ChallengeValuePrefix + *v.Token
	d.RecordName, d.RecordValue, d.Status = &name, &value, DomainPending
	if v.VerifiedAt != nil {
		at := v.VerifiedAt.UTC().Format(TimeLayout)
		d.VerifiedAt, d.Status = &at, DomainVerified
	}
	return d
}

// CustomDomainStatus returns where the page's custom domain verification stands.
func (s *Service) CustomDomainStatus(ctx context.Context, orgID, id uuid.UUID) (DomainStatus, error) {
	v, err := s.st.StatusPages().CustomDomainVerification(ctx, orgID, id)
	if err != nil {
		return DomainStatus{}, err
	}
	return domainStatusOf(v), nil
}

// VerifyCustomDomain looks the page's challenge record up and, when it carries the token,
// marks the domain verified (audited) and releases other pages' pending claims of it
// (takeCustomDomain). A record not found is not an error: the status stays PENDING with the
// problem said. A claim released meanwhile, by another page's verification, reads NONE.
func (s *Service) VerifyCustomDomain(ctx context.Context, actor store.Actor, orgID, id uuid.UUID) (DomainStatus, error) {
	v, err := s.st.StatusPages().CustomDomainVerification(ctx, orgID, id)
	if err != nil {
		return DomainStatus{}, err
	}
	d := domainStatusOf(v)
	switch d.Status {
	case DomainNone:
		return d, &store.ValidationError{Field: "custom_domain", Message: "the status page has no custom domain to verify"}
	case DomainVerified:
		return d, nil
	}
	if problem := s.lookUpChallenge(ctx, *v.Domain, *v.Token); problem != "" {
		d.Problem = &problem
		return d, nil
	}
	err = s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		return s.takeCustomDomain(ctx, tx, actor, orgID, id, *v.Domain, *v.Token)
	})
	if err != nil {
		return DomainStatus{}, err
	}
	return s.CustomDomainStatus(ctx, orgID, id)
}

// lookUpChallenge looks the challenge record of domain up and returns why it does not carry
// token ("" when it does). A failed lookup is a missing record: the problem says why.
func (s *Service) lookUpChallenge(ctx context.Context, domain, token string) (problem string) {
	name, value := ChallengeLabel+"."+domain, ChallengeValuePrefix+token
	lctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	records, err := s.txt(lctx, name)
	if err == nil && slices.ContainsFunc(records, func(r string) bool { return strings.TrimSpace(r) == value }) {
		return ""
	}
	problem = fmt.Sprintf("no TXT record %s with the value %s was found", name, value)
	if err != nil {
		// The resolver's own error names the deployment's resolver: the tenant reads a class.
		problem += " (" + netpolicy.Describe(name, err) + ")"
	}
	return problem
}

// takeCustomDomain marks page id's domain verified (audited) and sends every other page's
// pending claim of it, in any organization, back to NONE, each told with a
// status_page.custom_domain_released event in its own organization. Under the domain's lock:
// of two pages verifying one domain at once, the second finds its claim released. A page
// whose domain or token changed since the lookup is left alone.
func (s *Service) takeCustomDomain(ctx context.Context, tx *store.StatusPageTx, actor store.Actor, orgID, id uuid.UUID, domain, token string) error {
	now := s.now()
	if err := tx.LockCustomDomain(ctx, domain); err != nil {
		return err
	}
	ok, err := tx.MarkCustomDomainVerified(ctx, orgID, id, domain, token, now)
	if err != nil || !ok {
		return err
	}
	if err := tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "updated", AuditableType: "StatusPage",
		AuditableID: id.String(), AuditableDisplayName: domain, Metadata: map[string]any{"custom_domain_verified": domain}}); err != nil {
		return err
	}
	released, err := tx.ReleaseCustomDomainClaims(ctx, id, domain, now)
	if err != nil {
		return err
	}
	for _, r := range released {
		ev := event.CustomDomainReleased{CustomDomainChange: event.CustomDomainChange{OccurredAt: now,
			StatusPage: event.PageRef{ID: r.ID, Name: r.Name}, Domain: domain}}
		if err := tx.QueueEvents(ctx, store.OutboxEvent{OrgID: r.OrgID, Event: ev, StatusPageID: &r.ID, CreatedAt: now}); err != nil {
			return err
		}
		if err := tx.Audit(ctx, r.OrgID, store.SystemActor, store.AuditEvent{Action: "updated", AuditableType: "StatusPage",
			AuditableID: r.ID.String(), AuditableDisplayName: r.Name,
			Metadata: map[string]any{"custom_domain_released": domain, "reason": "verified by another status page"}}); err != nil {
			return err
		}
	}
	return nil
}
