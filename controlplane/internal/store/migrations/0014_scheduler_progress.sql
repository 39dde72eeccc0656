-- Vantage schema: the scheduler's progress instead of a write per run.

-- How far the leading scheduler has handled its runs: every run due at or before
-- handled_through was published (or skipped and counted). The leader moves it forward once a
-- second, one row for every check, where it used to write checks.last_queued of each check it
-- queued (a row write per run, waiting on the evaluator's locks of the same rows). A leader
-- taking over catches up from it (one run per check, the newest missed one), and
-- last_queued in the API is derived from it and each check's schedule (rungrid.LastDue).
-- checks.last_queued is no longer written; rows written before keep their value, used only
-- while no progress has been recorded.
CREATE TABLE scheduler_progress (
    singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    handled_through timestamptz NOT NULL
);

-- Runs that did not run, one row per check, run and region, with why: EXPIRED (the agent got
-- the job past its deadline: late in the queue, or redelivered after its agent died),
-- SHUTDOWN (the agent stopped with the job in hand and no delivery left), NOT_QUEUED (the
-- scheduler could not queue the run before its deadline). Agents report the first two as
-- not-run results (CheckResult.not_run_reason), which ingest stores here instead of in
-- check_results; they are never judged. A run is thus either in check_results or here, or
-- still on its way. Rows are kept two days (the API shows the last 24 hours, skipped_runs_24h)
-- and deleted by the partition maintainer.
CREATE TABLE skipped_runs (
    org_id       uuid        NOT NULL,
    check_id     uuid        NOT NULL,
    region       text        NOT NULL,
    scheduled_at timestamptz NOT NULL,
    reason       text        NOT NULL,
    recorded_at  timestamptz NOT NULL,
    PRIMARY KEY (check_id, scheduled_at, region),
    FOREIGN KEY (org_id, check_id) REFERENCES checks (org_id, id) ON DELETE CASCADE
);
CREATE INDEX skipped_runs_scheduled_at ON skipped_runs (scheduled_at);

-- How many checks each organization has, kept by triggers, for the total of GET /v1/checks:
-- counting the organization's index entries took longer than reading the page itself at
-- 10,000 checks (6 ms against 4 ms on a busy machine) and grows with the organization. The
-- count is spread over 16 rows per organization (by a hash of the check id; the total is their
-- sum) and the triggers are deferred to commit, so that concurrent creations in one
-- organization rarely meet on a row, and then only for the moment of their commit.
CREATE TABLE org_check_counts (
    org_id uuid     NOT NULL REFERENCES organizations ON DELETE CASCADE,
    shard  smallint NOT NULL,
    checks bigint   NOT NULL,
    PRIMARY KEY (org_id, shard)
);
INSERT INTO org_check_counts (org_id, shard, checks)
SELECT org_id, abs(hashtext(id::text)) % 16, count(*) FROM checks GROUP BY 1, 2;

CREATE FUNCTION count_org_checks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO org_check_counts AS c (org_id, shard, checks) VALUES (NEW.org_id, abs(hashtext(NEW.id::text)) % 16, 1)
        ON CONFLICT (org_id, shard) DO UPDATE SET checks = c.checks + 1;
    ELSE
        UPDATE org_check_counts SET checks = checks - 1
        WHERE org_id = OLD.org_id AND shard = abs(hashtext(OLD.id::text)) % 16;
    END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER checks_count_insert AFTER INSERT ON checks
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION count_org_checks();
CREATE CONSTRAINT TRIGGER checks_count_delete AFTER DELETE ON checks
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION count_org_checks();
