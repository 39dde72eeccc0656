-- Certificate expiry alerts (certwatch): what was announced per check, certificate and threshold.

-- name: SentCertificateAlerts :many
-- The thresholds already announced for the given (check, fingerprint) pairs.
SELECT a.check_id, a.fingerprint, a.threshold_days
FROM certificate_alerts a
JOIN ROWS FROM (unnest(@org_ids::uuid[]), unnest(@check_ids::uuid[]), unnest(@fingerprints::text[])) AS u(o, c, f)
    ON a.org_id = u.o AND a.check_id = u.c AND a.fingerprint = u.f;

-- name: RecordCertificateAlerts :many
-- Marks thresholds as announced; only those not announced before come back, so that two
-- transactions racing on one certificate announce it once.
INSERT INTO certificate_alerts (check_id, org_id, fingerprint, threshold_days, not_after, sent_at)
SELECT c, o, f, t, n, @sent_at::timestamptz
FROM ROWS FROM (unnest(@check_ids::uuid[]), unnest(@org_ids::uuid[]), unnest(@fingerprints::text[]),
    unnest(@thresholds::int4[]), unnest(@not_afters::timestamptz[])) AS u(c, o, f, t, n)
WHERE EXISTS (SELECT 1 FROM checks k WHERE k.id = u.c AND k.org_id = u.o)
ORDER BY c, f, t
ON CONFLICT DO NOTHING
RETURNING check_id, fingerprint, threshold_days;

-- name: CertificateCheckSpecs :many
-- The configuration documents of the given checks, for their alert thresholds.
SELECT c.id, c.org_id, c.kind, c.spec
FROM checks c
WHERE c.id = ANY(@check_ids::uuid[]) AND c.org_id = ANY(@org_ids::uuid[]);
