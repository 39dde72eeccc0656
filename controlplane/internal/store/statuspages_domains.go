package store

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// DomainVerification is where a page's custom domain stands: the domain (nil: none), the token
// its TXT record must carry, and when it was verified (nil: not yet).
type DomainVerification struct {
	Domain     *string
	Token      *string
	VerifiedAt *time.Time
}

// newDomainToken is the token of a new custom domain: 128 random bits.
func newDomainToken() string { return rand.Text() }

// CustomDomainVerification returns the page's custom domain verification.
func (r StatusPageReader) CustomDomainVerification(ctx context.Context, orgID, id uuid.UUID) (DomainVerification, error) {
	row, err := r.q.CustomDomainVerification(ctx, dbsqlc.CustomDomainVerificationParams{OrgID: orgID, ID: id})
	if err != nil {
		return DomainVerification{}, translate(err)
	}
	return DomainVerification{Domain: row.CustomDomain, Token: row.CustomDomainToken, VerifiedAt: row.CustomDomainVerifiedAt}, nil
}

// MarkCustomDomainVerified records that domain's record carried token, unless the page's
// domain or token changed meanwhile (then it reports false).
func (t *StatusPageTx) MarkCustomDomainVerified(ctx context.Context, orgID, id uuid.UUID, domain, token string, now time.Time) (bool, error) {
	n, err := t.q.MarkCustomDomainVerified(ctx, dbsqlc.MarkCustomDomainVerifiedParams{OrgID: orgID, ID: id,
		CustomDomain: &domain, Token: &token, Now: &now})
	return n == 1, translate(err)
}
