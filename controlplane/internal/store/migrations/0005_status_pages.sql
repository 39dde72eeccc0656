-- Vantage schema, version 7: status pages, their components and groups, incidents with their
-- timeline, scheduled maintenance (a kind of incident) and e-mail subscribers (supplement
-- §2.6–2.10, api.md "Status page incidents" and "Status page subscribers").

CREATE TABLE status_pages (
    id                       uuid PRIMARY KEY,
    org_id                   uuid        NOT NULL REFERENCES organizations ON DELETE CASCADE,
    name                     text        NOT NULL,
    subdomain                text        NOT NULL,
    custom_domain            text,                 -- host name only, lower case, no scheme
    password_hash            bytea,                -- PBKDF2; NULL = no password
    description              text,
    hide_from_search_engines boolean     NOT NULL DEFAULT false,
    allowed_ips              text[],               -- canonical IPs / CIDR prefixes; NULL = anyone
    favicon_url              text,
    logo_url                 text,
    dark_logo_url            text,
    created_at               timestamptz NOT NULL DEFAULT now(),
    updated_at               timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, id)
);
-- Subdomains and custom domains are global: they name the public page.
CREATE UNIQUE INDEX status_pages_subdomain ON status_pages (lower(subdomain));
CREATE UNIQUE INDEX status_pages_custom_domain ON status_pages (custom_domain) WHERE custom_domain IS NOT NULL;
CREATE INDEX status_pages_org ON status_pages (org_id, created_at DESC, id DESC);

CREATE TABLE status_page_groups (
    id             uuid PRIMARY KEY,
    org_id         uuid        NOT NULL,
    status_page_id uuid        NOT NULL,
    name           text        NOT NULL,
    description    text,
    sort_order     integer,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    UNIQUE (org_id, id),
    FOREIGN KEY (org_id, status_page_id) REFERENCES status_pages (org_id, id) ON DELETE CASCADE
);
CREATE INDEX status_page_groups_page ON status_page_groups (status_page_id);

CREATE TABLE status_page_components (
    id                    uuid PRIMARY KEY,
    org_id                uuid        NOT NULL,
    status_page_id        uuid        NOT NULL,
    group_id              uuid,
    name                  text        NOT NULL,
    status                text        NOT NULL DEFAULT 'OPERATIONAL' CHECK (status IN
        ('OPERATIONAL', 'MAJOR_OUTAGE', 'PARTIAL_OUTAGE', 'DEGRADED_PERFORMANCE', 'MAINTENANCE', 'NO_IMPACT')),
    display_uptime        boolean     NOT NULL DEFAULT true,
    display_metrics       boolean     NOT NULL DEFAULT true,
    sort_order            integer,
    is_external_component boolean     NOT NULL DEFAULT false,
    override_status       boolean     NOT NULL DEFAULT false,
    -- No foreign key: heartbeats arrive in their own migration; the API validates the id
    -- (org-scoped) and a deleted heartbeat simply stops feeding the component.
    heartbeat_id          uuid,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    UNIQUE (org_id, id),
    FOREIGN KEY (org_id, status_page_id) REFERENCES status_pages (org_id, id) ON DELETE CASCADE,
    FOREIGN KEY (org_id, group_id) REFERENCES status_page_groups (org_id, id) ON DELETE SET NULL (group_id)
);
CREATE INDEX status_page_components_page ON status_page_components (status_page_id);
CREATE INDEX status_page_components_heartbeat ON status_page_components (heartbeat_id) WHERE heartbeat_id IS NOT NULL;

-- The checks that feed a component's status.
CREATE TABLE status_page_component_checks (
    org_id       uuid NOT NULL,
    component_id uuid NOT NULL,
    check_id     uuid NOT NULL,
    PRIMARY KEY (component_id, check_id),
    FOREIGN KEY (org_id, component_id) REFERENCES status_page_components (org_id, id) ON DELETE CASCADE,
    FOREIGN KEY (org_id, check_id) REFERENCES checks (org_id, id) ON DELETE CASCADE
);
CREATE INDEX status_page_component_checks_check ON status_page_component_checks (check_id);

