-- The scheduler's leadership lease: a session-level advisory lock on a dedicated session
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

-- name: HoldsAdvisoryLock :one
-- One round trip that also proves the session is alive and resets its idle timeout.
SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_locks
    WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
      AND classid = (@key::bigint >> 32)::oid AND objid = (@key::bigint & 4294967295)::oid AND objsubid = 1) AS held;

-- name: AdvisoryUnlock :exec
SELECT pg_advisory_unlock(@key::bigint);
