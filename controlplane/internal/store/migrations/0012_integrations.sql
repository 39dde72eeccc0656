-- Vantage schema: integrations (Slack, Discord, Microsoft Teams, Telegram, Pushover, incident.io
-- and on-call), their deliveries, and alert deliveries kept in order per resource and target.

-- An integration is a destination of alerts, named by the *_alerts lists of checks and
-- heartbeats (of its type) and attached to status pages. Its settings are one JSON document,
-- sealed as a whole: every setting of every type either is a secret (webhook URLs embed
-- tokens, bot tokens, routing keys) or sits beside one.
CREATE TABLE integrations (
    id           uuid PRIMARY KEY,
    org_id       uuid        NOT NULL REFERENCES organizations ON DELETE CASCADE,
    name         text        NOT NULL,
    type         text        NOT NULL CHECK (type IN ('SLACK', 'DISCORD', 'MICROSOFT_TEAMS', 'TELEGRAM', 'PUSHOVER',
                                                      'INCIDENT_IO', 'ONCALL')),
    settings_enc bytea       NOT NULL,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    UNIQUE (org_id, id)
);
CREATE INDEX integrations_org ON integrations (org_id, created_at DESC, id DESC);

-- Status pages whose incident events an integration receives (like webhook_status_pages; no
-- foreign key to the status page, the API validates the ids).
CREATE TABLE integration_status_pages (
    org_id         uuid NOT NULL,
    integration_id uuid NOT NULL,
    status_page_id uuid NOT NULL,
    PRIMARY KEY (integration_id, status_page_id),
    FOREIGN KEY (org_id, integration_id) REFERENCES integrations (org_id, id) ON DELETE CASCADE
);
CREATE INDEX integration_status_pages_page ON integration_status_pages (status_page_id);

-- Deliveries to integrations: channel 'integration', target = integration_id.
ALTER TABLE deliveries DROP CONSTRAINT deliveries_channel_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_channel_check CHECK (channel IN ('webhook', 'email', 'integration'));
ALTER TABLE deliveries ADD COLUMN integration_id uuid;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_integration_fk
    FOREIGN KEY (org_id, integration_id) REFERENCES integrations (org_id, id) ON DELETE CASCADE;
CREATE INDEX deliveries_integration ON deliveries (integration_id, created_at DESC, id DESC) WHERE integration_id IS NOT NULL;

-- Order per resource and target: the alerts of one check or heartbeat reach one target in the
-- order they were raised (uptime.up never before the uptime.down it ends, retries included). A
-- delivery is due only when no earlier delivery of the same resource, channel and target is
-- still PENDING; "earlier" is the event's (created_at, id). Rows from before this migration
-- have no resource and are not ordered.
ALTER TABLE deliveries ADD COLUMN resource_id uuid;
ALTER TABLE deliveries ADD COLUMN event_at timestamptz;
CREATE INDEX deliveries_order ON deliveries (resource_id, channel, target, event_at, event_id)
    WHERE status = 'PENDING' AND resource_id IS NOT NULL;
-- Nor is it due while an earlier event of its check or heartbeat is not fanned out yet (a
-- fan-out that failed and waits for its retry, or one another replica is doing).
CREATE INDEX outbox_order ON outbox (check_id, created_at, id) WHERE delivered_at IS NULL AND check_id IS NOT NULL;
