-- Vantage schema: a custom domain is exclusive only once verified, and stays verified only while
-- its TXT record is there.

-- Until now any claim of a domain was unique (status_pages_custom_domain): the first page to
-- name a domain, verified or not, kept every other organization from claiming it, and the 409
-- custom_domain_taken told anyone which domains were claimed. Now claims coexist while PENDING;
-- only VERIFIED domains are unique, and the first page to verify a domain takes it (the other
-- claims go back to NONE, statuspage.VerifyCustomDomain). The old index allowed no two claims,
-- so no two verified pages share a domain and the new unique index builds.
CREATE UNIQUE INDEX status_pages_custom_domain_verified ON status_pages (custom_domain)
    WHERE custom_domain IS NOT NULL AND custom_domain_verified_at IS NOT NULL;
CREATE INDEX status_pages_custom_domain_claims ON status_pages (custom_domain) WHERE custom_domain IS NOT NULL;
DROP INDEX status_pages_custom_domain;

-- Verified domains are looked up again every VANTAGE_CUSTOM_DOMAIN_RECHECK: when their record
-- was last looked for, and since when it has been missing (NULL: it was there). A domain whose
-- record has been missing for VANTAGE_CUSTOM_DOMAIN_GRACE is PENDING again.
ALTER TABLE status_pages
    ADD COLUMN custom_domain_checked_at    timestamptz,
    ADD COLUMN custom_domain_missing_since timestamptz;
