-- Vantage schema, version 6: heartbeats (push monitors pinged by the monitored job) and
-- maintenance windows (supplement §2.3, §2.4).

CREATE TABLE heartbeats (
    id                              uuid PRIMARY KEY,
    org_id                          uuid        NOT NULL REFERENCES organizations ON DELETE CASCADE,
    project_id                      uuid,
    name                            text        NOT NULL,
    -- state is the monitor's own state; PAUSED / MUTED / MAINTENANCE are derived for display
    -- from paused, muted and maintenance windows (the state keeps being tracked under them).
    state                           text        NOT NULL DEFAULT 'PENDING'
        CHECK (state IN ('PENDING', 'UP', 'DOWN')),
    state_changed_at                timestamptz,
    paused                          boolean     NOT NULL DEFAULT false,
    muted                           boolean     NOT NULL DEFAULT false,
    -- exactly one schedule: a period in seconds, or a cron expression read in timezone
    report_period                   integer CHECK (report_period >= 1),
    report_period_cron              text,
    timezone                        text,
    grace_period                    integer     NOT NULL CHECK (grace_period >= 1), -- seconds
    alert_priority                  text        NOT NULL DEFAULT 'LOW' CHECK (alert_priority IN ('LOW', 'HIGH')),
    reminder_alert_interval_minutes integer,
    alerts                          jsonb       NOT NULL DEFAULT '{}', -- the nine *_alerts id lists
    -- pings (written by the public ping endpoint, one UPDATE per ping)
    last_seen                       timestamptz, -- last ping of any kind
    last_success_at                 timestamptz, -- last success ping (GET|POST /{id})
    run_started_at                  timestamptz, -- a /start ping not yet followed by success or fail
    failed_at                       timestamptz, -- the last /fail ping, until the next success
    last_duration_ms                bigint,      -- start → success|fail of the last completed run
    -- the monitor's memory (like the checks' columns of migration 3)
    down_alerted                    boolean     NOT NULL DEFAULT false,
    last_alert_at                   timestamptz,
    created_at                      timestamptz NOT NULL DEFAULT now(),
    updated_at                      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, id),
    FOREIGN KEY (org_id, project_id) REFERENCES projects (org_id, id),
    CHECK ((report_period IS NULL) <> (report_period_cron IS NULL))
);
CREATE INDEX heartbeats_org ON heartbeats (org_id, created_at DESC, id DESC);
CREATE INDEX heartbeats_org_project ON heartbeats (org_id, project_id, created_at DESC, id DESC);
-- the monitor's sweep: heartbeats that are not paused and have been pinged or are DOWN
CREATE INDEX heartbeats_monitored ON heartbeats (id) WHERE NOT paused AND (last_seen IS NOT NULL OR state <> 'PENDING');

CREATE TABLE maintenance_windows (
    id               uuid PRIMARY KEY,
    org_id           uuid        NOT NULL REFERENCES organizations ON DELETE CASCADE,
    name             text        NOT NULL,
    start_date       timestamptz NOT NULL, -- its time of day in timezone is the daily start
    duration_minutes integer     NOT NULL CHECK (duration_minutes > 0),
    timezone         text        NOT NULL,
    days_of_week     smallint[]  NOT NULL, -- 0 = SUNDAY .. 6 = SATURDAY
    status           text        NOT NULL DEFAULT 'ENABLED' CHECK (status IN ('ENABLED', 'DISABLED')),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, id)
);
CREATE INDEX maintenance_windows_org ON maintenance_windows (org_id, created_at DESC, id DESC);

CREATE TABLE maintenance_window_checks (
    org_id    uuid NOT NULL,
    window_id uuid NOT NULL,
    check_id  uuid NOT NULL,
    PRIMARY KEY (window_id, check_id),
    FOREIGN KEY (org_id, window_id) REFERENCES maintenance_windows (org_id, id) ON DELETE CASCADE,
    FOREIGN KEY (org_id, check_id) REFERENCES checks (org_id, id) ON DELETE CASCADE
);
CREATE INDEX maintenance_window_checks_check ON maintenance_window_checks (check_id);

CREATE TABLE maintenance_window_heartbeats (
    org_id       uuid NOT NULL,
    window_id    uuid NOT NULL,
    heartbeat_id uuid NOT NULL,
    PRIMARY KEY (window_id, heartbeat_id),
    FOREIGN KEY (org_id, window_id) REFERENCES maintenance_windows (org_id, id) ON DELETE CASCADE,
    FOREIGN KEY (org_id, heartbeat_id) REFERENCES heartbeats (org_id, id) ON DELETE CASCADE
);
CREATE INDEX maintenance_window_heartbeats_heartbeat ON maintenance_window_heartbeats (heartbeat_id);
