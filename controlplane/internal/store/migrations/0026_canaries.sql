-- Canaries (docs/detection.md "Canaries"): each agent's last round of canary probes, shared by
-- every replica. A region whose agents' canaries fail while another region's pass is unhealthy
-- at once; a verdict that rests on one region's failures waits for that region's next canary
-- round (check_runs.held_since).
CREATE TABLE IF NOT EXISTS agent_canaries (
    agent_id        text        PRIMARY KEY,
    regions         text[]      NOT NULL,
    checked_at      timestamptz NOT NULL, -- the agent's clock
    received_at     timestamptz NOT NULL, -- the control plane's clock
    targets         integer     NOT NULL,
    failing         integer     NOT NULL,
    failing_targets text[]      NOT NULL DEFAULT '{}',
    agent_healthy   boolean     NOT NULL,
    agent_reason    text        NOT NULL DEFAULT '',
    clock_offset_ms bigint      NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS agent_canaries_received_at ON agent_canaries (received_at);

-- What a region's unhealthy mark rests on: its canaries, or the results of tenants' checks.
ALTER TABLE region_health ADD COLUMN IF NOT EXISTS cause text NOT NULL DEFAULT 'checks'
    CHECK (cause IN ('checks', 'canary'));
ALTER TABLE region_unhealthy_periods ADD COLUMN IF NOT EXISTS cause text NOT NULL DEFAULT 'checks'
    CHECK (cause IN ('checks', 'canary'));

-- A run whose failing verdict rests on one region waits, from held_since, for that region's
-- next canary round (bounded by its deadline).
ALTER TABLE check_runs ADD COLUMN IF NOT EXISTS held_since timestamptz;
