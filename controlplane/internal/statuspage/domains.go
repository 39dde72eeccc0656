package statuspage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// Custom domains answer only once their owner has proven control of the name: a TXT record
// ChallengeLabel.<domain> holding ChallengeValuePrefix + the page's token, checked by
// VerifyCustomDomain (POST /v1/status_pages/{id}/custom_domain/verify). A new or changed
// domain gets a new token and must be verified again (docs/api-extensions.md).
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
// marks the domain verified (audited). A record not found is not an error: the status stays
// PENDING with the problem said.
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
	lctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	records, lerr := s.txt(lctx, *d.RecordName)
	if lerr != nil || !slices.ContainsFunc(records, func(r string) bool { return strings.TrimSpace(r) == *d.RecordValue }) {
		problem := fmt.Sprintf("no TXT record %s with the value %s was found", *d.RecordName, *d.RecordValue)
		if lerr != nil {
			problem += " (" + lerr.Error() + ")"
		}
		d.Problem = &problem
		return d, nil
	}
	err = s.st.InStatusPageTx(ctx, func(tx *store.StatusPageTx) error {
		ok, err := tx.MarkCustomDomainVerified(ctx, orgID, id, *v.Domain, *v.Token, s.now())
		if err != nil || !ok {
			return err
		}
		return tx.Audit(ctx, orgID, actor, store.AuditEvent{Action: "updated", AuditableType: "StatusPage",
			AuditableID: id.String(), AuditableDisplayName: *v.Domain, Metadata: map[string]any{"custom_domain_verified": *v.Domain}})
	})
	if err != nil {
		return DomainStatus{}, err
	}
	return s.CustomDomainStatus(ctx, orgID, id)
}
