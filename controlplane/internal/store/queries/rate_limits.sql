-- Rate limits shared by every replica (rate_limits, migration 0019; controlplane/internal/ratelimit).

-- name: TakeRateToken :one
-- The generic cell rate algorithm, as one atomic statement (the row lock of ON CONFLICT DO
-- UPDATE orders concurrent decisions on a key): an event at now is allowed when the key's
-- theoretical arrival time, moved past now and advanced by one emission interval (every), is
-- at most horizon (every * burst) ahead of now; only an allowed event moves it. A new key is
-- allowed (horizon >= every). It returns the decision and the arrival time it was taken on.
-- The keys are deployment-wide, not an organization's rows: a key names its organization
-- itself where the limit is one.
INSERT INTO rate_limits AS r (key, tat, allowed)
VALUES (sqlc.arg(key)::text, sqlc.arg(now)::timestamptz + sqlc.arg(every)::interval, true)
ON CONFLICT (key) DO UPDATE SET
    allowed = GREATEST(r.tat, sqlc.arg(now)::timestamptz) + sqlc.arg(every)::interval
        <= sqlc.arg(now)::timestamptz + sqlc.arg(horizon)::interval,
    tat = CASE
        WHEN GREATEST(r.tat, sqlc.arg(now)::timestamptz) + sqlc.arg(every)::interval
            <= sqlc.arg(now)::timestamptz + sqlc.arg(horizon)::interval
        THEN GREATEST(r.tat, sqlc.arg(now)::timestamptz) + sqlc.arg(every)::interval
        ELSE r.tat
    END
RETURNING allowed, tat;

-- name: SweepRateLimits :execrows
-- Rows of full buckets: deleting them changes no decision.
DELETE FROM rate_limits WHERE tat < @before;
