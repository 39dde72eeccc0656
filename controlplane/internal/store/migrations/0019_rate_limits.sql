-- Vantage schema: rate limits shared by every replica (controlplane/internal/ratelimit).

-- One row per limited key (the limit's name and, for instance, an organization or a heartbeat
-- id): the key's theoretical arrival time, the generic cell rate algorithm's form of a token
-- bucket. A bucket is full once tat is in the past, so a row with tat <= now means the same as
-- no row, and the sweep deletes such rows without changing any decision. allowed is the last
-- decision taken on the row, so that one statement both decides and reports it.
--
-- UNLOGGED: the table is written on every rate-limited request, and its content is worth
-- nothing after a crash (PostgreSQL empties an unlogged table then, and a standby has none):
-- every bucket starts full again, which is what a key unseen for a while gets anyway.
CREATE UNLOGGED TABLE rate_limits (
    key     text PRIMARY KEY,
    tat     timestamptz NOT NULL,
    allowed boolean NOT NULL
) WITH (fillfactor = 70);
