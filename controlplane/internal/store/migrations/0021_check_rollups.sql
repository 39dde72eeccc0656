-- Vantage schema: hourly rollups of a check's results per region, the source of the
-- response-time series (GET /v1/checks/{check_id}/timeseries over 7 and 30 days) and of the
-- overview's sparklines and 24-hour uptime (GET /v1/checks/overview); docs/api-extensions.md.

-- One row per check, region and UTC hour, written by ingest in the transaction that stores the
-- results (one statement per batch) and deleted after store.RollupRetention by the partition
-- maintainer. It counts final attempts; the agent's own failures (a crashed browser) are left
-- out, as they are of verdicts and of the regional view.
CREATE TABLE check_rollups (
    org_id        uuid NOT NULL,
    check_id      uuid NOT NULL REFERENCES checks (id) ON DELETE CASCADE ON UPDATE CASCADE,
    region        text NOT NULL,
    bucket_start  timestamptz NOT NULL, -- the hour, UTC
    runs          integer NOT NULL,
    failed        integer NOT NULL,
    -- Response times of the passing results, counted in fixed log-scale buckets
    -- (store.LatencyBuckets): a percentile read from it is within 9.06 % of the true one.
    latency_hist  integer[] NOT NULL,
    -- Timing phases of the passing results that recorded them: sums and counts, for means.
    dns_ms_sum        double precision NOT NULL DEFAULT 0,
    dns_n             integer NOT NULL DEFAULT 0,
    connect_ms_sum    double precision NOT NULL DEFAULT 0,
    connect_n         integer NOT NULL DEFAULT 0,
    tls_ms_sum        double precision NOT NULL DEFAULT 0,
    tls_n             integer NOT NULL DEFAULT 0,
    first_byte_ms_sum double precision NOT NULL DEFAULT 0,
    first_byte_n      integer NOT NULL DEFAULT 0,
    PRIMARY KEY (check_id, bucket_start, region),
    CHECK (runs >= 0 AND failed >= 0 AND failed <= runs)
) WITH (fillfactor = 70); -- rows are updated in place (HOT) for the rest of their hour

-- Retention deletes by age across every check.
CREATE INDEX check_rollups_bucket ON check_rollups (bucket_start);
