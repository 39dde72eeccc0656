-- Vantage schema, version 5: webhooks and the notifier's delivery log (DESIGN.md step 7).
--
-- The notifier drains the outbox in two stages:
--   1. fan-out: an undispatched outbox row (delivered_at IS NULL) is locked FOR UPDATE SKIP
--      LOCKED, its rendered body is stored in outbox.body, one deliveries row is inserted per
--      matching webhook and per e-mail recipient, and outbox.delivered_at is set — one
--      transaction, so an event is fanned out exactly once;
--   2. delivery: due deliveries are claimed FOR UPDATE SKIP LOCKED with a lease (next_attempt_at
--      pushed past the attempt's deadline), sent, and the attempt recorded in delivery_attempts.

CREATE TABLE webhooks (
    id          uuid PRIMARY KEY,
    org_id      uuid        NOT NULL REFERENCES organizations ON DELETE CASCADE,
    url         text        NOT NULL, -- may hold {{NAME}} references, resolved at delivery time
    description text,
    events      text[]      NOT NULL CHECK (cardinality(events) >= 1),
    secret_enc  bytea       NOT NULL, -- sealed "whsec_<base64>"
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    UNIQUE (org_id, id)
);
CREATE INDEX webhooks_org ON webhooks (org_id, created_at DESC, id DESC);

CREATE TABLE webhook_checks (
    org_id     uuid NOT NULL,
    webhook_id uuid NOT NULL,
    check_id   uuid NOT NULL,
    PRIMARY KEY (webhook_id, check_id),
    FOREIGN KEY (org_id, webhook_id) REFERENCES webhooks (org_id, id) ON DELETE CASCADE,
    FOREIGN KEY (org_id, check_id) REFERENCES checks (org_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_checks_check ON webhook_checks (check_id);

-- Status pages and heartbeats are other migrations' tables: no foreign keys, the API validates
-- the ids when they are written and renders only the ones that still exist.
CREATE TABLE webhook_status_pages (
    org_id         uuid NOT NULL,
    webhook_id     uuid NOT NULL,
    status_page_id uuid NOT NULL,
    PRIMARY KEY (webhook_id, status_page_id),
    FOREIGN KEY (org_id, webhook_id) REFERENCES webhooks (org_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_status_pages_page ON webhook_status_pages (status_page_id);

CREATE TABLE webhook_heartbeats (
    org_id       uuid NOT NULL,
    webhook_id   uuid NOT NULL,
    heartbeat_id uuid NOT NULL,
    PRIMARY KEY (webhook_id, heartbeat_id),
    FOREIGN KEY (org_id, webhook_id) REFERENCES webhooks (org_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_heartbeats_heartbeat ON webhook_heartbeats (heartbeat_id);

-- The body every channel sends for the event, rendered once at fan-out so that every attempt
-- of every delivery sends the same document.
ALTER TABLE outbox ADD COLUMN body jsonb;

-- One row per (outbox event, channel, target): a webhook (target = webhook id) or an e-mail
-- recipient (target = user id, address = the user's e-mail at fan-out).
CREATE TABLE deliveries (
    id               uuid PRIMARY KEY,
    org_id           uuid        NOT NULL REFERENCES organizations ON DELETE CASCADE,
    event_id         uuid        NOT NULL, -- outbox.id; the event id receivers de-duplicate on
    event_type       text        NOT NULL,
    channel          text        NOT NULL CHECK (channel IN ('webhook', 'email')),
    target           uuid        NOT NULL,
    webhook_id       uuid,                 -- = target for webhooks; cascades their log away
    address          text,                 -- e-mail recipient
    status           text        NOT NULL CHECK (status IN ('PENDING', 'DELIVERED', 'FAILED', 'SKIPPED')),
    attempts         integer     NOT NULL DEFAULT 0, -- attempts made (numbering of delivery_attempts)
    tries            integer     NOT NULL DEFAULT 0, -- attempts since the last (re)send: the backoff step
    next_attempt_at  timestamptz NOT NULL,
    last_status_code integer,
    last_error       text,
    created_at       timestamptz NOT NULL,
    delivered_at     timestamptz,
    UNIQUE (event_id, channel, target),
    FOREIGN KEY (org_id, webhook_id) REFERENCES webhooks (org_id, id) ON DELETE CASCADE
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'PENDING';
CREATE INDEX deliveries_webhook ON deliveries (webhook_id, created_at DESC, id DESC) WHERE webhook_id IS NOT NULL;

CREATE TABLE delivery_attempts (
    delivery_id  uuid             NOT NULL REFERENCES deliveries ON DELETE CASCADE,
    number       integer          NOT NULL,
    attempted_at timestamptz      NOT NULL,
    latency_ms   double precision NOT NULL,
    status_code  integer,          -- HTTP status; NULL when no response came (or for e-mail)
    error        text,             -- NULL on success
    PRIMARY KEY (delivery_id, number)
);

-- Wake the notifiers as soon as an event is queued (they poll as well, as a safety net).
CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('vantage_outbox', '');
    RETURN NULL;
END $$;
CREATE TRIGGER outbox_notify AFTER INSERT ON outbox FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();
