package store

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

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
	return n == 1, pageConflict(err)
}

// A custom domain is exclusive only once VERIFIED (migration 0018): claims of one domain by
// several pages coexist while PENDING, and the first page to verify it takes it. Claims and
// verifications of a domain are serialized by LockCustomDomain.

// claimCustomDomain refuses (409 custom_domain_taken) to let page id claim a domain another
// page, of any organization, has verified. Unverified claims do not count: refusing them let
// anyone squat a domain, and told anyone which domains were claimed. Nil or "" claims nothing.
func (t *StatusPageTx) claimCustomDomain(ctx context.Context, id uuid.UUID, domain *string) error {
	if domain == nil || *domain == "" {
		return nil
	}
	if err := t.q.LockCustomDomain(ctx, *domain); err != nil {
		return translate(err)
	}
	taken, err := t.q.CustomDomainVerifiedElsewhere(ctx, dbsqlc.CustomDomainVerifiedElsewhereParams{CustomDomain: *domain, ID: id})
	if err != nil {
		return translate(err)
	}
	if taken {
		return customDomainTaken()
	}
	return nil
}

// customDomainTaken is the conflict of a claim of a domain another page has verified.
func customDomainTaken() error {
	return &ConflictError{Type: "custom_domain_taken", Code: 409, Message: "custom_domain: another status page has verified this domain"}
}

// LockCustomDomain serializes the claims and verifications of domain until the transaction
// ends.
func (t *StatusPageTx) LockCustomDomain(ctx context.Context, domain string) error {
	return translate(t.q.LockCustomDomain(ctx, domain))
}

// ReleasedClaim is a page whose pending claim of a domain went back to NONE.
type ReleasedClaim struct {
	OrgID, ID uuid.UUID
	Name      string
}

// ReleaseCustomDomainClaims clears every other page's pending claim of domain, which page id
// has just verified, whichever organization the page belongs to, and returns those pages.
func (t *StatusPageTx) ReleaseCustomDomainClaims(ctx context.Context, id uuid.UUID, domain string, now time.Time) ([]ReleasedClaim, error) {
	rows, err := t.q.ReleaseCustomDomainClaims(ctx, dbsqlc.ReleaseCustomDomainClaimsParams{ID: id, CustomDomain: domain, Now: now})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]ReleasedClaim, len(rows))
	for i, r := range rows {
		out[i] = ReleasedClaim(r)
	}
	return out, nil
}

// DomainRecheck is a verified custom domain due for a re-check.
type DomainRecheck struct {
	OrgID, ID     uuid.UUID
	Domain, Token string
}

// ClaimDomainRechecks returns, across organizations (the re-check's own scan), up to limit
// verified domains last looked for at or before dueBefore, and marks them as looked for at
// now: another replica's scan skips them.
func (s *Store) ClaimDomainRechecks(ctx context.Context, dueBefore, now time.Time, limit int) ([]DomainRecheck, error) {
	rows, err := s.q.ClaimDomainRechecks(ctx, dbsqlc.ClaimDomainRechecksParams{DueBefore: dueBefore, Now: now, MaxRows: int32(limit)})
	if err != nil {
		return nil, translate(err)
	}
	out := make([]DomainRecheck, len(rows))
	for i, r := range rows {
		out[i] = DomainRecheck{OrgID: r.OrgID, ID: r.ID, Domain: r.CustomDomain, Token: r.Token}
	}
	return out, nil
}

// MarkDomainRecordFound records that the re-check found the record of the page's verified
// domain.
func (t *StatusPageTx) MarkDomainRecordFound(ctx context.Context, orgID, id uuid.UUID, domain string) error {
	return translate(t.q.MarkDomainRecordFound(ctx, dbsqlc.MarkDomainRecordFoundParams{OrgID: orgID, ID: id, CustomDomain: domain}))
}

// MissingRecord is what MarkDomainRecordMissing did: since when the record is missing, and
// whether this call took the verification off (Lost).
type MissingRecord struct {
	PageName     string
	MissingSince time.Time
	Lost         bool
}

// MarkDomainRecordMissing records that the re-check did not find the record of the page's
// verified domain, and takes the verification off when it has been missing since lostBefore
// or earlier. A page whose domain changed or was unverified meanwhile is left alone (a zero
// MissingRecord).
func (t *StatusPageTx) MarkDomainRecordMissing(ctx context.Context, orgID, id uuid.UUID, domain string, now, lostBefore time.Time) (MissingRecord, error) {
	row, err := t.q.MarkDomainRecordMissing(ctx, dbsqlc.MarkDomainRecordMissingParams{OrgID: orgID, ID: id, CustomDomain: domain,
		Now: now, LostBefore: lostBefore})
	if errors.Is(err, pgx.ErrNoRows) {
		return MissingRecord{}, nil
	}
	if err != nil {
		return MissingRecord{}, translate(err)
	}
	return MissingRecord{PageName: row.Name, MissingSince: *row.MissingSince, Lost: row.Lost}, nil
}
