-- The artifacts of a scripted browser run (screenshots taken with a path, testInfo.attach()),
-- stored with the result like its screenshot: they live and go with the result's partition,
-- so retention deletes them with it. artifact_index lists them in order, each with its
-- name, content type, size and offset; artifacts holds their bodies end to end, so that
-- listing reads the small index and serving one reads only its slice.
ALTER TABLE check_results ADD COLUMN IF NOT EXISTS artifact_index jsonb;
ALTER TABLE check_results ADD COLUMN IF NOT EXISTS artifacts bytea;
