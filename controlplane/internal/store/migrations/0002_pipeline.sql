-- Vantage schema, version 3: the result pipeline — ingest de-duplication, per-run aggregation,
-- the status machine's bookkeeping on checks, and the alert outbox (DESIGN.md steps 5–7).

-- The status machine's memory beside checks.state (see evaluator.State). Times of verdicts are
-- the runs' scheduled times; alert times are the control plane's clock.
ALTER TABLE checks
    -- run time of the first failing verdict of the current failing streak; NULL while passing
    ADD COLUMN failing_since       timestamptz,
    -- run time of the first passing verdict of the current passing streak; NULL while failing
    ADD COLUMN passing_since       timestamptz,
    -- when the last uptime.down (first alert or reminder) of the open incident was written
    ADD COLUMN last_alert_at       timestamptz,
    -- whether uptime.down went out for the open incident (false when it opened while muted)
    ADD COLUMN down_alerted        boolean NOT NULL DEFAULT false,
    -- the open check incident, NULL when none (the check_incidents_one_open index is the truth)
    ADD COLUMN current_incident_id uuid,
    -- scheduled time of the last run that got a verdict; results of runs at or before it are
    -- stored but no longer judged
    ADD COLUMN last_run_at         timestamptz;

-- Idempotence of ingest on (job_id, region, attempt_number): a redelivered job's results
-- collide here and are not stored or judged twice. scheduled_at is the run's due time, the same
-- on every delivery of a job, and is part of the key only so that the table can be partitioned
-- by it: hourly partitions are created ahead and dropped once older than any possible
-- redelivery (JetStream drops jobs after wire.JobMaxAge), so pruning is a DROP, not a DELETE.
-- is_final is part of the key because a redelivered job starts again at attempt 1: an agent that
-- stored a failing, non-final attempt 1 and died must not make a later agent's final attempt 1
-- a duplicate (the region would then have no final attempt for the run).
CREATE TABLE ingest_dedupe (
    job_id         uuid        NOT NULL,
    region         text        NOT NULL,
    attempt_number integer     NOT NULL,
    is_final       boolean     NOT NULL,
    scheduled_at   timestamptz NOT NULL,
    PRIMARY KEY (job_id, region, attempt_number, is_final, scheduled_at)
) PARTITION BY RANGE (scheduled_at);
CREATE TABLE ingest_dedupe_default PARTITION OF ingest_dedupe DEFAULT;

-- Runs waiting for a verdict: one row per (check, job) that has at least one final attempt and
-- has not been judged yet. A run is judged once every expected region has reported, or once its
-- deadline has passed, or when a later run of the same check is judged; its row is then
-- deleted (the check's last_run_at keeps late results from judging it again).
CREATE TABLE check_runs (
    org_id           uuid        NOT NULL,
    check_id         uuid        NOT NULL,
    job_id           uuid        NOT NULL,
    scheduled_at     timestamptz NOT NULL,
    deadline         timestamptz NOT NULL,
    expected_regions text[]      NOT NULL, -- the check's test_regions when the first result came
    passed_regions   text[]      NOT NULL DEFAULT '{}',
    failed_regions   text[]      NOT NULL DEFAULT '{}',
    first_result_at  timestamptz NOT NULL,
    PRIMARY KEY (check_id, job_id),
    FOREIGN KEY (org_id, check_id) REFERENCES checks (org_id, id) ON DELETE CASCADE
);
CREATE INDEX check_runs_deadline ON check_runs (deadline);

-- Alerts waiting for delivery. The evaluator writes rows in the transaction that changes a
-- check's state; the notifier drains them on any replica with
--   SELECT ... FROM outbox WHERE delivered_at IS NULL AND next_attempt_at <= now()
--   ORDER BY next_attempt_at LIMIT n FOR UPDATE SKIP LOCKED
-- and records each attempt (attempts, next_attempt_at, last_error, delivered_at).
CREATE TABLE outbox (
    id              uuid PRIMARY KEY,
    org_id          uuid        NOT NULL REFERENCES organizations ON DELETE CASCADE,
    event_type      text        NOT NULL, -- 'uptime.down' (reminders too, payload.reminder) or 'uptime.up'
    check_id        uuid,                 -- the resource the event is about; no FK: an alert outlives its check
    incident_id     uuid,
    alert_priority  text        NOT NULL CHECK (alert_priority IN ('LOW', 'HIGH')),
    payload         jsonb       NOT NULL, -- {event, reminder, occurred_at, check{...}, incident{...}}
    created_at      timestamptz NOT NULL,
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    last_error      text,
    delivered_at    timestamptz
);
CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE delivered_at IS NULL;
CREATE INDEX outbox_org ON outbox (org_id, created_at DESC);
