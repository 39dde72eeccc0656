-- Vantage schema, version 1: tenancy, credentials, projects, variables, checks, incidents, results, audit.
-- Every tenant-owned table carries org_id, and references between tenant-owned rows go through
-- (org_id, id) pairs so that a row can never point at another organization's row.

CREATE TABLE organizations (
    id         uuid PRIMARY KEY,
    name       text        NOT NULL,
    plan       text        NOT NULL DEFAULT 'free' CHECK (plan IN ('free', 'paid')),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
    id         uuid PRIMARY KEY,
    email      text        NOT NULL UNIQUE,
    first_name text,
    last_name  text,
    image      text,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
    org_id     uuid        NOT NULL REFERENCES organizations ON DELETE CASCADE,
    user_id    uuid        NOT NULL REFERENCES users ON DELETE CASCADE,
    role       text        NOT NULL CHECK (role IN ('ADMIN', 'STANDARD')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, user_id)
);
CREATE INDEX memberships_user ON memberships (user_id);

-- API tokens identify exactly one organization. Only a SHA-256 of the secret is kept: secrets are
-- 256-bit random strings, so a slow password hash would add latency and no safety.
CREATE TABLE api_tokens (
    id          uuid PRIMARY KEY,
    org_id      uuid        NOT NULL REFERENCES organizations ON DELETE CASCADE,
    name        text        NOT NULL,
    secret_hash bytea       NOT NULL UNIQUE,
    grants      text[]      NOT NULL, -- 'AREA:LEVEL'
    expires_at  timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_tokens_org ON api_tokens (org_id, created_at DESC, id DESC);

-- Access tokens (OAuth-style) belong to a user and cover every organization the user is a member
-- of; requests select one with X-Service-Organisation.
CREATE TABLE access_tokens (
    id          uuid PRIMARY KEY,
    user_id     uuid        NOT NULL REFERENCES users ON DELETE CASCADE,
    secret_hash bytea       NOT NULL UNIQUE,
    scopes      text[]      NOT NULL,
    expires_at  timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE projects (
    id         uuid PRIMARY KEY,
    org_id     uuid        NOT NULL REFERENCES organizations ON DELETE CASCADE,
    name       text        NOT NULL,
    is_default boolean     NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, id)
);
CREATE INDEX projects_org ON projects (org_id, created_at DESC, id DESC);

-- Environment variables live in a scope: a project, or the organization-level pool (project_id
-- NULL) that Unassigned resources use. Values are sealed with the control plane's secret key.
CREATE TABLE env_vars (
    id         uuid PRIMARY KEY,
    org_id     uuid        NOT NULL REFERENCES organizations ON DELETE CASCADE,
    project_id uuid,
    name       text        NOT NULL,
    type       text        NOT NULL CHECK (type IN ('config', 'secret')),
    value_enc  bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, id),
    UNIQUE NULLS NOT DISTINCT (org_id, project_id, name),
    FOREIGN KEY (org_id, project_id) REFERENCES projects (org_id, id)
);
CREATE INDEX env_vars_org ON env_vars (org_id, created_at DESC, id DESC);

CREATE TABLE checks (
    id                              uuid PRIMARY KEY,
    org_id                          uuid        NOT NULL REFERENCES organizations ON DELETE CASCADE,
    project_id                      uuid,
    kind                            text        NOT NULL CHECK (kind IN ('UPTIME', 'BROWSER', 'DNS', 'TCP')),
    name                            text        NOT NULL,
    -- state is the status machine's own state (DESIGN.md); PAUSED / MUTED / MAINTENANCE are
    -- derived for display from paused, muted and maintenance windows.
    state                           text        NOT NULL DEFAULT 'PENDING'
        CHECK (state IN ('PENDING', 'UP', 'VERIFYING', 'DOWN', 'RECOVERING')),
    state_changed_at                timestamptz,
    paused                          boolean     NOT NULL DEFAULT false,
    muted                           boolean     NOT NULL DEFAULT false,
    last_queued                     timestamptz,
    test_interval                   integer     NOT NULL,
    timeout_ms                      integer,
    test_regions                    text[]      NOT NULL,
    alert_priority                  text        NOT NULL CHECK (alert_priority IN ('LOW', 'HIGH')),
    confirmation_period_seconds     integer     NOT NULL,
    recovery_period_seconds         integer     NOT NULL,
    reminder_alert_interval_minutes integer,
    alerts                          jsonb       NOT NULL DEFAULT '{}', -- the nine *_alerts id lists
    url                             text,
    version                         text,
    -- UPTIME / BROWSER
    method                          text,
    headers                         jsonb,
    body                            text,
    text_to_search_for              text,
    verify_ssl                      boolean,
    follow_redirects                boolean,
    auth_username                   text,
    auth_password_enc               bytea,       -- sealed; NULL when unset
    script                          text,
    -- DNS
    dns_domain                      text,
    dns_record_type                 text,
    dns_resolver                    text,
    dns_protocol                    text,
    -- TCP
    tcp_hostname                    text,
    tcp_port                        integer,
    tcp_ip_family                   text,
    tcp_data                        text,
    tcp_should_fail                 boolean,
    assertions                      jsonb,
    created_at                      timestamptz NOT NULL DEFAULT now(),
    updated_at                      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, id),
    FOREIGN KEY (org_id, project_id) REFERENCES projects (org_id, id)
);
CREATE INDEX checks_org ON checks (org_id, created_at DESC, id DESC);
CREATE INDEX checks_org_project ON checks (org_id, project_id, created_at DESC, id DESC);

