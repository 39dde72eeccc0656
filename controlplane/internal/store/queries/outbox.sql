-- name: InsertOutbox :batchexec
INSERT INTO outbox (id, org_id, event_type, event_version, check_id, incident_id, status_page_id, alert_priority,
    payload, created_at, next_attempt_at)
VALUES (@id, @org_id, @event_type, @event_version, sqlc.narg(check_id)::uuid, sqlc.narg(incident_id)::uuid,
    sqlc.narg(status_page_id)::uuid, @alert_priority, @payload, @created_at, @created_at);

-- name: ClaimOutbox :many
-- Due events not fanned out yet, locked, oldest first. A worker waits for the rows another
-- holds rather than skipping them: skipping would let a later event of a resource be fanned
-- out, and its deliveries sent, before an earlier one's deliveries exist (deliveries of a
-- resource go out in event order only among those that exist). Fan-out is a short
-- transaction of inserts, so serializing it costs little.
SELECT o.id, o.org_id, o.event_type, o.event_version, o.check_id, o.incident_id, o.status_page_id, o.alert_priority,
    o.payload, o.created_at, o.attempts
FROM outbox o WHERE o.delivered_at IS NULL AND o.next_attempt_at <= @now
ORDER BY o.next_attempt_at, o.id LIMIT @batch_limit::bigint FOR UPDATE;

-- name: PostponeOutbox :exec
UPDATE outbox SET attempts = attempts + 1, last_error = @last_error, next_attempt_at = @next_attempt_at WHERE id = @id;

-- name: MarkOutboxDispatched :exec
UPDATE outbox SET body = @body, delivered_at = @now, attempts = attempts + 1, last_error = NULL WHERE id = @id;

-- name: FanOutWebhooks :execrows
-- One delivery per webhook of the organization subscribed to the event type and either listed
-- by the resource itself (webhook_ids) or associated with the resource the event is about; an
-- event about the whole organization (resource kind 'organization') goes to every such webhook.
INSERT INTO deliveries (id, org_id, event_id, event_type, channel, target, webhook_id, status, next_attempt_at, created_at)
SELECT gen_random_uuid(), w.org_id, sqlc.arg(event_id)::uuid, sqlc.arg(event_type)::text, 'webhook', w.id, w.id, 'PENDING',
    sqlc.arg(now)::timestamptz, sqlc.arg(now)::timestamptz
FROM webhooks w
WHERE w.org_id = sqlc.arg(org_id)::uuid AND sqlc.arg(event_type)::text = ANY (w.events) AND (
    w.id = ANY (sqlc.arg(webhook_ids)::uuid[])
    OR sqlc.arg(resource_kind)::text = 'organization'
    OR (sqlc.arg(resource_kind)::text = 'check' AND EXISTS (SELECT 1 FROM webhook_checks l
        WHERE l.webhook_id = w.id AND l.check_id = sqlc.arg(resource_id)::uuid))
    OR (sqlc.arg(resource_kind)::text = 'heartbeat' AND EXISTS (SELECT 1 FROM webhook_heartbeats l
        WHERE l.webhook_id = w.id AND l.heartbeat_id = sqlc.arg(resource_id)::uuid))
    OR (sqlc.arg(resource_kind)::text = 'status_page' AND EXISTS (SELECT 1 FROM webhook_status_pages l
        WHERE l.webhook_id = w.id AND l.status_page_id = sqlc.arg(resource_id)::uuid)))
ON CONFLICT (event_id, channel, target) DO NOTHING;

-- name: OrderDeliveries :exec
-- Stamps the deliveries of one event with what orders them (ClaimDeliveries).
UPDATE deliveries SET resource_id = sqlc.narg(resource_id)::uuid, event_at = @event_at
WHERE event_id = @event_id;

-- name: FanOutIntegrations :execrows
-- One delivery per integration of the organization listed by the resource itself (its
-- *_alerts, each list holding integrations of its own type) or, for a status page event,
-- attached to the page.
INSERT INTO deliveries (id, org_id, event_id, event_type, channel, target, integration_id, status, next_attempt_at, created_at)
SELECT gen_random_uuid(), i.org_id, sqlc.arg(event_id)::uuid, sqlc.arg(event_type)::text, 'integration', i.id, i.id, 'PENDING',
    sqlc.arg(now)::timestamptz, sqlc.arg(now)::timestamptz
