-- Vantage schema: cheaper writes on the ingest path (make bench-load, docs/scaling.md).

-- The rows ingest updates once per judged run (a check's latest result per region, its daily
-- and monthly counters; its progress, 0017) get room on their pages, so that the update can be
-- a HOT update: the new row version stays on its page and no index gets a new entry. At the
-- default fillfactor (100) a freshly written table has no room, and the first update of every
-- row writes an entry in each of the table's indexes. Applies to pages written from now on.
-- The checks' own rows are written only on a state change (0017) and read by every batch:
-- they keep the default, dense pages.
ALTER TABLE check_regions SET (fillfactor = 70);
ALTER TABLE check_daily_stats SET (fillfactor = 70);
ALTER TABLE check_monthly_stats SET (fillfactor = 70);

-- The monthly counters change with every verdict; an index that carries them is written on
-- every update (never HOT). The SLA report finds an organization's rows through the index and
-- reads the counters from the table.
DROP INDEX IF EXISTS check_monthly_stats_org;
CREATE INDEX check_monthly_stats_org ON check_monthly_stats (org_id, month) INCLUDE (check_id);

-- Skipped runs are written by ingest in the transaction that holds the check's row lock, for
-- checks it has just read: the foreign key's per-row check (a lookup and a lock of the check's
-- row) bought nothing there. Rows of a deleted check are pruned with the rest after their two
-- days (PruneSkippedRuns), as check_results' rows are dropped with their partition; no read
-- reaches them without the check.
ALTER TABLE skipped_runs DROP CONSTRAINT IF EXISTS skipped_runs_org_id_check_id_fkey;
