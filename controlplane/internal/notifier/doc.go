// Package notifier delivers the outbox: every event the evaluator (and the heartbeat monitor,
// status pages, subscriptions and invitations) queue in the outbox table reaches the webhooks
// subscribed to it and the people it names by e-mail, at least once, signed, with every attempt
// recorded. Events are typed (package event): the notifier switches on their Go types, both to
// route and render them (render.go) and to choose an e-mail (subscriber_mail.go).
//
// # One typed alert per event
//
// What an alert says is read from the typed event once, into an alert (alert.go), as
// alertmanager's notify.GetTemplateData builds its template data: the webhook document's
// envelope and routing (the check's or heartbeat's alert lists) at fan-out, and each provider's
// message (message.go) and the alert e-mail (email.go) at each attempt, from the stored event.
// No channel reads another's rendering, so a JSON name changed in the webhook document cannot
// drop a detail or a recipient. Renderings an event carries from other packages (a heartbeat,
// a status page incident, the stored alert lists) are decoded there once; one that does not
// decode fails the fan-out (counted in vantage_notifier_fanout_errors_total, recorded in
// outbox.last_error) or the attempt, and is never routed to nobody. An event type newAlert has
// no case for is a notice titled by its type, or by its own Describe() (title, summary).
//
// # Two stages, any number of replicas
//
//	outbox row (delivered_at NULL)                       deliveries row (PENDING, due)
//	   │  stage 1, one tx, FOR UPDATE SKIP LOCKED            │  stage 2: claim FOR UPDATE SKIP LOCKED,
//	   │  render body, insert one delivery per target,       │  attempts+1, next_attempt_at = now+lease
//	   │  set outbox.body + delivered_at                     │  send (HTTP POST / SMTP), no lock held
//	   └────────────────────────────────────────────────▶    │  record attempt; DELIVERED, FAILED, or
//	                                                         │  PENDING at now+backoff(tries)
//	                                                         ▼
//
// Stage 1 runs in one transaction per batch, so an event is fanned out exactly once: a replica
// that crashes before commit leaves the row for another. Deliveries are unique per (event,
// channel, target). Stage 2 holds no lock while sending: the claim pushes next_attempt_at past
// the attempt's deadline (the lease), so a replica that dies mid-attempt leaves the delivery
// due again when the lease runs out. The recorded outcome only applies while the claim is the
// latest one (the attempt number matches). At-least-once: a receiver sees the same event id
// (the outbox id, in the body and the webhook-id header) on a retry and de-duplicates on it.
//
// # Order
//
// The alerts of one resource (a check or heartbeat: outbox.check_id; a status page for its
// incident events) reach each target in the order they were raised. Fan-out stamps an event's
// deliveries with the resource and the event's time; a delivery is claimed only while no
// earlier delivery of the same resource, channel and target is PENDING (being tried or waiting
// for a retry) and no earlier event of its check or heartbeat waits for its fan-out. Delivered,
// FAILED and SKIPPED ones no longer hold later ones back. The price: one check's alerts reach
// one target one after another (BenchmarkDelivery "1 check").
//
// # Routing
//
// An uptime.down / uptime.up event of check C goes to webhook W when W subscribes to the event
// type and either W is associated with C (webhook_checks, the API's check_ids) or C's
// webhook_alerts lists W's id. heartbeat.* events go to webhooks associated with the heartbeat
// (the id of its snapshot, plus those in its alerts.webhook_alerts), and
// status_page.incident.* events to webhooks associated with the event's status page, and the
// agent.region_unserved / agent.region_served events (Vantage extensions, queued by the fleet
// watcher for every organization whose active checks run from the region) to every webhook of
// the organization subscribed to them, as do status_page.custom_domain_released and
// status_page.custom_domain_unverified (extensions, queued in the page's organization).
// certificate.expiring / certificate.expired (extensions, queued by certwatch) are routed as a
// check's uptime alerts are: associated webhooks, webhook_alerts, user_alerts and the check's
// integrations (as open alerts keyed per certificate and threshold). The
// users of user_alerts who are members of the organization are e-mailed. Muted checks write no
// outbox rows at all (the evaluator drops their alert effects), so they send nothing.
//
// # Integrations
//
// The integration lists of a check's or heartbeat's alerts (slack_alerts, oncall_alerts, …)
// name integrations (package integration); a status page event also goes to the integrations
// attached to its page. Each gets one delivery on channel "integration", sent in its
// provider's own format (package provider, built from the typed event at each attempt, with
// the check as it is then and its latest run for what failed and where). A 429 or 503 with Retry-After is
// retried after that wait instead of the backoff (integration.go). TestIntegration sends the
// API's test messages through the same client.
//
// # Subscriber and invitation e-mails
//
// subscriber.confirmation (a new status page subscriber: double opt-in), subscriber.notification
// (an incident created or updated with notify_subscribers, a scheduled maintenance an hour
// before / at its start / at its end per its notifications flags) and invitation.created are
// e-mail only (no webhook matches them). They fan out to one delivery per recipient: the
// unconfirmed subscriber, every confirmed subscriber of the page (those in SELECTED_COMPONENTS
// mode only when the incident affects one of their components), or the invitee. Each e-mail
// is rendered at its attempt with the recipient's own links (subscriber_mail.go); every
// subscriber e-mail carries an unsubscribe link and List-Unsubscribe / List-Unsubscribe-Post
// (RFC 8058 one-click) headers. A recipient gone meanwhile is SKIPPED, not e-mailed.
//
// # The document
//
//	{"id": "<event id>", "type": "uptime.down", "occurred_at": "2026-01-02T15:04:05.000Z",
//	 "alert_priority": "HIGH", "reminder": false,
//	 "data": {"check": <the check as GET /v1/checks/{id} returns it>,
//	          "incident": {"id", "check_id", "started_at", "ended_at"}}}
//
// A heartbeat event's data is {"heartbeat": <the heartbeat as the API returns it, with its
// alert lists also under "alerts">}, a status page incident event's {"incident": <the full
// incident as the API returns it>, "status_page": {"id", "name"}}; reminders have "reminder":
// true. An agent region event's data is {"region": "cloud:…", "unserved_since": <time>,
// "checks": <the organization's active checks that run from it>}. A custom domain event's data
// is {"status_page": {"id", "name"}, "custom_domain": "<host>"}, plus "missing_since": <time>
// on status_page.custom_domain_unverified. A certificate event's data is {"check": <as for
// uptime alerts>, "certificate": {"subject", "issuer", "not_after", "fingerprint_sha256"},
// "region": "cloud:…", "days_left": <whole days left when the result was taken, negative once
// expired>}, plus "threshold_days" on certificate.expiring. The body is rendered once,
// at fan-out, and stored in outbox.body; testdata/ pins it byte for byte.
//
// # Signing (Standard Webhooks)
//
// Headers webhook-id (the event id), webhook-timestamp (Unix seconds of the attempt) and
// webhook-signature = "v1," + base64(HMAC-SHA256(key, id + "." + timestamp + "." + body)),
// where key is the base64-decoded part of the webhook's secret "whsec_<base64>".
//
// # Retries
//
// Non-2xx answers (redirects are not followed), timeouts (10s) and connection errors are retried
// after 30s, 2m, 10m, 30m, 1h, 2h, 4h, 8h and 8h (±20% jitter): ten attempts over about a day;
// then the delivery is FAILED and can be re-sent through the API.
//
// # Targets and secrets
//
// {{NAME}} references in a webhook URL are resolved from the organization's variable pool at
// each attempt. Recorded errors never contain the URL, and secret variable values are
// redacted from them. Private, loopback and link-local targets are allowed unless
// Config.DenyPrivateTargets is set (checked when the socket connects).
package notifier
