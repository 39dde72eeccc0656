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
CREATE INDEX IF NOT EXISTS check_incidents_org_time ON check_incidents (org_id, started_at);
