-- Vantage schema: a check's run progress, and the evaluator's lock, apart from its row.

-- The scheduled time of a check's last judged run moves with every run; everything else the
-- evaluator keeps on the check's row (state, streaks, alerts, incident) changes only on a
-- transition. Writing the check's row — about 800 bytes with its configuration — once per run
-- was the largest write of ingest, and locking it the next largest (make bench-load,
-- docs/scaling.md): each check has a narrow row here instead, which the evaluator locks to
-- judge the check's runs (ingest and the sweep; nothing else locks it) and writes with every
-- judged run. The check's row is written only when its state changes; only the evaluator
-- writes those columns, so the API's writes to the same row never race with it.
CREATE TABLE check_progress (
    check_id    uuid PRIMARY KEY REFERENCES checks (id) ON DELETE CASCADE ON UPDATE CASCADE,
    -- scheduled time of the last judged run (NULL: none yet): results of runs at or before it
    -- are late
    last_run_at timestamptz
) WITH (fillfactor = 70);

INSERT INTO check_progress (check_id, last_run_at) SELECT id, last_run_at FROM checks;

ALTER TABLE checks DROP COLUMN last_run_at;

-- Every check has its row from its creation, however it is inserted.
CREATE FUNCTION check_progress_create() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO check_progress (check_id) SELECT id FROM new_checks;
    RETURN NULL;
END $$;
CREATE TRIGGER check_progress_create AFTER INSERT ON checks
    REFERENCING NEW TABLE AS new_checks FOR EACH STATEMENT EXECUTE FUNCTION check_progress_create();
