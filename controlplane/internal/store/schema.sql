CREATE FUNCTION public.check_progress_create() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO check_progress (check_id) SELECT id FROM new_checks;
    RETURN NULL;
END $$;

CREATE FUNCTION public.count_org_checks() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO org_check_counts AS c (org_id, shard, checks) VALUES (NEW.org_id, abs(hashtext(NEW.id::text)) % 16, 1)
        ON CONFLICT (org_id, shard) DO UPDATE SET checks = c.checks + 1;
    ELSE
        UPDATE org_check_counts SET checks = checks - 1
        WHERE org_id = OLD.org_id AND shard = abs(hashtext(OLD.id::text)) % 16;
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION public.outbox_notify() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM pg_notify('vantage_outbox', '');
    RETURN NULL;
END $$;

CREATE TABLE public.access_tokens (
    id uuid NOT NULL,
    user_id uuid NOT NULL,
    secret_hash bytea NOT NULL,
    scopes text[] NOT NULL,
    expires_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE public.agent_canaries (
    agent_id text NOT NULL,
    regions text[] NOT NULL,
    checked_at timestamp with time zone NOT NULL,
    received_at timestamp with time zone NOT NULL,
    targets integer NOT NULL,
    failing integer NOT NULL,
    failing_targets text[] DEFAULT '{}'::text[] NOT NULL,
    agent_healthy boolean NOT NULL,
    agent_reason text DEFAULT ''::text NOT NULL,
    clock_offset_ms bigint DEFAULT 0 NOT NULL
);

CREATE TABLE public.agent_sessions (
    session_id uuid NOT NULL,
    replica_id uuid NOT NULL,
    replica text NOT NULL,
    agent_id text NOT NULL,
    token_id uuid,
    regions text[] NOT NULL,
    version text NOT NULL,
    hostname text NOT NULL,
    capabilities text[] NOT NULL,
    connected_at timestamp with time zone NOT NULL,
    probes_running integer NOT NULL,
    results_per_second double precision NOT NULL,
    seen_at timestamp with time zone NOT NULL
);

CREATE TABLE public.agent_tokens (
    id uuid NOT NULL,
    name text NOT NULL,
    regions text[] NOT NULL,
    secret_hash bytea NOT NULL,
    created_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone,
    CONSTRAINT agent_tokens_regions_check CHECK ((cardinality(regions) >= 1))
);

CREATE TABLE public.api_tokens (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    name text NOT NULL,
    secret_hash bytea NOT NULL,
    grants text[] NOT NULL,
    expires_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE public.audit_events (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    actor_id text,
    actor_type text NOT NULL,
    actor_display_name text,
    auditable_id text,
    auditable_type text NOT NULL,
    auditable_display_name text,
    target_id text,
    target_type text,
    target_display_name text,
    audit_action text NOT NULL,
    action text NOT NULL,
    location text,
    remote_ip text,
    metadata jsonb,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT audit_events_actor_type_check CHECK ((actor_type = ANY (ARRAY['User'::text, 'ApiToken'::text, 'System'::text])))
);

CREATE TABLE public.certificate_alerts (
    check_id uuid NOT NULL,
    org_id uuid NOT NULL,
    fingerprint text NOT NULL,
    threshold_days integer NOT NULL,
    not_after timestamp with time zone NOT NULL,
    sent_at timestamp with time zone NOT NULL,
    CONSTRAINT certificate_alerts_threshold_days_check CHECK ((threshold_days >= 0))
);

CREATE TABLE public.check_badges (
    org_id uuid NOT NULL,
    check_id uuid NOT NULL,
    token_hash bytea NOT NULL,
    token_enc bytea NOT NULL,
    created_at timestamp with time zone NOT NULL
);

CREATE TABLE public.check_daily_stats (
    org_id uuid NOT NULL,
    check_id uuid NOT NULL,
    day date NOT NULL,
    runs integer DEFAULT 0 NOT NULL,
    failed_runs integer DEFAULT 0 NOT NULL,
    CONSTRAINT check_daily_stats_check CHECK (((runs >= 0) AND (failed_runs >= 0) AND (failed_runs <= runs)))
)
WITH (fillfactor='70');

CREATE TABLE public.check_degradations (
    org_id uuid NOT NULL,
    check_id uuid NOT NULL,
    since timestamp with time zone NOT NULL,
    degraded boolean DEFAULT false NOT NULL,
    failing_regions text[] DEFAULT '{}'::text[] NOT NULL
);

CREATE TABLE public.check_env_refs (
    org_id uuid NOT NULL,
    check_id uuid NOT NULL,
    env_var_id uuid NOT NULL
);

CREATE TABLE public.check_incidents (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    check_id uuid NOT NULL,
    started_at timestamp with time zone NOT NULL,
    ended_at timestamp with time zone,
    caused_by uuid
);

CREATE TABLE public.check_monthly_stats (
    org_id uuid NOT NULL,
    check_id uuid NOT NULL,
    month date NOT NULL,
    runs bigint DEFAULT 0 NOT NULL,
    failed_runs bigint DEFAULT 0 NOT NULL
)
WITH (fillfactor='70');

CREATE TABLE public.check_progress (
    check_id uuid NOT NULL,
    last_run_at timestamp with time zone
)
WITH (fillfactor='70');

CREATE TABLE public.check_regions (
    org_id uuid NOT NULL,
    check_id uuid NOT NULL,
    region text NOT NULL,
    passing boolean NOT NULL,
    checked_at timestamp with time zone NOT NULL,
    result_id uuid NOT NULL,
    response_time_ms integer,
    result_summary text
)
WITH (fillfactor='70');

CREATE TABLE public.check_results (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    check_id uuid NOT NULL,
    job_id uuid NOT NULL,
    region text NOT NULL,
    attempt_number integer NOT NULL,
    is_final_attempt boolean NOT NULL,
    checked_at timestamp with time zone NOT NULL,
    dispatched_at timestamp with time zone,
    passing boolean NOT NULL,
    response_time_ms double precision NOT NULL,
    response_code integer,
    response_body text,
    body_availability text NOT NULL,
    result_summary text,
    failure_source text,
    failure_type text,
    dns_status text,
    resolver text,
    parsed_response text,
    tcp_status text,
    dns_time_ms double precision,
    connect_time_ms double precision,
    data_time_ms double precision,
    details jsonb,
    screenshot bytea,
    artifact_index jsonb,
    artifacts bytea
)
PARTITION BY RANGE (checked_at);

CREATE TABLE public.check_results_default (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    check_id uuid NOT NULL,
    job_id uuid NOT NULL,
    region text NOT NULL,
    attempt_number integer NOT NULL,
    is_final_attempt boolean NOT NULL,
    checked_at timestamp with time zone NOT NULL,
    dispatched_at timestamp with time zone,
    passing boolean NOT NULL,
    response_time_ms double precision NOT NULL,
    response_code integer,
    response_body text,
    body_availability text NOT NULL,
    result_summary text,
    failure_source text,
    failure_type text,
    dns_status text,
    resolver text,
    parsed_response text,
    tcp_status text,
    dns_time_ms double precision,
    connect_time_ms double precision,
    data_time_ms double precision,
    details jsonb,
    screenshot bytea,
    artifact_index jsonb,
    artifacts bytea
);

CREATE TABLE public.check_rollups (
    org_id uuid NOT NULL,
    check_id uuid NOT NULL,
    region text NOT NULL,
    bucket_start timestamp with time zone NOT NULL,
    runs integer NOT NULL,
    failed integer NOT NULL,
    latency_hist integer[] NOT NULL,
    dns_ms_sum double precision DEFAULT 0 NOT NULL,
    dns_n integer DEFAULT 0 NOT NULL,
    connect_ms_sum double precision DEFAULT 0 NOT NULL,
    connect_n integer DEFAULT 0 NOT NULL,
    tls_ms_sum double precision DEFAULT 0 NOT NULL,
    tls_n integer DEFAULT 0 NOT NULL,
    first_byte_ms_sum double precision DEFAULT 0 NOT NULL,
    first_byte_n integer DEFAULT 0 NOT NULL,
    CONSTRAINT check_rollups_check CHECK (((runs >= 0) AND (failed >= 0) AND (failed <= runs)))
)
WITH (fillfactor='70');

CREATE TABLE public.check_runs (
    org_id uuid NOT NULL,
    check_id uuid NOT NULL,
    job_id uuid NOT NULL,
    scheduled_at timestamp with time zone NOT NULL,
    deadline timestamp with time zone NOT NULL,
    expected_regions text[] NOT NULL,
    passed_regions text[] DEFAULT '{}'::text[] NOT NULL,
    failed_regions text[] DEFAULT '{}'::text[] NOT NULL,
    first_result_at timestamp with time zone NOT NULL,
    held_since timestamp with time zone,
    slow_regions text[] DEFAULT '{}'::text[] NOT NULL
);

CREATE TABLE public.check_slowness (
    org_id uuid NOT NULL,
    check_id uuid NOT NULL,
    since timestamp with time zone NOT NULL,
    degraded boolean DEFAULT false NOT NULL,
    slow_regions text[] DEFAULT '{}'::text[] NOT NULL
);

CREATE TABLE public.check_stats_folded (
    month date NOT NULL,
    folded_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE public.checks (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    project_id uuid,
    kind text NOT NULL,
    name text NOT NULL,
    state text DEFAULT 'PENDING'::text NOT NULL,
    state_changed_at timestamp with time zone,
    paused boolean DEFAULT false NOT NULL,
    muted boolean DEFAULT false NOT NULL,
    last_queued timestamp with time zone,
    test_interval integer NOT NULL,
    timeout_ms integer,
    test_regions text[] NOT NULL,
    alert_priority text NOT NULL,
    confirmation_period_seconds integer NOT NULL,
    recovery_period_seconds integer NOT NULL,
    reminder_alert_interval_minutes integer,
    alerts jsonb DEFAULT '{}'::jsonb NOT NULL,
    auth_password_enc bytea,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    failing_since timestamp with time zone,
    passing_since timestamp with time zone,
    last_alert_at timestamp with time zone,
    down_alerted boolean DEFAULT false NOT NULL,
    current_incident_id uuid,
    spec jsonb DEFAULT '{}'::jsonb NOT NULL,
    url text GENERATED ALWAYS AS ((spec ->> 'url'::text)) STORED,
    region_quorum text DEFAULT 'majority'::text NOT NULL,
    depends_on uuid[] DEFAULT '{}'::uuid[] NOT NULL,
    degraded_response_time_ms integer,
    CONSTRAINT checks_alert_priority_check CHECK ((alert_priority = ANY (ARRAY['LOW'::text, 'HIGH'::text]))),
    CONSTRAINT checks_degraded_response_time_ms_check CHECK ((degraded_response_time_ms > 0)),
    CONSTRAINT checks_kind_check CHECK ((kind = ANY (ARRAY['UPTIME'::text, 'BROWSER'::text, 'DNS'::text, 'TCP'::text, 'MULTISTEP'::text, 'PING'::text, 'GRPC'::text, 'WEBSOCKET'::text]))),
    CONSTRAINT checks_spec_check CHECK ((jsonb_typeof(spec) = 'object'::text)),
    CONSTRAINT checks_state_check CHECK ((state = ANY (ARRAY['PENDING'::text, 'UP'::text, 'VERIFYING'::text, 'DOWN'::text, 'RECOVERING'::text])))
);

CREATE TABLE public.console_sessions (
    id uuid NOT NULL,
    secret_hash bytea NOT NULL,
    csrf_hash bytea NOT NULL,
    credential_hash bytea NOT NULL,
    minted_token_id uuid,
    org_id uuid,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL
);

CREATE TABLE public.console_signin_codes (
    code_hash bytea NOT NULL,
    credential_hash bytea,
    user_id uuid,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT console_signin_codes_one_subject CHECK (((credential_hash IS NULL) <> (user_id IS NULL)))
);

CREATE TABLE public.deliveries (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    event_id uuid NOT NULL,
    event_type text NOT NULL,
    channel text NOT NULL,
    target uuid NOT NULL,
    webhook_id uuid,
    address text,
    status text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    tries integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone NOT NULL,
    last_status_code integer,
    last_error text,
    created_at timestamp with time zone NOT NULL,
    delivered_at timestamp with time zone,
    integration_id uuid,
    resource_id uuid,
    event_at timestamp with time zone,
    CONSTRAINT deliveries_channel_check CHECK ((channel = ANY (ARRAY['webhook'::text, 'email'::text, 'integration'::text]))),
    CONSTRAINT deliveries_status_check CHECK ((status = ANY (ARRAY['PENDING'::text, 'DELIVERED'::text, 'FAILED'::text, 'SKIPPED'::text])))
);

CREATE TABLE public.delivery_attempts (
    delivery_id uuid NOT NULL,
    number integer NOT NULL,
    attempted_at timestamp with time zone NOT NULL,
    latency_ms double precision NOT NULL,
    status_code integer,
    error text
);

CREATE TABLE public.env_vars (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    project_id uuid,
    name text NOT NULL,
    type text NOT NULL,
    value_enc bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT env_vars_type_check CHECK ((type = ANY (ARRAY['config'::text, 'secret'::text])))
);

CREATE TABLE public.heartbeats (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    project_id uuid,
    name text NOT NULL,
    state text DEFAULT 'PENDING'::text NOT NULL,
    state_changed_at timestamp with time zone,
    paused boolean DEFAULT false NOT NULL,
    muted boolean DEFAULT false NOT NULL,
    report_period integer,
    report_period_cron text,
    timezone text,
    grace_period integer NOT NULL,
    alert_priority text DEFAULT 'LOW'::text NOT NULL,
    reminder_alert_interval_minutes integer,
    alerts jsonb DEFAULT '{}'::jsonb NOT NULL,
    last_seen timestamp with time zone,
    last_success_at timestamp with time zone,
    run_started_at timestamp with time zone,
    failed_at timestamp with time zone,
    last_duration_ms bigint,
    down_alerted boolean DEFAULT false NOT NULL,
    last_alert_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT heartbeats_alert_priority_check CHECK ((alert_priority = ANY (ARRAY['LOW'::text, 'HIGH'::text]))),
    CONSTRAINT heartbeats_check CHECK (((report_period IS NULL) <> (report_period_cron IS NULL))),
    CONSTRAINT heartbeats_grace_period_check CHECK ((grace_period >= 1)),
    CONSTRAINT heartbeats_report_period_check CHECK ((report_period >= 1)),
    CONSTRAINT heartbeats_state_check CHECK ((state = ANY (ARRAY['PENDING'::text, 'UP'::text, 'DOWN'::text])))
);

CREATE TABLE public.ingest_dedupe (
    job_id uuid NOT NULL,
    region text NOT NULL,
    attempt_number integer NOT NULL,
    is_final boolean NOT NULL,
    scheduled_at timestamp with time zone NOT NULL
)
PARTITION BY RANGE (scheduled_at);

CREATE TABLE public.ingest_dedupe_default (
    job_id uuid NOT NULL,
    region text NOT NULL,
    attempt_number integer NOT NULL,
    is_final boolean NOT NULL,
    scheduled_at timestamp with time zone NOT NULL
);

CREATE TABLE public.integration_status_pages (
    org_id uuid NOT NULL,
    integration_id uuid NOT NULL,
    status_page_id uuid NOT NULL
);

CREATE TABLE public.integrations (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    name text NOT NULL,
    type text NOT NULL,
    settings_enc bytea NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT integrations_type_check CHECK ((type = ANY (ARRAY['SLACK'::text, 'DISCORD'::text, 'MICROSOFT_TEAMS'::text, 'TELEGRAM'::text, 'PUSHOVER'::text, 'INCIDENT_IO'::text, 'ONCALL'::text])))
);

CREATE TABLE public.invitations (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    email text NOT NULL,
    role text NOT NULL,
    token_hash bytea NOT NULL,
    token_enc bytea NOT NULL,
    invited_by text,
    created_at timestamp with time zone NOT NULL,
    accepted_at timestamp with time zone,
    CONSTRAINT invitations_role_check CHECK ((role = ANY (ARRAY['ADMIN'::text, 'STANDARD'::text])))
);

CREATE TABLE public.maintenance_window_checks (
    org_id uuid NOT NULL,
    window_id uuid NOT NULL,
    check_id uuid NOT NULL
);

CREATE TABLE public.maintenance_window_heartbeats (
    org_id uuid NOT NULL,
    window_id uuid NOT NULL,
    heartbeat_id uuid NOT NULL
);

CREATE TABLE public.maintenance_windows (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    name text NOT NULL,
    start_date timestamp with time zone NOT NULL,
    duration_minutes integer NOT NULL,
    timezone text NOT NULL,
    days_of_week smallint[] NOT NULL,
    status text DEFAULT 'ENABLED'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT maintenance_windows_duration_minutes_check CHECK ((duration_minutes > 0)),
    CONSTRAINT maintenance_windows_status_check CHECK ((status = ANY (ARRAY['ENABLED'::text, 'DISABLED'::text])))
);

CREATE TABLE public.memberships (
    org_id uuid NOT NULL,
    user_id uuid NOT NULL,
    role text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT memberships_role_check CHECK ((role = ANY (ARRAY['ADMIN'::text, 'STANDARD'::text])))
);

CREATE TABLE public.org_check_counts (
    org_id uuid NOT NULL,
    shard smallint NOT NULL,
    checks bigint NOT NULL
);

CREATE TABLE public.organizations (
    id uuid NOT NULL,
    name text NOT NULL,
    plan text DEFAULT 'free'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT organizations_plan_check CHECK ((plan = ANY (ARRAY['free'::text, 'paid'::text])))
);

CREATE TABLE public.outbox (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    event_type text NOT NULL,
    check_id uuid,
    incident_id uuid,
    alert_priority text NOT NULL,
    payload jsonb NOT NULL,
    created_at timestamp with time zone NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone NOT NULL,
    last_error text,
    delivered_at timestamp with time zone,
    body jsonb,
    status_page_id uuid,
    event_version integer DEFAULT 1 NOT NULL,
    CONSTRAINT outbox_alert_priority_check CHECK ((alert_priority = ANY (ARRAY['LOW'::text, 'HIGH'::text])))
);

CREATE TABLE public.projects (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    name text NOT NULL,
    is_default boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE UNLOGGED TABLE public.rate_limits (
    key text NOT NULL,
    tat timestamp with time zone NOT NULL,
    allowed boolean NOT NULL
)
WITH (fillfactor='70');

CREATE TABLE public.region_health (
    region text NOT NULL,
    unhealthy_since timestamp with time zone,
    reason text DEFAULT ''::text NOT NULL,
    changed_at timestamp with time zone NOT NULL,
    cause text DEFAULT 'checks'::text NOT NULL,
    CONSTRAINT region_health_cause_check CHECK ((cause = ANY (ARRAY['checks'::text, 'canary'::text])))
);

CREATE TABLE public.region_unhealthy_periods (
    region text NOT NULL,
    started_at timestamp with time zone NOT NULL,
    ended_at timestamp with time zone,
    reason text NOT NULL,
    cause text DEFAULT 'checks'::text NOT NULL,
    CONSTRAINT region_unhealthy_periods_cause_check CHECK ((cause = ANY (ARRAY['checks'::text, 'canary'::text])))
);

CREATE TABLE public.scheduler_progress (
    singleton boolean DEFAULT true NOT NULL,
    handled_through timestamp with time zone NOT NULL,
    CONSTRAINT scheduler_progress_singleton_check CHECK (singleton)
);

CREATE TABLE public.scheduler_shard_progress (
    shard smallint NOT NULL,
    handled_through timestamp with time zone NOT NULL,
    CONSTRAINT scheduler_shard_progress_shard_check CHECK (((shard >= 0) AND (shard <= 255)))
);

CREATE TABLE public.secret_key_fingerprint (
    singleton boolean DEFAULT true NOT NULL,
    fingerprint text NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT secret_key_fingerprint_singleton_check CHECK (singleton)
);

CREATE TABLE public.skipped_runs (
    org_id uuid NOT NULL,
    check_id uuid NOT NULL,
    region text NOT NULL,
    scheduled_at timestamp with time zone NOT NULL,
    reason text NOT NULL,
    recorded_at timestamp with time zone NOT NULL
);

CREATE TABLE public.status_page_component_checks (
    org_id uuid NOT NULL,
    component_id uuid NOT NULL,
    check_id uuid NOT NULL
);

CREATE TABLE public.status_page_components (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    status_page_id uuid NOT NULL,
    group_id uuid,
    name text NOT NULL,
    status text DEFAULT 'OPERATIONAL'::text NOT NULL,
    display_uptime boolean DEFAULT true NOT NULL,
    display_metrics boolean DEFAULT true NOT NULL,
    sort_order integer,
    is_external_component boolean DEFAULT false NOT NULL,
    override_status boolean DEFAULT false NOT NULL,
    heartbeat_id uuid,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT status_page_components_status_check CHECK ((status = ANY (ARRAY['OPERATIONAL'::text, 'MAJOR_OUTAGE'::text, 'PARTIAL_OUTAGE'::text, 'DEGRADED_PERFORMANCE'::text, 'MAINTENANCE'::text, 'NO_IMPACT'::text])))
);

CREATE TABLE public.status_page_groups (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    status_page_id uuid NOT NULL,
    name text NOT NULL,
    description text,
    sort_order integer,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);

CREATE TABLE public.status_page_incident_components (
    org_id uuid NOT NULL,
    incident_id uuid NOT NULL,
    component_id uuid NOT NULL,
    restore_status text
);

CREATE TABLE public.status_page_incident_updates (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    incident_id uuid NOT NULL,
    status text NOT NULL,
    description text NOT NULL,
    date_happened timestamp with time zone NOT NULL,
    notify_subscribers boolean DEFAULT true NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT status_page_incident_updates_status_check CHECK ((status = ANY (ARRAY['INVESTIGATING'::text, 'IDENTIFIED'::text, 'MONITORING'::text, 'RESOLVED'::text, 'UPDATE'::text, 'SCHEDULED'::text, 'IN_PROGRESS'::text, 'VERIFYING'::text, 'COMPLETED'::text])))
);

CREATE TABLE public.status_page_incidents (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    status_page_id uuid NOT NULL,
    title text NOT NULL,
    impact text NOT NULL,
    started timestamp with time zone,
    ended timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    maintenance_state text,
    start_date timestamp with time zone,
    duration_minutes integer,
    notify_an_hour_before boolean,
    notify_at_start boolean,
    notify_at_end boolean,
    reminded_at timestamp with time zone,
    CONSTRAINT status_page_incidents_check CHECK ((((maintenance_state IS NULL) = (start_date IS NULL)) AND ((start_date IS NULL) = (duration_minutes IS NULL)))),
    CONSTRAINT status_page_incidents_duration_minutes_check CHECK ((duration_minutes >= 1)),
    CONSTRAINT status_page_incidents_impact_check CHECK ((impact = ANY (ARRAY['MAJOR_OUTAGE'::text, 'PARTIAL_OUTAGE'::text, 'DEGRADED_PERFORMANCE'::text, 'NO_IMPACT'::text, 'MAINTENANCE'::text]))),
    CONSTRAINT status_page_incidents_maintenance_state_check CHECK ((maintenance_state = ANY (ARRAY['SCHEDULED'::text, 'IN_PROGRESS'::text, 'COMPLETED'::text])))
);

CREATE TABLE public.status_page_subscriber_components (
    org_id uuid NOT NULL,
    subscriber_id uuid NOT NULL,
    component_id uuid NOT NULL
);

CREATE TABLE public.status_page_subscribers (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    status_page_id uuid NOT NULL,
    email_address text NOT NULL,
    confirmed boolean DEFAULT false NOT NULL,
    confirmation_token_hash bytea,
    component_subscription_mode text DEFAULT 'ALL_COMPONENTS'::text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    confirmation_token_enc bytea,
    unsubscribe_token_hash bytea,
    unsubscribe_token_enc bytea,
    CONSTRAINT status_page_subscribers_component_subscription_mode_check CHECK ((component_subscription_mode = ANY (ARRAY['ALL_COMPONENTS'::text, 'SELECTED_COMPONENTS'::text])))
);

CREATE TABLE public.status_page_update_components (
    org_id uuid NOT NULL,
    update_id uuid NOT NULL,
    component_id uuid NOT NULL,
    old_status text,
    new_status text NOT NULL
);

CREATE TABLE public.status_pages (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    name text NOT NULL,
    subdomain text NOT NULL,
    custom_domain text,
    password_hash bytea,
    description text,
    hide_from_search_engines boolean DEFAULT false NOT NULL,
    allowed_ips text[],
    favicon_url text,
    logo_url text,
    dark_logo_url text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    custom_domain_token text,
    custom_domain_verified_at timestamp with time zone,
    custom_domain_checked_at timestamp with time zone,
    custom_domain_missing_since timestamp with time zone
);

CREATE TABLE public.unserved_regions (
    region text NOT NULL,
    since timestamp with time zone NOT NULL,
    alerted_at timestamp with time zone
);

CREATE TABLE public.users (
    id uuid NOT NULL,
    email text NOT NULL,
    first_name text,
    last_name text,
    image text,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE public.webhook_checks (
    org_id uuid NOT NULL,
    webhook_id uuid NOT NULL,
    check_id uuid NOT NULL
);

CREATE TABLE public.webhook_heartbeats (
    org_id uuid NOT NULL,
    webhook_id uuid NOT NULL,
    heartbeat_id uuid NOT NULL
);

CREATE TABLE public.webhook_status_pages (
    org_id uuid NOT NULL,
    webhook_id uuid NOT NULL,
    status_page_id uuid NOT NULL
);

CREATE TABLE public.webhooks (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    url text NOT NULL,
    description text,
    events text[] NOT NULL,
    secret_enc bytea NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT webhooks_events_check CHECK ((cardinality(events) >= 1))
);

ALTER TABLE ONLY public.check_results ATTACH PARTITION public.check_results_default DEFAULT;

ALTER TABLE ONLY public.ingest_dedupe ATTACH PARTITION public.ingest_dedupe_default DEFAULT;

ALTER TABLE ONLY public.access_tokens
    ADD CONSTRAINT access_tokens_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.access_tokens
    ADD CONSTRAINT access_tokens_secret_hash_key UNIQUE (secret_hash);

ALTER TABLE ONLY public.agent_canaries
    ADD CONSTRAINT agent_canaries_pkey PRIMARY KEY (agent_id);

ALTER TABLE ONLY public.agent_sessions
    ADD CONSTRAINT agent_sessions_pkey PRIMARY KEY (session_id);

ALTER TABLE ONLY public.agent_tokens
    ADD CONSTRAINT agent_tokens_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.agent_tokens
    ADD CONSTRAINT agent_tokens_secret_hash_key UNIQUE (secret_hash);

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_secret_hash_key UNIQUE (secret_hash);

ALTER TABLE ONLY public.audit_events
    ADD CONSTRAINT audit_events_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.certificate_alerts
    ADD CONSTRAINT certificate_alerts_pkey PRIMARY KEY (check_id, fingerprint, threshold_days);

ALTER TABLE ONLY public.check_badges
    ADD CONSTRAINT check_badges_pkey PRIMARY KEY (check_id);

ALTER TABLE ONLY public.check_badges
    ADD CONSTRAINT check_badges_token_hash_key UNIQUE (token_hash);

ALTER TABLE ONLY public.check_daily_stats
    ADD CONSTRAINT check_daily_stats_pkey PRIMARY KEY (check_id, day);

ALTER TABLE ONLY public.check_degradations
    ADD CONSTRAINT check_degradations_pkey PRIMARY KEY (check_id);

ALTER TABLE ONLY public.check_env_refs
    ADD CONSTRAINT check_env_refs_pkey PRIMARY KEY (check_id, env_var_id);

ALTER TABLE ONLY public.check_incidents
    ADD CONSTRAINT check_incidents_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.check_monthly_stats
    ADD CONSTRAINT check_monthly_stats_pkey PRIMARY KEY (check_id, month);

ALTER TABLE ONLY public.check_progress
    ADD CONSTRAINT check_progress_pkey PRIMARY KEY (check_id);

ALTER TABLE ONLY public.check_regions
    ADD CONSTRAINT check_regions_pkey PRIMARY KEY (check_id, region);

ALTER TABLE ONLY public.check_results
    ADD CONSTRAINT check_results_pkey PRIMARY KEY (check_id, checked_at, id);

ALTER TABLE ONLY public.check_results_default
    ADD CONSTRAINT check_results_default_pkey PRIMARY KEY (check_id, checked_at, id);

ALTER TABLE ONLY public.check_rollups
    ADD CONSTRAINT check_rollups_pkey PRIMARY KEY (check_id, bucket_start, region);

ALTER TABLE ONLY public.check_runs
    ADD CONSTRAINT check_runs_pkey PRIMARY KEY (check_id, job_id);

ALTER TABLE ONLY public.check_slowness
    ADD CONSTRAINT check_slowness_pkey PRIMARY KEY (check_id);

ALTER TABLE ONLY public.check_stats_folded
    ADD CONSTRAINT check_stats_folded_pkey PRIMARY KEY (month);

ALTER TABLE ONLY public.checks
    ADD CONSTRAINT checks_org_id_id_key UNIQUE (org_id, id);

ALTER TABLE ONLY public.checks
    ADD CONSTRAINT checks_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.console_sessions
    ADD CONSTRAINT console_sessions_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.console_sessions
    ADD CONSTRAINT console_sessions_secret_hash_key UNIQUE (secret_hash);

ALTER TABLE ONLY public.console_signin_codes
    ADD CONSTRAINT console_signin_codes_pkey PRIMARY KEY (code_hash);

ALTER TABLE ONLY public.deliveries
    ADD CONSTRAINT deliveries_event_id_channel_target_key UNIQUE (event_id, channel, target);

ALTER TABLE ONLY public.deliveries
    ADD CONSTRAINT deliveries_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.delivery_attempts
    ADD CONSTRAINT delivery_attempts_pkey PRIMARY KEY (delivery_id, number);

ALTER TABLE ONLY public.env_vars
    ADD CONSTRAINT env_vars_org_id_id_key UNIQUE (org_id, id);

ALTER TABLE ONLY public.env_vars
    ADD CONSTRAINT env_vars_org_id_project_id_name_key UNIQUE NULLS NOT DISTINCT (org_id, project_id, name);

ALTER TABLE ONLY public.env_vars
    ADD CONSTRAINT env_vars_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.heartbeats
    ADD CONSTRAINT heartbeats_org_id_id_key UNIQUE (org_id, id);

ALTER TABLE ONLY public.heartbeats
    ADD CONSTRAINT heartbeats_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.ingest_dedupe
    ADD CONSTRAINT ingest_dedupe_pkey PRIMARY KEY (job_id, region, attempt_number, is_final, scheduled_at);

ALTER TABLE ONLY public.ingest_dedupe_default
    ADD CONSTRAINT ingest_dedupe_default_pkey PRIMARY KEY (job_id, region, attempt_number, is_final, scheduled_at);

ALTER TABLE ONLY public.integration_status_pages
    ADD CONSTRAINT integration_status_pages_pkey PRIMARY KEY (integration_id, status_page_id);

ALTER TABLE ONLY public.integrations
    ADD CONSTRAINT integrations_org_id_id_key UNIQUE (org_id, id);

ALTER TABLE ONLY public.integrations
    ADD CONSTRAINT integrations_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.invitations
    ADD CONSTRAINT invitations_org_id_id_key UNIQUE (org_id, id);

ALTER TABLE ONLY public.invitations
    ADD CONSTRAINT invitations_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.maintenance_window_checks
    ADD CONSTRAINT maintenance_window_checks_pkey PRIMARY KEY (window_id, check_id);

ALTER TABLE ONLY public.maintenance_window_heartbeats
    ADD CONSTRAINT maintenance_window_heartbeats_pkey PRIMARY KEY (window_id, heartbeat_id);

ALTER TABLE ONLY public.maintenance_windows
    ADD CONSTRAINT maintenance_windows_org_id_id_key UNIQUE (org_id, id);

ALTER TABLE ONLY public.maintenance_windows
    ADD CONSTRAINT maintenance_windows_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.memberships
    ADD CONSTRAINT memberships_pkey PRIMARY KEY (org_id, user_id);

ALTER TABLE ONLY public.org_check_counts
    ADD CONSTRAINT org_check_counts_pkey PRIMARY KEY (org_id, shard);

ALTER TABLE ONLY public.organizations
    ADD CONSTRAINT organizations_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.outbox
    ADD CONSTRAINT outbox_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.projects
    ADD CONSTRAINT projects_org_id_id_key UNIQUE (org_id, id);

ALTER TABLE ONLY public.projects
    ADD CONSTRAINT projects_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.rate_limits
    ADD CONSTRAINT rate_limits_pkey PRIMARY KEY (key);

ALTER TABLE ONLY public.region_health
    ADD CONSTRAINT region_health_pkey PRIMARY KEY (region);

ALTER TABLE ONLY public.region_unhealthy_periods
    ADD CONSTRAINT region_unhealthy_periods_pkey PRIMARY KEY (region, started_at);

ALTER TABLE ONLY public.scheduler_progress
    ADD CONSTRAINT scheduler_progress_pkey PRIMARY KEY (singleton);

ALTER TABLE ONLY public.scheduler_shard_progress
    ADD CONSTRAINT scheduler_shard_progress_pkey PRIMARY KEY (shard);

ALTER TABLE ONLY public.secret_key_fingerprint
    ADD CONSTRAINT secret_key_fingerprint_pkey PRIMARY KEY (singleton);

ALTER TABLE ONLY public.skipped_runs
    ADD CONSTRAINT skipped_runs_pkey PRIMARY KEY (check_id, scheduled_at, region);

ALTER TABLE ONLY public.status_page_component_checks
    ADD CONSTRAINT status_page_component_checks_pkey PRIMARY KEY (component_id, check_id);

ALTER TABLE ONLY public.status_page_components
    ADD CONSTRAINT status_page_components_org_id_id_key UNIQUE (org_id, id);

ALTER TABLE ONLY public.status_page_components
    ADD CONSTRAINT status_page_components_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.status_page_groups
    ADD CONSTRAINT status_page_groups_org_id_id_key UNIQUE (org_id, id);

ALTER TABLE ONLY public.status_page_groups
    ADD CONSTRAINT status_page_groups_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.status_page_incident_components
    ADD CONSTRAINT status_page_incident_components_pkey PRIMARY KEY (incident_id, component_id);

ALTER TABLE ONLY public.status_page_incident_updates
    ADD CONSTRAINT status_page_incident_updates_org_id_id_key UNIQUE (org_id, id);

ALTER TABLE ONLY public.status_page_incident_updates
    ADD CONSTRAINT status_page_incident_updates_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.status_page_incidents
    ADD CONSTRAINT status_page_incidents_org_id_id_key UNIQUE (org_id, id);

ALTER TABLE ONLY public.status_page_incidents
    ADD CONSTRAINT status_page_incidents_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.status_page_subscriber_components
    ADD CONSTRAINT status_page_subscriber_components_pkey PRIMARY KEY (subscriber_id, component_id);

ALTER TABLE ONLY public.status_page_subscribers
    ADD CONSTRAINT status_page_subscribers_org_id_id_key UNIQUE (org_id, id);

ALTER TABLE ONLY public.status_page_subscribers
    ADD CONSTRAINT status_page_subscribers_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.status_page_update_components
    ADD CONSTRAINT status_page_update_components_pkey PRIMARY KEY (update_id, component_id);

ALTER TABLE ONLY public.status_pages
    ADD CONSTRAINT status_pages_org_id_id_key UNIQUE (org_id, id);

ALTER TABLE ONLY public.status_pages
    ADD CONSTRAINT status_pages_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.unserved_regions
    ADD CONSTRAINT unserved_regions_pkey PRIMARY KEY (region);

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_email_key UNIQUE (email);

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.webhook_checks
    ADD CONSTRAINT webhook_checks_pkey PRIMARY KEY (webhook_id, check_id);

ALTER TABLE ONLY public.webhook_heartbeats
    ADD CONSTRAINT webhook_heartbeats_pkey PRIMARY KEY (webhook_id, heartbeat_id);

ALTER TABLE ONLY public.webhook_status_pages
    ADD CONSTRAINT webhook_status_pages_pkey PRIMARY KEY (webhook_id, status_page_id);

ALTER TABLE ONLY public.webhooks
    ADD CONSTRAINT webhooks_org_id_id_key UNIQUE (org_id, id);

ALTER TABLE ONLY public.webhooks
    ADD CONSTRAINT webhooks_pkey PRIMARY KEY (id);

CREATE INDEX agent_canaries_received_at ON public.agent_canaries USING btree (received_at);

CREATE INDEX agent_sessions_replica ON public.agent_sessions USING btree (replica_id);

CREATE INDEX api_tokens_org ON public.api_tokens USING btree (org_id, created_at DESC, id DESC);

CREATE INDEX audit_events_org ON public.audit_events USING btree (org_id, created_at DESC, id DESC);

CREATE INDEX check_daily_stats_org_day ON public.check_daily_stats USING btree (org_id, day);

CREATE INDEX check_env_refs_var ON public.check_env_refs USING btree (env_var_id);

CREATE INDEX check_incidents_check ON public.check_incidents USING btree (check_id, started_at DESC, id DESC);

CREATE UNIQUE INDEX check_incidents_one_open ON public.check_incidents USING btree (check_id) WHERE (ended_at IS NULL);

CREATE INDEX check_incidents_org_open ON public.check_incidents USING btree (org_id, started_at DESC, id DESC) WHERE (ended_at IS NULL);

CREATE INDEX check_incidents_org_resolved ON public.check_incidents USING btree (org_id, started_at DESC, id DESC) WHERE (ended_at IS NOT NULL);

CREATE INDEX check_incidents_org_time ON public.check_incidents USING btree (org_id, started_at) INCLUDE (check_id, ended_at);

CREATE INDEX check_monthly_stats_org ON public.check_monthly_stats USING btree (org_id, month) INCLUDE (check_id);

CREATE INDEX check_rollups_bucket ON public.check_rollups USING btree (bucket_start);

CREATE INDEX check_runs_deadline ON public.check_runs USING btree (deadline);

CREATE INDEX checks_org ON public.checks USING btree (org_id, created_at DESC, id DESC);

CREATE INDEX checks_org_project ON public.checks USING btree (org_id, project_id, created_at DESC, id DESC);

CREATE INDEX console_sessions_expires_at ON public.console_sessions USING btree (expires_at);

CREATE INDEX console_signin_codes_expires_at ON public.console_signin_codes USING btree (expires_at);

CREATE INDEX deliveries_due ON public.deliveries USING btree (next_attempt_at) WHERE (status = 'PENDING'::text);

CREATE INDEX deliveries_integration ON public.deliveries USING btree (integration_id, created_at DESC, id DESC) WHERE (integration_id IS NOT NULL);

CREATE INDEX deliveries_order ON public.deliveries USING btree (resource_id, channel, target, event_at, event_id) WHERE ((status = 'PENDING'::text) AND (resource_id IS NOT NULL));

CREATE INDEX deliveries_webhook ON public.deliveries USING btree (webhook_id, created_at DESC, id DESC) WHERE (webhook_id IS NOT NULL);

CREATE INDEX env_vars_org ON public.env_vars USING btree (org_id, created_at DESC, id DESC);

CREATE INDEX heartbeats_monitored ON public.heartbeats USING btree (id) WHERE ((NOT paused) AND ((last_seen IS NOT NULL) OR (state <> 'PENDING'::text)));

CREATE INDEX heartbeats_org ON public.heartbeats USING btree (org_id, created_at DESC, id DESC);

CREATE INDEX heartbeats_org_down ON public.heartbeats USING btree (org_id, state_changed_at DESC, id DESC) WHERE (state = 'DOWN'::text);

CREATE INDEX heartbeats_org_project ON public.heartbeats USING btree (org_id, project_id, created_at DESC, id DESC);

CREATE INDEX integration_status_pages_page ON public.integration_status_pages USING btree (status_page_id);

CREATE INDEX integrations_org ON public.integrations USING btree (org_id, created_at DESC, id DESC);

CREATE INDEX invitations_org ON public.invitations USING btree (org_id, created_at DESC, id DESC);

CREATE UNIQUE INDEX invitations_pending_email ON public.invitations USING btree (org_id, lower(email)) WHERE (accepted_at IS NULL);

CREATE UNIQUE INDEX invitations_token ON public.invitations USING btree (token_hash);

CREATE INDEX maintenance_window_checks_check ON public.maintenance_window_checks USING btree (check_id);

CREATE INDEX maintenance_window_heartbeats_heartbeat ON public.maintenance_window_heartbeats USING btree (heartbeat_id);

CREATE INDEX maintenance_windows_org ON public.maintenance_windows USING btree (org_id, created_at DESC, id DESC);

CREATE INDEX memberships_user ON public.memberships USING btree (user_id);

CREATE INDEX outbox_due ON public.outbox USING btree (next_attempt_at) WHERE (delivered_at IS NULL);

CREATE INDEX outbox_order ON public.outbox USING btree (check_id, created_at, id) WHERE ((delivered_at IS NULL) AND (check_id IS NOT NULL));

CREATE INDEX outbox_org ON public.outbox USING btree (org_id, created_at DESC);

CREATE INDEX projects_org ON public.projects USING btree (org_id, created_at DESC, id DESC);

CREATE INDEX skipped_runs_scheduled_at ON public.skipped_runs USING btree (scheduled_at);

CREATE INDEX status_page_component_checks_check ON public.status_page_component_checks USING btree (check_id);

CREATE INDEX status_page_components_heartbeat ON public.status_page_components USING btree (heartbeat_id) WHERE (heartbeat_id IS NOT NULL);

CREATE INDEX status_page_components_page ON public.status_page_components USING btree (status_page_id);

CREATE INDEX status_page_groups_page ON public.status_page_groups USING btree (status_page_id);

CREATE INDEX status_page_incident_components_component ON public.status_page_incident_components USING btree (component_id);

CREATE INDEX status_page_incident_updates_incident ON public.status_page_incident_updates USING btree (incident_id, date_happened DESC, created_at DESC);

CREATE INDEX status_page_incidents_due ON public.status_page_incidents USING btree (start_date) WHERE (maintenance_state = ANY (ARRAY['SCHEDULED'::text, 'IN_PROGRESS'::text]));

CREATE INDEX status_page_incidents_page ON public.status_page_incidents USING btree (status_page_id, created_at DESC, id DESC);

CREATE UNIQUE INDEX status_page_subscribers_email ON public.status_page_subscribers USING btree (status_page_id, lower(email_address));

CREATE UNIQUE INDEX status_page_subscribers_token ON public.status_page_subscribers USING btree (confirmation_token_hash) WHERE (confirmation_token_hash IS NOT NULL);

CREATE UNIQUE INDEX status_page_subscribers_unsubscribe ON public.status_page_subscribers USING btree (unsubscribe_token_hash) WHERE (unsubscribe_token_hash IS NOT NULL);

CREATE INDEX status_pages_custom_domain_claims ON public.status_pages USING btree (custom_domain) WHERE (custom_domain IS NOT NULL);

CREATE UNIQUE INDEX status_pages_custom_domain_verified ON public.status_pages USING btree (custom_domain) WHERE ((custom_domain IS NOT NULL) AND (custom_domain_verified_at IS NOT NULL));

CREATE INDEX status_pages_org ON public.status_pages USING btree (org_id, created_at DESC, id DESC);

CREATE UNIQUE INDEX status_pages_subdomain ON public.status_pages USING btree (lower(subdomain));

CREATE INDEX webhook_checks_check ON public.webhook_checks USING btree (check_id);

CREATE INDEX webhook_heartbeats_heartbeat ON public.webhook_heartbeats USING btree (heartbeat_id);

CREATE INDEX webhook_status_pages_page ON public.webhook_status_pages USING btree (status_page_id);

CREATE INDEX webhooks_org ON public.webhooks USING btree (org_id, created_at DESC, id DESC);

ALTER INDEX public.check_results_pkey ATTACH PARTITION public.check_results_default_pkey;

ALTER INDEX public.ingest_dedupe_pkey ATTACH PARTITION public.ingest_dedupe_default_pkey;

CREATE TRIGGER check_progress_create AFTER INSERT ON public.checks REFERENCING NEW TABLE AS new_checks FOR EACH STATEMENT EXECUTE FUNCTION public.check_progress_create();

CREATE CONSTRAINT TRIGGER checks_count_delete AFTER DELETE ON public.checks DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.count_org_checks();

CREATE CONSTRAINT TRIGGER checks_count_insert AFTER INSERT ON public.checks DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.count_org_checks();

CREATE TRIGGER outbox_notify AFTER INSERT ON public.outbox FOR EACH STATEMENT EXECUTE FUNCTION public.outbox_notify();

ALTER TABLE ONLY public.access_tokens
    ADD CONSTRAINT access_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.audit_events
    ADD CONSTRAINT audit_events_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.certificate_alerts
    ADD CONSTRAINT certificate_alerts_check_id_fkey FOREIGN KEY (check_id) REFERENCES public.checks(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.check_badges
    ADD CONSTRAINT check_badges_org_id_check_id_fkey FOREIGN KEY (org_id, check_id) REFERENCES public.checks(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.check_daily_stats
    ADD CONSTRAINT check_daily_stats_org_id_check_id_fkey FOREIGN KEY (org_id, check_id) REFERENCES public.checks(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.check_degradations
    ADD CONSTRAINT check_degradations_org_id_check_id_fkey FOREIGN KEY (org_id, check_id) REFERENCES public.checks(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.check_env_refs
    ADD CONSTRAINT check_env_refs_org_id_check_id_fkey FOREIGN KEY (org_id, check_id) REFERENCES public.checks(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.check_env_refs
    ADD CONSTRAINT check_env_refs_org_id_env_var_id_fkey FOREIGN KEY (org_id, env_var_id) REFERENCES public.env_vars(org_id, id) ON DELETE RESTRICT;

ALTER TABLE ONLY public.check_incidents
    ADD CONSTRAINT check_incidents_org_id_check_id_fkey FOREIGN KEY (org_id, check_id) REFERENCES public.checks(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.check_monthly_stats
    ADD CONSTRAINT check_monthly_stats_org_id_check_id_fkey FOREIGN KEY (org_id, check_id) REFERENCES public.checks(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.check_progress
    ADD CONSTRAINT check_progress_check_id_fkey FOREIGN KEY (check_id) REFERENCES public.checks(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.check_regions
    ADD CONSTRAINT check_regions_org_id_check_id_fkey FOREIGN KEY (org_id, check_id) REFERENCES public.checks(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.check_rollups
    ADD CONSTRAINT check_rollups_check_id_fkey FOREIGN KEY (check_id) REFERENCES public.checks(id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY public.check_runs
    ADD CONSTRAINT check_runs_org_id_check_id_fkey FOREIGN KEY (org_id, check_id) REFERENCES public.checks(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.check_slowness
    ADD CONSTRAINT check_slowness_org_id_check_id_fkey FOREIGN KEY (org_id, check_id) REFERENCES public.checks(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.checks
    ADD CONSTRAINT checks_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.checks
    ADD CONSTRAINT checks_org_id_project_id_fkey FOREIGN KEY (org_id, project_id) REFERENCES public.projects(org_id, id);

ALTER TABLE ONLY public.console_sessions
    ADD CONSTRAINT console_sessions_minted_token_id_fkey FOREIGN KEY (minted_token_id) REFERENCES public.access_tokens(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.console_sessions
    ADD CONSTRAINT console_sessions_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.console_signin_codes
    ADD CONSTRAINT console_signin_codes_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.deliveries
    ADD CONSTRAINT deliveries_integration_fk FOREIGN KEY (org_id, integration_id) REFERENCES public.integrations(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.deliveries
    ADD CONSTRAINT deliveries_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.deliveries
    ADD CONSTRAINT deliveries_org_id_webhook_id_fkey FOREIGN KEY (org_id, webhook_id) REFERENCES public.webhooks(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.delivery_attempts
    ADD CONSTRAINT delivery_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES public.deliveries(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.env_vars
    ADD CONSTRAINT env_vars_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.env_vars
    ADD CONSTRAINT env_vars_org_id_project_id_fkey FOREIGN KEY (org_id, project_id) REFERENCES public.projects(org_id, id);

ALTER TABLE ONLY public.heartbeats
    ADD CONSTRAINT heartbeats_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.heartbeats
    ADD CONSTRAINT heartbeats_org_id_project_id_fkey FOREIGN KEY (org_id, project_id) REFERENCES public.projects(org_id, id);

ALTER TABLE ONLY public.integration_status_pages
    ADD CONSTRAINT integration_status_pages_org_id_integration_id_fkey FOREIGN KEY (org_id, integration_id) REFERENCES public.integrations(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.integrations
    ADD CONSTRAINT integrations_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.invitations
    ADD CONSTRAINT invitations_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.maintenance_window_checks
    ADD CONSTRAINT maintenance_window_checks_org_id_check_id_fkey FOREIGN KEY (org_id, check_id) REFERENCES public.checks(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.maintenance_window_checks
    ADD CONSTRAINT maintenance_window_checks_org_id_window_id_fkey FOREIGN KEY (org_id, window_id) REFERENCES public.maintenance_windows(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.maintenance_window_heartbeats
    ADD CONSTRAINT maintenance_window_heartbeats_org_id_heartbeat_id_fkey FOREIGN KEY (org_id, heartbeat_id) REFERENCES public.heartbeats(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.maintenance_window_heartbeats
    ADD CONSTRAINT maintenance_window_heartbeats_org_id_window_id_fkey FOREIGN KEY (org_id, window_id) REFERENCES public.maintenance_windows(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.maintenance_windows
    ADD CONSTRAINT maintenance_windows_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.memberships
    ADD CONSTRAINT memberships_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.memberships
    ADD CONSTRAINT memberships_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.org_check_counts
    ADD CONSTRAINT org_check_counts_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.outbox
    ADD CONSTRAINT outbox_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.projects
    ADD CONSTRAINT projects_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.status_page_component_checks
    ADD CONSTRAINT status_page_component_checks_org_id_check_id_fkey FOREIGN KEY (org_id, check_id) REFERENCES public.checks(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.status_page_component_checks
    ADD CONSTRAINT status_page_component_checks_org_id_component_id_fkey FOREIGN KEY (org_id, component_id) REFERENCES public.status_page_components(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.status_page_components
    ADD CONSTRAINT status_page_components_org_id_group_id_fkey FOREIGN KEY (org_id, group_id) REFERENCES public.status_page_groups(org_id, id) ON DELETE SET NULL (group_id);

ALTER TABLE ONLY public.status_page_components
    ADD CONSTRAINT status_page_components_org_id_status_page_id_fkey FOREIGN KEY (org_id, status_page_id) REFERENCES public.status_pages(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.status_page_groups
    ADD CONSTRAINT status_page_groups_org_id_status_page_id_fkey FOREIGN KEY (org_id, status_page_id) REFERENCES public.status_pages(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.status_page_incident_components
    ADD CONSTRAINT status_page_incident_components_org_id_component_id_fkey FOREIGN KEY (org_id, component_id) REFERENCES public.status_page_components(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.status_page_incident_components
    ADD CONSTRAINT status_page_incident_components_org_id_incident_id_fkey FOREIGN KEY (org_id, incident_id) REFERENCES public.status_page_incidents(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.status_page_incident_updates
    ADD CONSTRAINT status_page_incident_updates_org_id_incident_id_fkey FOREIGN KEY (org_id, incident_id) REFERENCES public.status_page_incidents(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.status_page_incidents
    ADD CONSTRAINT status_page_incidents_org_id_status_page_id_fkey FOREIGN KEY (org_id, status_page_id) REFERENCES public.status_pages(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.status_page_subscriber_components
    ADD CONSTRAINT status_page_subscriber_components_org_id_component_id_fkey FOREIGN KEY (org_id, component_id) REFERENCES public.status_page_components(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.status_page_subscriber_components
    ADD CONSTRAINT status_page_subscriber_components_org_id_subscriber_id_fkey FOREIGN KEY (org_id, subscriber_id) REFERENCES public.status_page_subscribers(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.status_page_subscribers
    ADD CONSTRAINT status_page_subscribers_org_id_status_page_id_fkey FOREIGN KEY (org_id, status_page_id) REFERENCES public.status_pages(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.status_page_update_components
    ADD CONSTRAINT status_page_update_components_org_id_component_id_fkey FOREIGN KEY (org_id, component_id) REFERENCES public.status_page_components(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.status_page_update_components
    ADD CONSTRAINT status_page_update_components_org_id_update_id_fkey FOREIGN KEY (org_id, update_id) REFERENCES public.status_page_incident_updates(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.status_pages
    ADD CONSTRAINT status_pages_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organizations(id) ON DELETE CASCADE;

ALTER TABLE ONLY public.webhook_checks
    ADD CONSTRAINT webhook_checks_org_id_check_id_fkey FOREIGN KEY (org_id, check_id) REFERENCES public.checks(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.webhook_checks
    ADD CONSTRAINT webhook_checks_org_id_webhook_id_fkey FOREIGN KEY (org_id, webhook_id) REFERENCES public.webhooks(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.webhook_heartbeats
    ADD CONSTRAINT webhook_heartbeats_org_id_webhook_id_fkey FOREIGN KEY (org_id, webhook_id) REFERENCES public.webhooks(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.webhook_status_pages
    ADD CONSTRAINT webhook_status_pages_org_id_webhook_id_fkey FOREIGN KEY (org_id, webhook_id) REFERENCES public.webhooks(org_id, id) ON DELETE CASCADE;

ALTER TABLE ONLY public.webhooks
    ADD CONSTRAINT webhooks_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.organizations(id) ON DELETE CASCADE;