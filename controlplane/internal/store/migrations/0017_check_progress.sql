-- Vantage schema: a check's run progress apart from its row.

-- The scheduled time of a check's last judged run moves with every run; everything else the
-- evaluator keeps on the check's row (state, streaks, alerts, incident) changes only on a
-- transition. Writing the check's row — about 800 bytes with its configuration — once per run
-- was the largest write of ingest (make bench-load, docs/scaling.md): the progress gets a
-- narrow row of its own, written with every judged run, and the check's row is written only
-- when its state changes. The evaluator still serializes on the check's row lock.
CREATE TABLE check_progress (
    check_id    uuid PRIMARY KEY REFERENCES checks (id) ON DELETE CASCADE,
    -- scheduled time of the last judged run: results of runs at or before it are late
    last_run_at timestamptz NOT NULL
) WITH (fillfactor = 70);

INSERT INTO check_progress (check_id, last_run_at)
SELECT id, last_run_at FROM checks WHERE last_run_at IS NOT NULL;

ALTER TABLE checks DROP COLUMN last_run_at;
