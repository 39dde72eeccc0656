-- The scheduler's shard leases: session-level advisory locks on a dedicated session
-- (scheduler_lease.go).

-- name: ConfigureLeaseSession :exec
-- The server ends a session that has sent nothing for idle_session_timeout, and notices a
-- vanished peer through TCP keepalives in about the same time.
SELECT set_config('idle_session_timeout', @idle_timeout_ms::text, false),
    set_config('tcp_keepalives_idle', @keepalive_idle_seconds::text, false),
    set_config('tcp_keepalives_interval', '1', false),
    set_config('tcp_keepalives_count', @keepalive_count::text, false);

-- name: TryAdvisoryLock :one
SELECT pg_try_advisory_lock(@key::bigint) AS locked;

-- name: ClassLocks :many
-- The granted advisory locks of one class (the keys' upper 32 bits) in this database: their
-- lower 32 bits, and whether this session holds them. One round trip that also proves the
-- session is alive and resets its idle timeout.
SELECT objid::bigint AS low, (pid = pg_backend_pid())::boolean AS mine FROM pg_catalog.pg_locks
WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND classid = (@class::bigint)::oid
  AND database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database());

-- name: CountSessions :one
-- The sessions of this database named application_name: the live lease sessions.
SELECT count(*) FROM pg_catalog.pg_stat_activity
WHERE datname = current_database() AND application_name = @application_name::text;

-- name: AdvisoryUnlock :exec
SELECT pg_advisory_unlock(@key::bigint);
