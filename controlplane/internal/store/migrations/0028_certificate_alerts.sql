-- Certificate expiry alerts (docs/checks.md, "Certificate expiry"): which thresholds of which
-- served certificate were already announced, so that certificate.expiring and
-- certificate.expired go out once per certificate (its SHA-256 fingerprint) and threshold,
-- across restarts and replicas. threshold_days 0 stands for certificate.expired. A renewed
-- certificate has another fingerprint, so its thresholds start afresh.
CREATE TABLE IF NOT EXISTS certificate_alerts (
    check_id       uuid        NOT NULL REFERENCES checks (id) ON DELETE CASCADE,
    org_id         uuid        NOT NULL,
    fingerprint    text        NOT NULL,
    threshold_days integer     NOT NULL CHECK (threshold_days >= 0),
    not_after      timestamptz NOT NULL,
    sent_at        timestamptz NOT NULL,
    PRIMARY KEY (check_id, fingerprint, threshold_days)
);
