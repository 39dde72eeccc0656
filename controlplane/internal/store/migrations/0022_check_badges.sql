-- Vantage schema: public badges of checks (GET /badges/{token}/{status|uptime|response}.svg).

-- At most one badge per check. The badge URL's token is its only credential: it is looked up
-- by its SHA-256 (token_hash), like API tokens, and also kept sealed under VANTAGE_SECRET_KEY
-- (token_enc) because the owner reads the URL again on GET. Disabling a badge deletes its row,
-- so a later enable makes a new token and the old URL never answers again.
CREATE TABLE check_badges (
    org_id     uuid        NOT NULL,
    check_id   uuid        PRIMARY KEY,
    token_hash bytea       NOT NULL UNIQUE,
    token_enc  bytea       NOT NULL,
    created_at timestamptz NOT NULL,
    FOREIGN KEY (org_id, check_id) REFERENCES checks (org_id, id) ON DELETE CASCADE
);
