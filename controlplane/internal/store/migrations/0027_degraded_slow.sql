-- Degraded when slow (docs/detection.md "Slowness"): a check whose passing runs are slower than
-- its degraded_response_time_ms in the quorum's regions is degraded, never down. NULL turns it
-- off. Every change only adds, so the previous release keeps working against this schema.
ALTER TABLE checks ADD COLUMN IF NOT EXISTS degraded_response_time_ms integer
    CHECK (degraded_response_time_ms > 0);

-- The regions whose final attempt of a run passed but took longer than the threshold (a subset
-- of passed_regions), aggregated as results arrive like the other two lists.
ALTER TABLE check_runs ADD COLUMN IF NOT EXISTS slow_regions text[] NOT NULL DEFAULT '{}';

-- A streak of slow runs, beside check_degradations (failing regions): a row exists while the
-- streak lasts; since is the run time of its first run, degraded whether it lasted the check's
-- confirmation period (uptime.degraded with reason slow was raised). Written by the evaluator.
CREATE TABLE IF NOT EXISTS check_slowness (
    org_id       uuid        NOT NULL,
    check_id     uuid        NOT NULL PRIMARY KEY,
    since        timestamptz NOT NULL,
    degraded     boolean     NOT NULL DEFAULT false,
    slow_regions text[]      NOT NULL DEFAULT '{}',
    FOREIGN KEY (org_id, check_id) REFERENCES checks (org_id, id) ON DELETE CASCADE
);
