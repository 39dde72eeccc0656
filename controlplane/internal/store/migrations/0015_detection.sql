-- Detection (docs/detection.md): a check's region_quorum, how many reporting regions must fail
-- for a run to fail: 'majority' (the rule before it existed), 'any', 'all' or a decimal count.
ALTER TABLE checks ADD COLUMN IF NOT EXISTS region_quorum text NOT NULL DEFAULT 'majority';

-- The regional view: each check's last final result per region (the agent's own failures are
-- left out, as the evaluator leaves them out of verdicts). Written in the ingest transaction.
CREATE TABLE IF NOT EXISTS check_regions (
    org_id           uuid        NOT NULL,
    check_id         uuid        NOT NULL,
    region           text        NOT NULL,
    passing          boolean     NOT NULL,
    checked_at       timestamptz NOT NULL,
    result_id        uuid        NOT NULL,
    response_time_ms integer,
    result_summary   text,
    PRIMARY KEY (check_id, region),
    FOREIGN KEY (org_id, check_id) REFERENCES checks (org_id, id) ON DELETE CASCADE
);

-- Regional degradation: a check UP while a minority of its regions fail. A row exists while
-- such a streak lasts: since is the run time of its first run, degraded whether it lasted the
-- check's confirmation period (uptime.degraded was raised). Written by the evaluator.
CREATE TABLE IF NOT EXISTS check_degradations (
    org_id          uuid        NOT NULL,
    check_id        uuid        NOT NULL PRIMARY KEY,
    since           timestamptz NOT NULL,
    degraded        boolean     NOT NULL DEFAULT false,
    failing_regions text[]      NOT NULL DEFAULT '{}',
    FOREIGN KEY (org_id, check_id) REFERENCES checks (org_id, id) ON DELETE CASCADE
);

-- SLA reports of an organization read its incidents by time.
CREATE INDEX IF NOT EXISTS check_incidents_org_time ON check_incidents (org_id, started_at) INCLUDE (check_id, ended_at);

-- Monthly run counters, kept from check_daily_stats by triggers (statement level, from the
-- transition tables), so that an organization's SLA report over 13 months reads 13 rows per
-- check instead of ~400 (docs/detection.md "SLA reports").
CREATE TABLE IF NOT EXISTS check_monthly_stats (
    org_id      uuid   NOT NULL,
    check_id    uuid   NOT NULL,
    month       date   NOT NULL, -- first day of the UTC month
    runs        bigint NOT NULL DEFAULT 0,
    failed_runs bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (check_id, month),
    FOREIGN KEY (org_id, check_id) REFERENCES checks (org_id, id) ON DELETE CASCADE
);
-- Covering: an organization's report reads the index alone.
CREATE INDEX IF NOT EXISTS check_monthly_stats_org ON check_monthly_stats (org_id, month) INCLUDE (check_id, runs, failed_runs);
CREATE INDEX IF NOT EXISTS check_daily_stats_org_day ON check_daily_stats (org_id, day);

CREATE OR REPLACE FUNCTION check_monthly_stats_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO check_monthly_stats AS m (org_id, check_id, month, runs, failed_runs)
        SELECT org_id, check_id, date_trunc('month', day)::date, sum(runs), sum(failed_runs)
        FROM new_rows GROUP BY 1, 2, 3
        ON CONFLICT (check_id, month) DO UPDATE SET runs = m.runs + excluded.runs,
            failed_runs = m.failed_runs + excluded.failed_runs;
    ELSE
        INSERT INTO check_monthly_stats AS m (org_id, check_id, month, runs, failed_runs)
        SELECT org_id, check_id, date_trunc('month', day)::date, sum(runs), sum(failed_runs)
        FROM (SELECT org_id, check_id, day, runs, failed_runs FROM new_rows
              UNION ALL
              SELECT org_id, check_id, day, -runs, -failed_runs FROM old_rows) d
        GROUP BY 1, 2, 3
        ON CONFLICT (check_id, month) DO UPDATE SET runs = m.runs + excluded.runs,
            failed_runs = m.failed_runs + excluded.failed_runs;
    END IF;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS check_daily_stats_monthly_insert ON check_daily_stats;
CREATE TRIGGER check_daily_stats_monthly_insert AFTER INSERT ON check_daily_stats
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION check_monthly_stats_apply();
DROP TRIGGER IF EXISTS check_daily_stats_monthly_update ON check_daily_stats;
CREATE TRIGGER check_daily_stats_monthly_update AFTER UPDATE ON check_daily_stats
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION check_monthly_stats_apply();

INSERT INTO check_monthly_stats (org_id, check_id, month, runs, failed_runs)
SELECT org_id, check_id, date_trunc('month', day)::date, sum(runs), sum(failed_runs)
FROM check_daily_stats GROUP BY 1, 2, 3
ON CONFLICT (check_id, month) DO NOTHING;

-- Dependencies (docs/detection.md): the checks and heartbeats a check depends on. While one of
-- them is DOWN, the check's incidents are marked caused by it (check_incidents.caused_by) and
-- its alerts are held back.
ALTER TABLE checks ADD COLUMN IF NOT EXISTS depends_on uuid[] NOT NULL DEFAULT '{}';
ALTER TABLE check_incidents ADD COLUMN IF NOT EXISTS caused_by uuid;

-- Probe health (docs/detection.md): a region whose probes fail checks that other regions pass,
-- for many checks at once, is unhealthy; its results are stored but left out of verdicts. A
-- row per region ever judged; unhealthy_since NULL while healthy. The periods are the flag of
-- the results stored meanwhile.
CREATE TABLE IF NOT EXISTS region_health (
    region          text PRIMARY KEY,
    unhealthy_since timestamptz,
    reason          text        NOT NULL DEFAULT '',
    changed_at      timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS region_unhealthy_periods (
    region     text        NOT NULL,
    started_at timestamptz NOT NULL,
    ended_at   timestamptz,
    reason     text        NOT NULL,
    PRIMARY KEY (region, started_at)
);
