-- Vantage schema: the scheduler's progress per shard.

-- The checks are divided into 256 shards (the first byte of the SHA-256 of the check id:
-- shard.Of in Go, get_byte(sha256(uuid_send(id)), 0) in SQL), each scheduled by the replica
-- holding its lease. Each shard records how far its owner has handled its runs: every run of
-- the shard's checks due at or before handled_through was published (or skipped and
-- counted). An owner moves its shards' rows forward once a second, one statement for all of
-- them; a replica taking a shard over catches up from its row, and last_queued in the API is
-- derived from the check's shard's row. The rows start from the single leader's progress,
-- which they replace.
--
-- scheduler_progress stays, unused by this release, because migrations are additive for the
-- previous release: its replicas keep scheduling (and reading last_queued) from it during a
-- rolling upgrade or after a roll-back. Both schedule the same runs under the same job ids
-- meanwhile, and JetStream drops the copies. A later release drops it.
CREATE TABLE scheduler_shard_progress (
    shard           smallint PRIMARY KEY CHECK (shard BETWEEN 0 AND 255),
    handled_through timestamptz NOT NULL
);
INSERT INTO scheduler_shard_progress (shard, handled_through)
SELECT s, p.handled_through FROM scheduler_progress p, generate_series(0, 255) AS s;
