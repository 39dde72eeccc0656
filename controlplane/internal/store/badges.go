package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// badgeTokenBytes is the entropy of a badge token: 160 bits, base64url without padding (27
// characters).
const badgeTokenBytes = 20

// BadgeTokenLen is the length of every badge token, so that a path segment of another length
// is refused without a query.
const BadgeTokenLen = (badgeTokenBytes*8 + 5) / 6

// HashBadgeToken is the SHA-256 by which a badge token is looked up.
func HashBadgeToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// CheckBadge is the badge token of a check, or "" when the check has no badge. A check that is
// not the organization's is ErrNotFound.
func (s *Store) CheckBadge(ctx context.Context, orgID, checkID uuid.UUID) (string, error) {
	sealed, err := s.q.GetCheckBadge(ctx, dbsqlc.GetCheckBadgeParams{OrgID: orgID, CheckID: checkID})
	if err = translate(err); errors.Is(err, ErrNotFound) {
		return "", s.badgeCheckExists(ctx, orgID, checkID)
	} else if err != nil {
		return "", fmt.Errorf("read badge: %w", err)
	}
	return s.openBadgeToken(checkID, sealed)
}

// EnableCheckBadge gives the check a badge with a new random token, or returns the token of the
// badge it already has (kept, so that enabling twice does not break URLs already published).
// A new badge is audited as "check_badge.enabled". A check that is not the organization's is
// ErrNotFound.
func (s *Store) EnableCheckBadge(ctx context.Context, actor Actor, orgID, checkID uuid.UUID) (string, error) {
	raw := make([]byte, badgeTokenBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("badge token: %w", err)
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	sealed, err := s.sealer.Seal([]byte(token))
	if err != nil {
		return "", fmt.Errorf("seal badge token: %w", err)
	}
	created := false
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := s.q.WithTx(tx).CreateCheckBadge(ctx, dbsqlc.CreateCheckBadgeParams{OrgID: orgID, CheckID: checkID,
			TokenHash: HashBadgeToken(token), TokenEnc: sealed, CreatedAt: s.now()})
		if created = err == nil; !created {
			if errors.Is(err, pgx.ErrNoRows) {
				return nil // not the organization's check, or it has a badge already
			}
			return fmt.Errorf("create badge: %w", err)
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "enabled", AuditableType: "CheckBadge",
			AuditableID: checkID.String()})
	})
	if err != nil {
		return "", err
	}
	if created {
		return token, nil
	}
	return s.CheckBadge(ctx, orgID, checkID)
}

// DisableCheckBadge deletes the check's badge, if it has one (deleted says whether it had):
// its token never answers again. The deletion is audited as "check_badge.disabled" and
// announced on AuthChannel (AuthChangeBadge) as it commits, so that every replica drops the
// badge from its cache. A check that is not the organization's is ErrNotFound.
func (s *Store) DisableCheckBadge(ctx context.Context, actor Actor, orgID, checkID uuid.UUID) (deleted bool, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		q := s.q.WithTx(tx)
		n, err := q.DeleteCheckBadge(ctx, dbsqlc.DeleteCheckBadgeParams{OrgID: orgID, CheckID: checkID})
		if err != nil {
			return fmt.Errorf("delete badge: %w", err)
		}
		if deleted = n > 0; !deleted {
			return nil
		}
		if err := writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "disabled", AuditableType: "CheckBadge",
			AuditableID: checkID.String()}); err != nil {
			return err
		}
		return notifyAuthChange(ctx, q, AuthChangeBadge, checkID)
	})
	if err != nil || deleted {
		return deleted, err
	}
	return false, s.badgeCheckExists(ctx, orgID, checkID)
}

// BadgeOwner is the check a badge token shows, with its organization: the token is the
// credential of the public badge routes. An unknown token is ErrNotFound.
func (s *Store) BadgeOwner(ctx context.Context, token string) (orgID, checkID uuid.UUID, err error) {
	r, err := s.q.BadgeByTokenHash(ctx, HashBadgeToken(token))
	if err != nil {
		return uuid.Nil, uuid.Nil, translate(err)
	}
	return r.OrgID, r.CheckID, nil
}

// BadgeResponseTime is the median response time of the check's passing final attempts since
// since, and how many there were (0: the median means nothing).
func (s *Store) BadgeResponseTime(ctx context.Context, orgID, checkID uuid.UUID, since time.Time) (p50 time.Duration, results int64, err error) {
	r, err := s.q.BadgeResponseTime(ctx, dbsqlc.BadgeResponseTimeParams{OrgID: orgID, CheckID: checkID, Since: since})
	if err != nil {
		return 0, 0, fmt.Errorf("badge response time: %w", translate(err))
	}
	return time.Duration(r.P50Ms * float64(time.Millisecond)), r.Results, nil
}

// badgeCheckExists is nil when the organization has the check, else ErrNotFound.
func (s *Store) badgeCheckExists(ctx context.Context, orgID, checkID uuid.UUID) error {
	ok, err := s.q.BadgeCheckExists(ctx, dbsqlc.BadgeCheckExistsParams{OrgID: orgID, CheckID: checkID})
	if err != nil {
		return fmt.Errorf("read check: %w", translate(err))
	}
	if !ok {
		return ErrNotFound
	}
	return nil
}

func (s *Store) openBadgeToken(checkID uuid.UUID, sealed []byte) (string, error) {
	pt, err := s.sealer.Open(sealed)
	if err != nil {
		return "", fmt.Errorf("open badge token of check %s: %w", checkID, err)
	}
	return string(pt), nil
}