FROM integrations i
WHERE i.org_id = sqlc.arg(org_id)::uuid AND (
    i.id = ANY (sqlc.arg(integration_ids)::uuid[])
    OR (sqlc.arg(resource_kind)::text = 'status_page' AND EXISTS (SELECT 1 FROM integration_status_pages l
        WHERE l.integration_id = i.id AND l.status_page_id = sqlc.arg(resource_id)::uuid)))
ON CONFLICT (event_id, channel, target) DO NOTHING;

-- name: FanOutUserMails :execrows
-- One e-mail delivery per listed user who is a member of the organization.
INSERT INTO deliveries (id, org_id, event_id, event_type, channel, target, address, status, next_attempt_at, created_at)
SELECT gen_random_uuid(), m.org_id, sqlc.arg(event_id)::uuid, sqlc.arg(event_type)::text, 'email', u.id, u.email, 'PENDING',
    sqlc.arg(now)::timestamptz, sqlc.arg(now)::timestamptz
FROM users u JOIN memberships m ON m.user_id = u.id AND m.org_id = sqlc.arg(org_id)::uuid
WHERE u.id = ANY (sqlc.arg(user_ids)::uuid[])
ON CONFLICT (event_id, channel, target) DO NOTHING;

-- name: FanOutConfirmationMail :execrows
-- The confirmation e-mail of a subscriber while it is unconfirmed.
INSERT INTO deliveries (id, org_id, event_id, event_type, channel, target, address, status, next_attempt_at, created_at)
SELECT gen_random_uuid(), s.org_id, sqlc.arg(event_id)::uuid, sqlc.arg(event_type)::text, 'email', s.id, s.email_address, 'PENDING',
    sqlc.arg(now)::timestamptz, sqlc.arg(now)::timestamptz
FROM status_page_subscribers s
WHERE s.org_id = sqlc.arg(org_id)::uuid AND s.id = sqlc.arg(subscriber_id)::uuid AND NOT s.confirmed
ON CONFLICT (event_id, channel, target) DO NOTHING;

-- name: FanOutSubscriberMails :execrows
-- Every confirmed subscriber of a page; those in SELECTED_COMPONENTS mode only when one of
-- their components is among component_ids.
INSERT INTO deliveries (id, org_id, event_id, event_type, channel, target, address, status, next_attempt_at, created_at)
SELECT gen_random_uuid(), s.org_id, sqlc.arg(event_id)::uuid, sqlc.arg(event_type)::text, 'email', s.id, s.email_address, 'PENDING',
    sqlc.arg(now)::timestamptz, sqlc.arg(now)::timestamptz
FROM status_page_subscribers s
WHERE s.org_id = sqlc.arg(org_id)::uuid AND s.status_page_id = sqlc.arg(status_page_id)::uuid AND s.confirmed
  AND (s.component_subscription_mode = 'ALL_COMPONENTS' OR EXISTS (SELECT 1 FROM status_page_subscriber_components sc
      WHERE sc.subscriber_id = s.id AND sc.component_id = ANY (sqlc.arg(component_ids)::uuid[])))
ON CONFLICT (event_id, channel, target) DO NOTHING;

-- name: FanOutInvitationMail :execrows
-- The e-mail of an invitation while it is pending.
INSERT INTO deliveries (id, org_id, event_id, event_type, channel, target, address, status, next_attempt_at, created_at)
SELECT gen_random_uuid(), i.org_id, sqlc.arg(event_id)::uuid, sqlc.arg(event_type)::text, 'email', i.id, i.email, 'PENDING',
    sqlc.arg(now)::timestamptz, sqlc.arg(now)::timestamptz
FROM invitations i
WHERE i.org_id = sqlc.arg(org_id)::uuid AND i.id = sqlc.arg(invitation_id)::uuid AND i.accepted_at IS NULL
ON CONFLICT (event_id, channel, target) DO NOTHING;

