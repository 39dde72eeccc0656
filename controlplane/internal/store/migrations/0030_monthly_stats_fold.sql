-- Monthly run counters are written once per closed month instead of on every verdict
-- (docs/detection.md "SLA reports"). The triggers added to every batch of verdicts an upsert of
-- each check's monthly row beside its daily one; now ingest writes the daily counters only, and
-- the partition maintainer folds a month's daily counters into check_monthly_stats once the
-- month has closed, marking it in check_stats_folded. Reports read a folded month's monthly
-- rows and any other month's daily rows, so every figure stays what the daily counters sum to.
DROP TRIGGER IF EXISTS check_daily_stats_monthly_insert ON check_daily_stats;
DROP TRIGGER IF EXISTS check_daily_stats_monthly_update ON check_daily_stats;
DROP FUNCTION IF EXISTS check_monthly_stats_apply();

-- The months (first day, UTC) whose monthly counters are complete. A verdict that arrives late
-- for a folded month adds to its monthly row as well (CountVerdicts).
CREATE TABLE IF NOT EXISTS check_stats_folded (
    month     date        PRIMARY KEY,
    folded_at timestamptz NOT NULL DEFAULT now()
);

-- The triggers kept every month exact until now: the closed ones are folded already. The
-- current month's rows stop being kept and are rewritten when the month is folded.
INSERT INTO check_stats_folded (month)
SELECT DISTINCT month FROM check_monthly_stats WHERE month < date_trunc('month', now() AT TIME ZONE 'UTC')::date
ON CONFLICT DO NOTHING;
