package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// apiTokenColumns are the columns of an API token that may leave the store: never the hash.
const apiTokenColumns = `id, org_id, name, grants, expires_at, created_at`

func scanAPIToken(row pgx.Row) (APIToken, error) {
	var t APIToken
	err := row.Scan(&t.ID, &t.OrgID, &t.Name, &t.Grants, &t.ExpiresAt, &t.CreatedAt)
	return t, err
}

// ListAPITokens returns one page of the organization's API tokens, newest first, and how many
// match in all. search, when not empty, keeps the tokens whose name contains it
// (case-insensitive).
func (s *Store) ListAPITokens(ctx context.Context, orgID uuid.UUID, search string, limit, offset int64) ([]APIToken, int64, error) {
	pattern := substringPattern(search)
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM api_tokens WHERE org_id = $1 AND name ILIKE $2`, orgID, pattern).
		Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+apiTokenColumns+` FROM api_tokens
		WHERE org_id = $1 AND name ILIKE $2
		ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`, orgID, pattern, limit, offset)
	if err != nil {
		return nil, 0, translate(err)
	}
	tokens, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (APIToken, error) { return scanAPIToken(r) })
	if err != nil {
		return nil, 0, translate(err)
	}
	return tokens, total, nil
}

// GetAPIToken returns one API token of the organization: ErrNotFound when it has none with id.
func (s *Store) GetAPIToken(ctx context.Context, orgID, id uuid.UUID) (APIToken, error) {
	t, err := scanAPIToken(s.pool.QueryRow(ctx, `SELECT `+apiTokenColumns+` FROM api_tokens WHERE org_id = $1 AND id = $2`, orgID, id))
	return t, translate(err)
}

// DeleteAPIToken deletes one API token of the organization and audits it, returning what was
// deleted. Authenticators on other replicas keep honouring the secret until their cache entry
// expires; the caller evicts it from its own.
func (s *Store) DeleteAPIToken(ctx context.Context, actor Actor, orgID, id uuid.UUID) (APIToken, error) {
	var t APIToken
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		t, err = scanAPIToken(tx.QueryRow(ctx, `DELETE FROM api_tokens WHERE org_id = $1 AND id = $2 RETURNING `+apiTokenColumns, orgID, id))
		if err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{
			Action: "deleted", AuditableType: "ApiToken", AuditableID: t.ID.String(), AuditableDisplayName: t.Name,
		})
	})
	if err != nil {
		return APIToken{}, fmt.Errorf("delete api token %s: %w", id, err)
	}
	return t, nil
}

// substringPattern turns a search string into an ILIKE pattern that matches it as a literal
// substring: the LIKE wildcards of the input are escaped (backslash is the default escape character),
// and "" matches everything.
func substringPattern(search string) string {
	return "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(search) + "%"
}