-- Incidents, and scheduled maintenance as incidents whose maintenance_state is set.
CREATE TABLE status_page_incidents (
    id                uuid PRIMARY KEY,
    org_id            uuid        NOT NULL,
    status_page_id    uuid        NOT NULL,
    title             text        NOT NULL,
    impact            text        NOT NULL CHECK (impact IN
        ('MAJOR_OUTAGE', 'PARTIAL_OUTAGE', 'DEGRADED_PERFORMANCE', 'NO_IMPACT', 'MAINTENANCE')),
    started           timestamptz,
    ended             timestamptz,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    maintenance_state text CHECK (maintenance_state IN ('SCHEDULED', 'IN_PROGRESS', 'COMPLETED')),
    start_date        timestamptz,
    duration_minutes  integer CHECK (duration_minutes >= 1),
    notify_an_hour_before boolean,
    notify_at_start   boolean,
    notify_at_end     boolean,
    UNIQUE (org_id, id),
    FOREIGN KEY (org_id, status_page_id) REFERENCES status_pages (org_id, id) ON DELETE CASCADE,
    CHECK ((maintenance_state IS NULL) = (start_date IS NULL) AND (start_date IS NULL) = (duration_minutes IS NULL))
);
CREATE INDEX status_page_incidents_page ON status_page_incidents (status_page_id, created_at DESC, id DESC);
CREATE INDEX status_page_incidents_due ON status_page_incidents (start_date) WHERE maintenance_state IN ('SCHEDULED', 'IN_PROGRESS');

-- The components an incident affects. restore_status is what a scheduled maintenance set back
-- when it ends (the status the component had when the maintenance started).
CREATE TABLE status_page_incident_components (
    org_id         uuid NOT NULL,
    incident_id    uuid NOT NULL,
    component_id   uuid NOT NULL,
    restore_status text,
    PRIMARY KEY (incident_id, component_id),
    FOREIGN KEY (org_id, incident_id) REFERENCES status_page_incidents (org_id, id) ON DELETE CASCADE,
    FOREIGN KEY (org_id, component_id) REFERENCES status_page_components (org_id, id) ON DELETE CASCADE
);
CREATE INDEX status_page_incident_components_component ON status_page_incident_components (component_id);

CREATE TABLE status_page_incident_updates (
    id                 uuid PRIMARY KEY,
    org_id             uuid        NOT NULL,
    incident_id        uuid        NOT NULL,
    status             text        NOT NULL CHECK (status IN ('INVESTIGATING', 'IDENTIFIED', 'MONITORING',
        'RESOLVED', 'UPDATE', 'SCHEDULED', 'IN_PROGRESS', 'VERIFYING', 'COMPLETED')),
    description        text        NOT NULL,
    date_happened      timestamptz NOT NULL,
    notify_subscribers boolean     NOT NULL DEFAULT true,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    UNIQUE (org_id, id),
    FOREIGN KEY (org_id, incident_id) REFERENCES status_page_incidents (org_id, id) ON DELETE CASCADE
);
CREATE INDEX status_page_incident_updates_incident ON status_page_incident_updates (incident_id, date_happened DESC, created_at DESC);

-- The component status changes an update made, with the status before and after.
CREATE TABLE status_page_update_components (
    org_id       uuid NOT NULL,
    update_id    uuid NOT NULL,
    component_id uuid NOT NULL,
    old_status   text,
    new_status   text NOT NULL,
    PRIMARY KEY (update_id, component_id),
    FOREIGN KEY (org_id, update_id) REFERENCES status_page_incident_updates (org_id, id) ON DELETE CASCADE,
    FOREIGN KEY (org_id, component_id) REFERENCES status_page_components (org_id, id) ON DELETE CASCADE
);

CREATE TABLE status_page_subscribers (
    id                          uuid PRIMARY KEY,
    org_id                      uuid        NOT NULL,
    status_page_id              uuid        NOT NULL,
    email_address               text        NOT NULL,
    confirmed                   boolean     NOT NULL DEFAULT false,
    -- SHA-256 of the confirmation token the e-mail flow sends; NULL once confirmed.
    confirmation_token_hash     bytea,
    component_subscription_mode text        NOT NULL DEFAULT 'ALL_COMPONENTS'
        CHECK (component_subscription_mode IN ('ALL_COMPONENTS', 'SELECTED_COMPONENTS')),
    created_at                  timestamptz NOT NULL,
    UNIQUE (org_id, id),
    FOREIGN KEY (org_id, status_page_id) REFERENCES status_pages (org_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX status_page_subscribers_email ON status_page_subscribers (status_page_id, lower(email_address));
CREATE UNIQUE INDEX status_page_subscribers_token ON status_page_subscribers (confirmation_token_hash) WHERE confirmation_token_hash IS NOT NULL;

CREATE TABLE status_page_subscriber_components (
    org_id        uuid NOT NULL,
    subscriber_id uuid NOT NULL,
    component_id  uuid NOT NULL,
    PRIMARY KEY (subscriber_id, component_id),
    FOREIGN KEY (org_id, subscriber_id) REFERENCES status_page_subscribers (org_id, id) ON DELETE CASCADE,
    FOREIGN KEY (org_id, component_id) REFERENCES status_page_components (org_id, id) ON DELETE CASCADE
);

-- Status page incident events in the outbox name their page (no FK: an event outlives its page).
ALTER TABLE outbox ADD COLUMN status_page_id uuid;
