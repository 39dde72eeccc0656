-- Vantage schema: per-agent credentials, and the live agents of every replica.

-- Agent tokens: the credentials agents present on the gRPC stream, each bound to the regions
-- its agents may serve (`vantage-controlplane admin create-agent-token`). Only the SHA-256 of
-- the secret is kept. A revoked token stays listed, with the time it was revoked; revoking
-- notifies every replica (vantage_auth, payload "agent_token:<id>"), which ends its streams.
CREATE TABLE agent_tokens (
    id          uuid PRIMARY KEY,
    name        text        NOT NULL,
    regions     text[]      NOT NULL CHECK (cardinality(regions) >= 1),
    secret_hash bytea       NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);

-- The agent streams open on each replica, published by that replica every few seconds
-- (seen_at) so that any replica can list every live agent (GET /v1/agents). A row whose
-- seen_at is older than the expiry belongs to a replica that died: it is ignored, and
-- deleted by the next replica that publishes.
CREATE TABLE agent_sessions (
    session_id         uuid PRIMARY KEY,
    replica_id         uuid             NOT NULL, -- the publishing process
    replica            text             NOT NULL, -- its name (host name), for operators
    agent_id           text             NOT NULL,
    token_id           uuid,                      -- NULL: the shared development token
    regions            text[]           NOT NULL,
    version            text             NOT NULL,
    hostname           text             NOT NULL,
    capabilities       text[]           NOT NULL,
    connected_at       timestamptz      NOT NULL,
    probes_running     integer          NOT NULL,
    results_per_second double precision NOT NULL,
    seen_at            timestamptz      NOT NULL
);
CREATE INDEX agent_sessions_replica ON agent_sessions (replica_id);

-- Regions that active checks use and no live agent serves, since when, and when their
-- agent.region_unserved events were queued (NULL: still within the grace period). The row is
-- deleted when an agent serves the region again (and agent.region_served queued when the
-- unserved events had gone out).
CREATE TABLE unserved_regions (
    region     text PRIMARY KEY,
    since      timestamptz NOT NULL,
    alerted_at timestamptz
);
