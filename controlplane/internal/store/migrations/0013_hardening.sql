-- Vantage schema: the fingerprint of the key the stored secrets are sealed with.
--
-- Variable values, check passwords, webhook secrets and link tokens are sealed with
-- VANTAGE_SECRET_KEY (AES-256-GCM). A replica started with another key could not open them and
-- would fail quietly (deliveries delayed, checks without their secrets). Every replica compares
-- the fingerprint of its key (HMAC-SHA256 of a fixed label under the key, never the key) with
-- this row at start-up and refuses to start on a mismatch. `vantage-controlplane admin
-- reencrypt-secrets` re-seals everything under the current key and moves the row to it (key
-- rotation, README "Rotating VANTAGE_SECRET_KEY").
CREATE TABLE secret_key_fingerprint (
    singleton   boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
    fingerprint text        NOT NULL,
    updated_at  timestamptz NOT NULL
);

-- Custom domains are served only once proven: the owner publishes a TXT record
-- `_vantage-challenge.<domain>` with the value `vantage-domain-verification=<token>` and asks
-- for verification (POST /v1/status_pages/{id}/custom_domain/verify). A new or changed domain
-- gets a new token and is unverified again. Domains set before this migration must be verified
-- too: a page was served on any host its owner claimed.
ALTER TABLE status_pages
    ADD COLUMN custom_domain_token       text,
    ADD COLUMN custom_domain_verified_at timestamptz;
UPDATE status_pages SET custom_domain_token = replace(gen_random_uuid()::text, '-', '') WHERE custom_domain IS NOT NULL;
