-- Vantage schema, version 9: invitations to an organization (supplement §2.5) and the tokens of
-- the status page subscribers' e-mail flow (double opt-in confirmation, one-click unsubscribe).
--
-- Link tokens (subscriber confirmation and unsubscribe, invitation acceptance) are 256-bit
-- random strings. Each is kept twice: its SHA-256 (*_hash), which the public links are looked
-- up by, and sealed with VANTAGE_SECRET_KEY (*_enc, AES-256-GCM), which the notifier opens when
-- it renders an e-mail. No token is ever stored in clear, neither here nor in the outbox.

CREATE TABLE invitations (
    id          uuid PRIMARY KEY,
    org_id      uuid        NOT NULL REFERENCES organizations ON DELETE CASCADE,
    email       text        NOT NULL,
    role        text        NOT NULL CHECK (role IN ('ADMIN', 'STANDARD')),
    token_hash  bytea       NOT NULL,
    token_enc   bytea       NOT NULL,
    invited_by  text,                  -- the inviting actor's display name, for the e-mail
    created_at  timestamptz NOT NULL,
    accepted_at timestamptz,           -- NULL while pending
    UNIQUE (org_id, id)
);
-- One pending invitation per address and organization.
CREATE UNIQUE INDEX invitations_pending_email ON invitations (org_id, lower(email)) WHERE accepted_at IS NULL;
CREATE UNIQUE INDEX invitations_token ON invitations (token_hash);
CREATE INDEX invitations_org ON invitations (org_id, created_at DESC, id DESC);

ALTER TABLE status_page_subscribers
    -- sealed confirmation token; NULL once confirmed (like confirmation_token_hash)
    ADD COLUMN confirmation_token_enc bytea,
    -- unsubscribe token of every e-mail's link; subscribers created before this migration get
    -- theirs when their first e-mail is rendered
    ADD COLUMN unsubscribe_token_hash bytea,
    ADD COLUMN unsubscribe_token_enc  bytea;
CREATE UNIQUE INDEX status_page_subscribers_unsubscribe ON status_page_subscribers (unsubscribe_token_hash)
    WHERE unsubscribe_token_hash IS NOT NULL;

-- When the "an hour before" notice of a scheduled maintenance went to its page's subscribers
-- (notifications.an_hour_before); NULL while not sent.
ALTER TABLE status_page_incidents ADD COLUMN reminded_at timestamptz;
