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
