-- Vantage schema: the organization's incident feed (GET /v1/incidents), open incidents first,
-- then resolved ones, each newest first.

-- The open incidents of an organization: few at any time, read whole on every feed page.
CREATE INDEX check_incidents_org_open ON check_incidents (org_id, started_at DESC, id DESC) WHERE ended_at IS NULL;

-- The resolved incidents of an organization, a page at a time in the feed's order.
CREATE INDEX check_incidents_org_resolved ON check_incidents (org_id, started_at DESC, id DESC) WHERE ended_at IS NOT NULL;

-- Heartbeats keep no incident records: a DOWN heartbeat is the feed's open entry, started when
-- its state last changed.
CREATE INDEX heartbeats_org_down ON heartbeats (org_id, state_changed_at DESC, id DESC) WHERE state = 'DOWN';
