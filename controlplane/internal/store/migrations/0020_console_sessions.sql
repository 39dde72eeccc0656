-- Vantage schema: the web console's sign-in sessions and one-time sign-in codes
-- (controlplane/internal/console).

-- A browser's session. Only hashes are kept: secret_hash is the SHA-256 of the opaque
-- vantage_session cookie, csrf_hash that of the vantage_csrf cookie. A session acts with a
-- credential and never holds permissions of its own: credential_hash is the secret_hash of the
-- API or access token behind it, resolved like a bearer secret on every request, so a deleted
-- token or a removed member ends the session at once on every replica. A user's sign-in
-- (e-mail link, OpenID Connect) mints an access token for the session, minted_token_id, which
-- is deleted with it. org_id is the organization the session acts in (the switcher); NULL
-- means the credential's only one.
CREATE TABLE console_sessions (
    id              uuid PRIMARY KEY,
    secret_hash     bytea NOT NULL UNIQUE,
    csrf_hash       bytea NOT NULL,
    credential_hash bytea NOT NULL,
    minted_token_id uuid REFERENCES access_tokens (id) ON DELETE CASCADE,
    org_id          uuid REFERENCES organizations (id) ON DELETE CASCADE,
    created_at      timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL
);

CREATE INDEX console_sessions_expires_at ON console_sessions (expires_at);

-- A one-time sign-in code, the secret of a link (admin console-link, an e-mailed sign-in link).
-- code_hash is the SHA-256 of the code. It signs in with an existing token (credential_hash)
-- or as a user (user_id), exactly one of the two; it is deleted when used.
CREATE TABLE console_signin_codes (
    code_hash       bytea PRIMARY KEY,
    credential_hash bytea,
    user_id         uuid REFERENCES users (id) ON DELETE CASCADE,
    created_at      timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL,
    CONSTRAINT console_signin_codes_one_subject CHECK ((credential_hash IS NULL) <> (user_id IS NULL))
);

CREATE INDEX console_signin_codes_expires_at ON console_signin_codes (expires_at);
