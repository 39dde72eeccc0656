-- name: CountSubscribers :one
SELECT count(*) FROM status_page_subscribers s
WHERE s.org_id = @org_id AND s.status_page_id = @status_page_id
  AND (@search::text = '' OR strpos(lower(s.email_address), lower(@search::text)) > 0);

-- name: ListSubscribers :many
-- Newest first, each with the ids of the components it follows.
SELECT s.id, s.email_address, s.confirmed, s.component_subscription_mode, s.created_at,
    coalesce((SELECT array_agg(sc.component_id ORDER BY sc.component_id) FROM status_page_subscriber_components sc
        WHERE sc.subscriber_id = s.id), '{}')::uuid[] AS component_ids
FROM status_page_subscribers s
WHERE s.org_id = @org_id AND s.status_page_id = @status_page_id
  AND (@search::text = '' OR strpos(lower(s.email_address), lower(@search::text)) > 0)
ORDER BY s.created_at DESC, s.id DESC
LIMIT @page_limit::bigint OFFSET @page_offset::bigint;

-- name: GetSubscriber :one
SELECT s.id, s.email_address, s.confirmed, s.component_subscription_mode, s.created_at,
    coalesce((SELECT array_agg(sc.component_id ORDER BY sc.component_id) FROM status_page_subscriber_components sc
        WHERE sc.subscriber_id = s.id), '{}')::uuid[] AS component_ids
FROM status_page_subscribers s WHERE s.org_id = @org_id AND s.id = @id;

-- name: CreateSubscriber :exec
INSERT INTO status_page_subscribers (id, org_id, status_page_id, email_address, confirmation_token_hash,
    confirmation_token_enc, unsubscribe_token_hash, unsubscribe_token_enc, component_subscription_mode, created_at)
VALUES (@id, @org_id, @status_page_id, @email_address, @confirmation_token_hash, @confirmation_token_enc,
    @unsubscribe_token_hash, @unsubscribe_token_enc, @component_subscription_mode, @now);

-- name: AddSubscriberComponents :exec
INSERT INTO status_page_subscriber_components (org_id, subscriber_id, component_id)
SELECT @org_id::uuid, @subscriber_id::uuid, unnest(@component_ids::uuid[]);

-- name: DeleteSubscriber :one
DELETE FROM status_page_subscribers WHERE org_id = @org_id AND status_page_id = @status_page_id AND id = @id
RETURNING email_address;

-- name: LockSubscriberMail :one
-- What a subscriber's e-mail needs, the subscriber locked (a missing unsubscribe token is made).
SELECT s.email_address, s.confirmed, s.confirmation_token_enc, s.unsubscribe_token_enc, p.name, p.subdomain
FROM status_page_subscribers s JOIN status_pages p ON p.id = s.status_page_id
WHERE s.org_id = @org_id AND s.id = @id FOR UPDATE OF s;

-- name: SetUnsubscribeToken :exec
UPDATE status_page_subscribers SET unsubscribe_token_hash = @token_hash, unsubscribe_token_enc = @token_enc
WHERE org_id = @org_id AND id = @id;

-- name: ConfirmSubscriber :one
-- Spends a confirmation token on the page served at subdomain.
UPDATE status_page_subscribers s SET confirmed = true, confirmation_token_hash = NULL, confirmation_token_enc = NULL
FROM status_pages p
WHERE p.id = s.status_page_id AND lower(p.subdomain) = lower(@subdomain::text) AND s.confirmation_token_hash = @token_hash
RETURNING s.org_id, s.id, s.email_address, p.name, p.subdomain;

-- name: SubscriptionByUnsubscribeToken :one
-- The subscriber an unsubscribe token is for on the page served at subdomain, locked.
SELECT s.org_id, s.id, s.status_page_id, s.email_address, p.name, p.subdomain FROM status_page_subscribers s
JOIN status_pages p ON p.id = s.status_page_id
WHERE lower(p.subdomain) = lower(@subdomain::text) AND s.unsubscribe_token_hash = @token_hash
FOR UPDATE OF s;

-- name: RemoveSubscriber :execrows
DELETE FROM status_page_subscribers WHERE org_id = @org_id AND id = @id;
