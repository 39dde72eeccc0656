package store_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/check/checktest"
)

// legacyFields are the API names of the configuration the checks table had as columns before
// migration 9.
var legacyFields = map[string]bool{
	"name": true, "test_interval": true, "test_regions": true, "alert_priority": true,
	"confirmation_period_seconds": true, "recovery_period_seconds": true, "reminder_alert_interval_minutes": true,
	"timeout": true, "user_alerts": true, "slack_alerts": true, "discord_alerts": true, "incident_io_alerts": true,
	"microsoft_teams_alerts": true, "telegram_alerts": true, "pushover_alerts": true, "webhook_alerts": true,
	"oncall_alerts": true, "assertions": true, "version": true, "url": true, "text_to_search_for": true,
	"headers": true, "method": true, "body": true, "follow_redirects": true, "verify_ssl": true,
	"auth_username": true, "auth_password": true, "script": true, "dns_domain": true, "dns_record_type": true,
	"dns_resolver": true, "dns_protocol": true, "tcp_hostname": true, "tcp_port": true, "tcp_ip_family": true,
	"tcp_data": true, "tcp_should_fail": true,
}

// newerThanTheirName are fields whose API name was a legacy column of another kind: TCP
// checks' verify_ssl came with tcp_tls, long after migration 9.
var newerThanTheirName = map[string]bool{"TCP.VerifySSL": true}

// isLegacy reports whether f was a column before migration 9.
func isLegacy(f checktest.Field) bool { return legacyFields[f.Name] && !newerThanTheirName[f.Path] }

// legacyKinds are the kinds the column-per-field layout knew; the extension kinds came after
// migration 9.
var legacyKinds = []check.Kind{check.Uptime, check.Browser, check.DNS, check.TCP}

// TestCheckSpecMigration: checks written in the column-per-field layout of migrations 1 to 7
// read the same after migration 9 moved their configuration into the spec document, and a
// column left NULL reads as the kind's default, as it did before.
func TestCheckSpecMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, dbURL := legacyDatabase(t)
	kr := storetest.NewKeyring(t)
	org := uuid.Must(uuid.NewV7())
	legacyExec(t, pool, `INSERT INTO organizations (id, name) VALUES ($1, 'o')`, org)

	want := map[uuid.UUID]check.Spec{}
	for _, k := range legacyKinds {
		sp := check.Example(k)
		id := uuid.Must(uuid.NewV7())
		want[id] = sp
		alerts, _ := json.Marshal(sp.Alerts)
		assertions, _ := json.Marshal(sp.Assertions)
		legacyExec(t, pool, `INSERT INTO checks (id, org_id, kind, name, test_interval, timeout_ms, test_regions, alert_priority,
				confirmation_period_seconds, recovery_period_seconds, reminder_alert_interval_minutes, alerts, version, assertions)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
			id, org, string(k), sp.Name, sp.TestInterval, sp.TimeoutMs, sp.TestRegions, sp.AlertPriority,
			sp.ConfirmationPeriodSeconds, sp.RecoveryPeriodSeconds, sp.ReminderAlertIntervalMinutes, alerts, sp.Version, assertions)
		switch {
		case sp.HTTP != nil:
			h := sp.HTTP
			headers, _ := json.Marshal(h.Headers)
			sealed, err := kr.Seal([]byte(*h.AuthPassword))
			if err != nil {
				t.Fatal(err)
			}
			legacyExec(t, pool, `UPDATE checks SET url = $2, method = $3, headers = $4, body = $5, text_to_search_for = $6,
				verify_ssl = $7, follow_redirects = $8, auth_username = $9, auth_password_enc = $10, script = $11 WHERE id = $1`,
				id, h.URL, h.Method, headers, h.Body, h.TextToSearchFor, h.VerifySSL, h.FollowRedirects, h.AuthUsername, sealed, h.Script)
		case sp.DNS != nil:
			d := sp.DNS
			legacyExec(t, pool, `UPDATE checks SET dns_domain = $2, dns_record_type = $3, dns_resolver = $4, dns_protocol = $5 WHERE id = $1`,
				id, d.Domain, d.RecordType, d.Resolver, d.Protocol)
		case sp.TCP != nil:
			c := sp.TCP
			legacyExec(t, pool, `UPDATE checks SET tcp_hostname = $2, tcp_port = $3, tcp_ip_family = $4, tcp_data = $5, tcp_should_fail = $6 WHERE id = $1`,
				id, c.Hostname, c.Port, c.IPFamily, c.Data, c.ShouldFail)
		}
	}
	// Rows written around the API with NULL where a value has a default.
	for _, k := range legacyKinds {
		id := uuid.Must(uuid.NewV7())
		sp := check.Defaults(k)
		sp.Name, sp.TimeoutMs, sp.ReminderAlertIntervalMinutes, sp.Version = "sparse", nil, nil, nil
		want[id] = sp
		legacyExec(t, pool, `INSERT INTO checks (id, org_id, kind, name, test_interval, test_regions, alert_priority,
				confirmation_period_seconds, recovery_period_seconds)
			VALUES ($1, $2, $3, 'sparse', $4, $5, $6, $7, $8)`,
			id, org, string(k), sp.TestInterval, sp.TestRegions, sp.AlertPriority, sp.ConfirmationPeriodSeconds, sp.RecoveryPeriodSeconds)
	}

	if err := store.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, dbURL, kr)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for id, sp := range want {
		got, err := st.GetCheck(ctx, org, id, true)
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.Kind != sp.Kind {
			t.Errorf("%s %s: kind %s", sp.Kind, sp.Name, got.Spec.Kind)
		}
		// Fields added to the model after migration 9 read as their default.
		defaults := map[string]checktest.Field{}
		for _, f := range checktest.Fields(check.Defaults(sp.Kind)) {
			defaults[f.Path] = f
		}
		for _, d := range checktest.Diff(sp, got.Spec, isLegacy, false) {
			t.Errorf("%s %q after migration 9: %s", sp.Kind, sp.Name, d)
		}
		for _, d := range checktest.Diff(sp, got.Spec, func(f checktest.Field) bool { return !isLegacy(f) }, false) {
			if def, ok := defaults[d.Path]; !ok || !reflect.DeepEqual(d.Got, def.Value()) {
				t.Errorf("%s %q after migration 9: a field newer than the migration: %s, want its default", sp.Kind, sp.Name, d)
			}
		}
		var url *string
		if err := pool.QueryRow(ctx, `SELECT url FROM checks WHERE id = $1`, id).Scan(&url); err != nil {
			t.Fatal(err)
		}
		var wantURL *string
		if sp.HTTP != nil {
			wantURL = sp.HTTP.URL
		}
		if (url == nil) != (wantURL == nil) || url != nil && *url != *wantURL {
			t.Errorf("%s %q: the url column is %v", sp.Kind, sp.Name, url)
		}
	}
	var leaked bool
	if err := pool.QueryRow(ctx, `SELECT bool_or(spec::text LIKE '%hunter2%') FROM checks`).Scan(&leaked); err != nil || leaked {
		t.Errorf("the password is in a spec document (%v)", err)
	}
}