-- name: ClaimDeliveries :many
-- Due deliveries, each locked (rows another replica holds are skipped), its attempt counter
-- taken and its next attempt pushed to lease_until, in one statement; with the event's rendered
-- body, the stored event (for e-mails), and the webhook's URL and sealed secret.
WITH due AS (
    SELECT dd.id FROM deliveries dd WHERE dd.status = 'PENDING' AND dd.next_attempt_at <= sqlc.arg(now)::timestamptz
      -- in order per resource and target: wait while an earlier one is pending (being tried,
      -- or waiting for its retry); delivered, failed or skipped ones no longer hold it back
      AND (dd.resource_id IS NULL OR NOT EXISTS (SELECT 1 FROM deliveries e WHERE e.status = 'PENDING'
          AND e.resource_id = dd.resource_id AND e.channel = dd.channel AND e.target = dd.target
          AND (e.event_at, e.event_id) < (dd.event_at, dd.event_id))
          -- nor while an earlier event of its check or heartbeat is not fanned out yet (its
          -- fan-out failed and waits for a retry, or another replica is at it)
          AND NOT EXISTS (SELECT 1 FROM outbox p WHERE p.delivered_at IS NULL AND p.check_id = dd.resource_id
              AND (p.created_at, p.id) < (dd.event_at, dd.event_id)))
    ORDER BY dd.next_attempt_at LIMIT sqlc.arg(batch_limit)::bigint FOR UPDATE SKIP LOCKED),
claimed AS (
    UPDATE deliveries d SET attempts = d.attempts + 1, next_attempt_at = sqlc.arg(lease_until)::timestamptz
    FROM due WHERE d.id = due.id
    RETURNING d.id, d.org_id, d.event_id, d.event_type, d.channel, d.target, d.webhook_id, d.integration_id, d.address,
        d.attempts, d.tries, d.created_at)
SELECT c.id, c.org_id, c.event_id, c.event_type, c.channel, c.target, c.webhook_id, c.integration_id, c.address, c.attempts,
    c.tries, c.created_at, o.body, o.event_version,
    (CASE WHEN c.channel IN ('email', 'integration') THEN o.payload END)::jsonb AS payload, o.alert_priority,
    w.url, w.secret_enc, i.type AS integration_type, i.settings_enc
FROM claimed c LEFT JOIN outbox o ON o.id = c.event_id LEFT JOIN webhooks w ON w.id = c.webhook_id
    LEFT JOIN integrations i ON i.id = c.integration_id;

-- name: LockDeliveries :many
-- In id order, like every other locker; deliveries deleted meanwhile (with their webhook) are absent.
SELECT id FROM deliveries WHERE id = ANY(@ids::uuid[]) ORDER BY id FOR UPDATE;

-- name: InsertDeliveryAttempt :batchexec
INSERT INTO delivery_attempts (delivery_id, number, attempted_at, latency_ms, status_code, error)
VALUES (@delivery_id, @number, @attempted_at, @latency_ms, sqlc.narg(status_code)::integer, sqlc.narg(error)::text)
ON CONFLICT DO NOTHING;

-- name: FinishAttempt :batchexec
-- Moves a delivery on after an attempt, only while that attempt's claim is the latest.
UPDATE deliveries SET status = @status, tries = tries + 1, next_attempt_at = @next_attempt_at,
    last_status_code = sqlc.narg(last_status_code)::integer, last_error = sqlc.narg(last_error)::text,
    delivered_at = coalesce(sqlc.narg(delivered_at)::timestamptz, delivered_at)
WHERE id = @id AND attempts = @attempt;

-- name: WebhookExists :one
SELECT EXISTS (SELECT 1 FROM webhooks WHERE org_id = @org_id AND id = @id);

-- name: CountDeliveries :one
SELECT count(*) FROM deliveries WHERE org_id = @org_id AND webhook_id = @webhook_id;

-- name: ListDeliveries :many
SELECT id, webhook_id, event_id, event_type, status, attempts, next_attempt_at, last_status_code, last_error,
    created_at, delivered_at
FROM deliveries WHERE org_id = @org_id AND webhook_id = @webhook_id
ORDER BY created_at DESC, id DESC
LIMIT @page_limit::bigint OFFSET @page_offset::bigint;

-- name: DeliveryAttempts :many
SELECT delivery_id, number, attempted_at, latency_ms, status_code, error
FROM delivery_attempts WHERE delivery_id = ANY(@ids::uuid[]) ORDER BY delivery_id, number;

-- name: LockDeliveryStatus :one
SELECT status FROM deliveries WHERE org_id = @org_id AND webhook_id = @webhook_id AND id = @id FOR UPDATE;

-- name: ResendDelivery :one
UPDATE deliveries SET status = 'PENDING', tries = 0, next_attempt_at = @now WHERE id = @id
RETURNING id, webhook_id, event_id, event_type, status, attempts, next_attempt_at, last_status_code, last_error,
    created_at, delivered_at;
