-- Vantage schema, version 8: daily run counters per check, the source of the public status
-- page's 90-day uptime bars. The evaluator adds each run's verdict to the day (UTC) of the
-- run's scheduled time in the transaction that judges it, so the page reads 90 rows per check
-- instead of scanning raw results (which retention drops long before 90 days anyway).

CREATE TABLE check_daily_stats (
    org_id      uuid    NOT NULL,
    check_id    uuid    NOT NULL,
    day         date    NOT NULL,           -- UTC day of the runs' scheduled time
    runs        integer NOT NULL DEFAULT 0, -- runs that got a verdict
    failed_runs integer NOT NULL DEFAULT 0, -- of which failing
    PRIMARY KEY (check_id, day),
    FOREIGN KEY (org_id, check_id) REFERENCES checks (org_id, id) ON DELETE CASCADE,
    CHECK (runs >= 0 AND failed_runs >= 0 AND failed_runs <= runs)
);
