package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
)

// ListAPITokens returns one page of the organization's API tokens, newest first, and how many
// match in all. search, when not empty, keeps the tokens whose name contains it
// (case-insensitive).
func (s *Store) ListAPITokens(ctx context.Context, orgID uuid.UUID, search string, limit, offset int64) ([]APIToken, int64, error) {
	pattern := substringPattern(search)
	total, err := s.q.CountAPITokens(ctx, dbsqlc.CountAPITokensParams{OrgID: orgID, Pattern: pattern})
	if err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.q.ListAPITokens(ctx, dbsqlc.ListAPITokensParams{OrgID: orgID, Pattern: pattern, MaxRows: limit, SkipRows: offset})
	if err != nil {
		return nil, 0, translate(err)
	}
	tokens := make([]APIToken, len(rows))
	for i, t := range rows {
		tokens[i] = APIToken(t)
	}
	return tokens, total, nil
}

// GetAPIToken returns one API token of the organization: ErrNotFound when it has none with id.
func (s *Store) GetAPIToken(ctx context.Context, orgID, id uuid.UUID) (APIToken, error) {
	t, err := s.q.GetAPIToken(ctx, dbsqlc.GetAPITokenParams{OrgID: orgID, ID: id})
	return APIToken(t), translate(err)
}

// DeleteAPIToken deletes one API token of the organization and audits it, returning what was
// deleted. Every replica's authenticator hears of it at commit (AuthChannel).
func (s *Store) DeleteAPIToken(ctx context.Context, actor Actor, orgID, id uuid.UUID) (APIToken, error) {
	var t dbsqlc.DeleteAPITokenRow
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		q := s.q.WithTx(tx)
		t, err = q.DeleteAPIToken(ctx, dbsqlc.DeleteAPITokenParams{OrgID: orgID, ID: id})
		if err != nil {
			return err
		}
		if err := notifyAuthChange(ctx, q, AuthChangeToken, t.ID); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{
			Action: "deleted", AuditableType: "ApiToken", AuditableID: t.ID.String(), AuditableDisplayName: t.Name,
		})
	})
	if err != nil {
		return APIToken{}, fmt.Errorf("delete api token %s: %w", id, err)
	}
	return APIToken(t), nil
}

// substringPattern turns a search string into an ILIKE pattern that matches it as a literal
// substring: the LIKE wildcards of the input are escaped (backslash is the default escape character),
// and "" matches everything.
func substringPattern(search string) string {
	return "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(search) + "%"
}
