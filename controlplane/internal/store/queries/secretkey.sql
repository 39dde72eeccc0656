-- The sealing key's fingerprint and re-encryption of every sealed column (admin
-- reencrypt-secrets). These span organizations: the key is the deployment's.

-- name: SecretKeyFingerprint :many
SELECT fingerprint FROM secret_key_fingerprint;

-- name: InitSecretKeyFingerprint :exec
INSERT INTO secret_key_fingerprint (fingerprint, updated_at) VALUES (@fingerprint, @now)
ON CONFLICT (singleton) DO NOTHING;

-- name: SetSecretKeyFingerprint :exec
UPDATE secret_key_fingerprint SET fingerprint = @fingerprint, updated_at = @now;

-- name: SampleSealedValue :many
-- One sealed value, if any: a database sealed before fingerprints existed is checked by opening it.
(SELECT value_enc AS sealed FROM env_vars LIMIT 1)
UNION ALL (SELECT secret_enc FROM webhooks LIMIT 1)
UNION ALL (SELECT auth_password_enc FROM checks WHERE auth_password_enc IS NOT NULL LIMIT 1)
UNION ALL (SELECT token_enc FROM invitations LIMIT 1)
UNION ALL (SELECT settings_enc FROM integrations LIMIT 1)
UNION ALL (SELECT token_enc FROM check_badges LIMIT 1)
LIMIT 1;

-- name: SealedEnvValues :many
SELECT id, value_enc FROM env_vars ORDER BY id FOR UPDATE;

-- name: ResealEnvValue :exec
UPDATE env_vars SET value_enc = @value_enc WHERE id = @id;

-- name: SealedCheckPasswords :many
SELECT id, auth_password_enc FROM checks WHERE auth_password_enc IS NOT NULL ORDER BY id FOR NO KEY UPDATE;

-- name: ResealCheckPassword :exec
UPDATE checks SET auth_password_enc = @auth_password_enc WHERE id = @id;

-- name: SealedWebhookSecrets :many
SELECT id, secret_enc FROM webhooks ORDER BY id FOR UPDATE;

-- name: ResealWebhookSecret :exec
UPDATE webhooks SET secret_enc = @secret_enc WHERE id = @id;

-- name: SealedInvitationTokens :many
SELECT id, token_enc FROM invitations ORDER BY id FOR UPDATE;

-- name: ResealInvitationToken :exec
UPDATE invitations SET token_enc = @token_enc WHERE id = @id;

-- name: SealedSubscriberTokens :many
SELECT id, confirmation_token_enc, unsubscribe_token_enc FROM status_page_subscribers
WHERE confirmation_token_enc IS NOT NULL OR unsubscribe_token_enc IS NOT NULL ORDER BY id FOR UPDATE;

-- name: ResealSubscriberTokens :exec
UPDATE status_page_subscribers SET confirmation_token_enc = @confirmation_token_enc,
    unsubscribe_token_enc = @unsubscribe_token_enc WHERE id = @id;

-- name: SealedIntegrationSettings :many
SELECT id, settings_enc FROM integrations ORDER BY id FOR UPDATE;

-- name: ResealIntegrationSettings :exec
UPDATE integrations SET settings_enc = @settings_enc WHERE id = @id;

-- name: SealedBadgeTokens :many
SELECT check_id, token_enc FROM check_badges ORDER BY check_id FOR UPDATE;

-- name: ResealBadgeToken :exec
UPDATE check_badges SET token_enc = @token_enc WHERE check_id = @check_id;
