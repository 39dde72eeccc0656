-- A browser run's screenshot of the page at its failure, stored with the result: it lives and
-- is dropped with the result's daily partition. PNG or JPEG, at most 512 KiB (the agent and
-- ingest enforce it); NULL for every other result. Result lists never select it, and PostgreSQL
-- keeps large values out of line (TOAST), so it costs lists nothing.
ALTER TABLE check_results ADD COLUMN IF NOT EXISTS screenshot bytea;