-- Which variables a check's saved configuration references. RESTRICT makes "variable in use" a
-- constraint, not a scan.
CREATE TABLE check_env_refs (
    org_id     uuid NOT NULL,
    check_id   uuid NOT NULL,
    env_var_id uuid NOT NULL,
    PRIMARY KEY (check_id, env_var_id),
    FOREIGN KEY (org_id, check_id) REFERENCES checks (org_id, id) ON DELETE CASCADE,
    FOREIGN KEY (org_id, env_var_id) REFERENCES env_vars (org_id, id) ON DELETE RESTRICT
);
CREATE INDEX check_env_refs_var ON check_env_refs (env_var_id);

CREATE TABLE check_incidents (
    id         uuid PRIMARY KEY,
    org_id     uuid        NOT NULL,
    check_id   uuid        NOT NULL,
    started_at timestamptz NOT NULL,
    ended_at   timestamptz,
    FOREIGN KEY (org_id, check_id) REFERENCES checks (org_id, id) ON DELETE CASCADE
);
CREATE INDEX check_incidents_check ON check_incidents (check_id, started_at DESC, id DESC);
CREATE UNIQUE INDEX check_incidents_one_open ON check_incidents (check_id) WHERE ended_at IS NULL;

-- One row per probe attempt from one region. Partitioned by checked_at so retention drops whole
-- partitions; the default partition catches anything outside the ones created ahead of time.
CREATE TABLE check_results (
    id                 uuid             NOT NULL,
    org_id             uuid             NOT NULL,
    check_id           uuid             NOT NULL,
    job_id             uuid             NOT NULL,
    region             text             NOT NULL,
    attempt_number     integer          NOT NULL,
    is_final_attempt   boolean          NOT NULL,
    checked_at         timestamptz      NOT NULL,
    dispatched_at      timestamptz,
    passing            boolean          NOT NULL,
    response_time_ms   double precision NOT NULL,
    response_code      integer,
    response_body      text,
    body_availability  text             NOT NULL,
    result_summary     text,
    failure_source     text,
    failure_type       text,
    dns_status         text,
    resolver           text,
    parsed_response    text,
    tcp_status         text,
    dns_time_ms        double precision,
    connect_time_ms    double precision,
    data_time_ms       double precision,
    details            jsonb,
    PRIMARY KEY (check_id, checked_at, id)
) PARTITION BY RANGE (checked_at);
CREATE TABLE check_results_default PARTITION OF check_results DEFAULT;

CREATE TABLE audit_events (
    id                     uuid PRIMARY KEY,
    org_id                 uuid        NOT NULL REFERENCES organizations ON DELETE CASCADE,
    actor_id               text,
    actor_type             text        NOT NULL CHECK (actor_type IN ('User', 'ApiToken', 'System')),
    actor_display_name     text,
    auditable_id           text,
    auditable_type         text        NOT NULL,
    auditable_display_name text,
    target_id              text,
    target_type            text,
    target_display_name    text,
    audit_action           text        NOT NULL,
    action                 text        NOT NULL,
    location               text,
    remote_ip              text,
    metadata               jsonb,
    created_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_events_org ON audit_events (org_id, created_at DESC, id DESC);
