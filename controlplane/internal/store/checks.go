package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/pkg/check"
)

// Check is a stored check: its configuration (Spec), where it belongs, and the state the
// status machine and the scheduler keep. The Basic-auth password in Spec is plaintext here; it
// is sealed in auth_password_enc at rest.
type Check struct {
	ID         uuid.UUID
	OrgID      uuid.UUID
	ProjectID  *uuid.UUID // nil: Unassigned
	Spec       check.Spec
	State      string // PENDING, UP, VERIFYING, DOWN or RECOVERING (the status machine's own state)
	Paused     bool
	Muted      bool
	LastQueued *time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
	// InMaintenance: an active, enabled maintenance window lists the check (set by GetCheck
	// and UpdateCheck, as of the store's clock; false elsewhere).
	InMaintenance bool
}

// checkColumns lists what scanCheck reads. Without withScript the script is not loaded (it can
// be large and only GET retrieve returns it); scanned as NULL instead.
func checkColumns(withScript bool) string {
	script := "NULL::text"
	if withScript {
		script = "script"
	}
	return `id, org_id, project_id, kind, name, state, paused, muted, last_queued,
		test_interval, timeout_ms, test_regions, alert_priority, confirmation_period_seconds,
		recovery_period_seconds, reminder_alert_interval_minutes, alerts, url, version,
		method, headers, body, text_to_search_for, verify_ssl, follow_redirects, auth_username,
		auth_password_enc, ` + script + `, dns_domain, dns_record_type, dns_resolver, dns_protocol,
		tcp_hostname, tcp_port, tcp_ip_family, tcp_data, tcp_should_fail, assertions, created_at, updated_at`
}

// checkRow is one row of checks as columns, between the database and a Check.
type checkRow struct {
	kind                                                 string
	timeoutMs, reminder, tcpPort                         *int
	alerts, headers, assertions                          []byte
	url, version, method, body, text, username           *string
	passwordEnc                                          []byte
	script, dnsDomain, dnsType, dnsResolver, dnsProtocol *string
	tcpHostname, tcpFamily, tcpData                      *string
	verifySSL, followRedirects, tcpShouldFail            *bool
}

// scanCheck reads checkColumns into a Check, opening the sealed password.
func (s *Store) scanCheck(row pgx.Row) (Check, error) {
	var c Check
	var r checkRow
	sp := &c.Spec
	err := row.Scan(&c.ID, &c.OrgID, &c.ProjectID, &r.kind, &sp.Name, &c.State, &c.Paused, &c.Muted, &c.LastQueued,
		&sp.TestInterval, &r.timeoutMs, &sp.TestRegions, &sp.AlertPriority, &sp.ConfirmationPeriodSeconds,
		&sp.RecoveryPeriodSeconds, &r.reminder, &r.alerts, &r.url, &r.version,
		&r.method, &r.headers, &r.body, &r.text, &r.verifySSL, &r.followRedirects, &r.username,
		&r.passwordEnc, &r.script, &r.dnsDomain, &r.dnsType, &r.dnsResolver, &r.dnsProtocol,
		&r.tcpHostname, &r.tcpPort, &r.tcpFamily, &r.tcpData, &r.tcpShouldFail, &r.assertions, &c.CreatedAt, &c.UpdatedAt)
	if err != nil {
		return c, err
	}
	sp.Kind = check.Kind(r.kind)
	sp.TimeoutMs, sp.ReminderAlertIntervalMinutes, sp.Version = r.timeoutMs, r.reminder, r.version
	if err := json.Unmarshal(r.alerts, &sp.Alerts); err != nil {
		return c, fmt.Errorf("check %s: decode alerts: %w", c.ID, err)
	}
	sp.Alerts.Normalize()
	if r.assertions != nil {
		if err := json.Unmarshal(r.assertions, &sp.Assertions); err != nil {
			return c, fmt.Errorf("check %s: decode assertions: %w", c.ID, err)
		}
	}
	switch sp.Kind {
	case check.Uptime, check.Browser:
		h := &check.HTTPSpec{URL: r.url, Method: colString(r.method), Body: r.body, TextToSearchFor: r.text,
			VerifySSL: colBool(r.verifySSL, true), FollowRedirects: colBool(r.followRedirects, true),
			AuthUsername: r.username, Script: r.script}
		if r.headers != nil {
			if err := json.Unmarshal(r.headers, &h.Headers); err != nil {
				return c, fmt.Errorf("check %s: decode headers: %w", c.ID, err)
			}
		}
		if r.passwordEnc != nil {
			pt, err := s.sealer.Open(r.passwordEnc)
			if err != nil {
				return c, fmt.Errorf("check %s: open auth password: %w", c.ID, err)
			}
			p := string(pt)
			h.AuthPassword = &p
		}
		sp.HTTP = h
	case check.DNS:
		sp.DNS = &check.DNSSpec{Domain: colString(r.dnsDomain), RecordType: colString(r.dnsType), Resolver: r.dnsResolver, Protocol: colString(r.dnsProtocol)}
	case check.TCP:
		sp.TCP = &check.TCPSpec{Hostname: colString(r.tcpHostname), IPFamily: colString(r.tcpFamily), Data: r.tcpData, ShouldFail: colBool(r.tcpShouldFail, false)}
		if r.tcpPort != nil {
			sp.TCP.Port = *r.tcpPort
		}
	}
	return c, nil
}

// configArgs are the configuration columns of sp, in the order of checkConfigColumns, with the
// password sealed.
const checkConfigColumns = `kind, name, test_interval, timeout_ms, test_regions, alert_priority,
	confirmation_period_seconds, recovery_period_seconds, reminder_alert_interval_minutes, alerts, url,
	version, method, headers, body, text_to_search_for, verify_ssl, follow_redirects, auth_username,
	auth_password_enc, script, dns_domain, dns_record_type, dns_resolver, dns_protocol, tcp_hostname,
	tcp_port, tcp_ip_family, tcp_data, tcp_should_fail, assertions`

const checkConfigCount = 31

func (s *Store) configArgs(sp check.Spec) ([]any, error) {
	var r checkRow
	alerts := sp.Alerts
	alerts.Normalize()
	var err error
	if r.alerts, err = json.Marshal(alerts); err != nil {
		return nil, err
	}
	if sp.Assertions != nil {
		if r.assertions, err = json.Marshal(sp.Assertions); err != nil {
			return nil, err
		}
	}
	if h := sp.HTTP; h != nil {
		r.url, r.method, r.body, r.text, r.username, r.script = h.URL, &h.Method, h.Body, h.TextToSearchFor, h.AuthUsername, h.Script
		r.verifySSL, r.followRedirects = &h.VerifySSL, &h.FollowRedirects
		if h.Headers != nil {
			if r.headers, err = json.Marshal(h.Headers); err != nil {
				return nil, err
			}
		}
		if h.AuthPassword != nil {
			if r.passwordEnc, err = s.sealer.Seal([]byte(*h.AuthPassword)); err != nil {
				return nil, fmt.Errorf("seal auth password: %w", err)
			}
		}
	}
	if d := sp.DNS; d != nil {
		r.dnsDomain, r.dnsType, r.dnsResolver, r.dnsProtocol = &d.Domain, &d.RecordType, d.Resolver, &d.Protocol
	}
	if t := sp.TCP; t != nil {
		r.tcpHostname, r.tcpPort, r.tcpFamily, r.tcpData, r.tcpShouldFail = &t.Hostname, &t.Port, &t.IPFamily, t.Data, &t.ShouldFail
	}
	return []any{string(sp.Kind), sp.Name, sp.TestInterval, sp.TimeoutMs, sp.TestRegions, sp.AlertPriority,
		sp.ConfirmationPeriodSeconds, sp.RecoveryPeriodSeconds, sp.ReminderAlertIntervalMinutes, r.alerts, r.url,
		sp.Version, r.method, nilIfEmptyJSON(r.headers), r.body, r.text, r.verifySSL, r.followRedirects, r.username,
		r.passwordEnc, r.script, r.dnsDomain, r.dnsType, r.dnsResolver, r.dnsProtocol, r.tcpHostname,
		r.tcpPort, r.tcpFamily, r.tcpData, r.tcpShouldFail, nilIfEmptyJSON(r.assertions)}, nil
}

// nilIfEmptyJSON passes a JSON document to a jsonb parameter, or SQL NULL for none.
func nilIfEmptyJSON(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// CreateCheck stores a new check in projectID (nil: Unassigned), binds its {{NAME}}
// references in that scope, and audits it, in one transaction. A project the organization
// does not have is ErrProjectNotFound; an unknown variable name is a *ValidationError.
func (s *Store) CreateCheck(ctx context.Context, actor Actor, orgID uuid.UUID, projectID *uuid.UUID, sp check.Spec) (Check, error) {
	now := s.now()
	c := Check{ID: uuid.Must(uuid.NewV7()), OrgID: orgID, ProjectID: projectID, Spec: sp, State: "PENDING", CreatedAt: now, UpdatedAt: now}
	args, err := s.configArgs(sp)
	if err != nil {
		return c, err
	}
	placeholders := make([]string, checkConfigCount)
	for i := range placeholders {
		placeholders[i] = fmt.Sprintf("$%d", i+6)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockProjectForReference(ctx, tx, orgID, projectID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO checks (id, org_id, project_id, created_at, updated_at, `+checkConfigColumns+`)
			VALUES ($1, $2, $3, $4, $5, `+strings.Join(placeholders, ", ")+`)`,
			append([]any{c.ID, orgID, projectID, now, now}, args...)...); err != nil {
			return fmt.Errorf("insert check: %w", err)
		}
		if err := bindCheckVars(ctx, tx, orgID, c.ID, projectID, varRefs(sp)); err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "created", AuditableType: "Check",
			AuditableID: c.ID.String(), AuditableDisplayName: sp.Name, Metadata: map[string]any{"check_type": string(sp.Kind)}})
	})
	return c, err
}

// GetCheck returns one check of the organization (ErrNotFound when missing): one primary-key
// lookup. withScript loads the browser script.
func (s *Store) GetCheck(ctx context.Context, orgID, id uuid.UUID, withScript bool) (Check, error) {
	var windows []byte
	row := s.pool.QueryRow(ctx, `SELECT `+checkColumns(withScript)+`, `+checkWindowsColumn+` FROM checks WHERE org_id = $1 AND id = $2`, orgID, id)
	c, err := s.scanCheck(rowWithExtra{row, &windows})
	if err != nil {
		return c, translate(err)
	}
	c.InMaintenance, err = windowsActive(windows, s.now())
	return c, err
}

// CheckKind returns the kind of one check of the organization (ErrNotFound when missing).
func (s *Store) CheckKind(ctx context.Context, orgID, id uuid.UUID) (check.Kind, error) {
	var k string
	err := s.pool.QueryRow(ctx, `SELECT kind FROM checks WHERE org_id = $1 AND id = $2`, orgID, id).Scan(&k)
	return check.Kind(k), translate(err)
}

// UpdateCheck changes one check in one transaction: it locks the stored check, lets change
// edit a copy of it (the script loaded), and writes the result back. kind, when not empty,
// makes a check of another kind ErrNotFound (typed routes). An error from change aborts the
// update and is returned as is.
//
// A changed ProjectID is a move with the rules of MoveCheck (ErrProjectNotFound, the
// project_move_variable_conflict ConflictError, a "moved" audit event); then the references of
// the new configuration are bound in the check's (new) scope, where an unknown name is a
// *ValidationError. The update is audited as "updated".
func (s *Store) UpdateCheck(ctx context.Context, actor Actor, orgID, id uuid.UUID, kind check.Kind, change func(*Check) error) (Check, error) {
	var out Check
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		cur, err := s.scanCheck(tx.QueryRow(ctx, `SELECT `+checkColumns(true)+` FROM checks WHERE org_id = $1 AND id = $2 FOR UPDATE`, orgID, id))
		if err != nil {
			return err
		}
		if kind != "" && cur.Spec.Kind != kind {
			return ErrNotFound
		}
		next := cur
		if err := change(&next); err != nil {
			return err
		}
		if !sameScope(cur.ProjectID, next.ProjectID) {
			// Only variables the new configuration still references must follow the check:
			// forget the others first, since the move judges the recorded references.
			if err := keepVarRefs(ctx, tx, orgID, id, varRefs(next.Spec)); err != nil {
				return err
			}
			if _, err := s.moveCheckTx(ctx, tx, actor, orgID, id, next.ProjectID); err != nil {
				return err
			}
		}
		args, err := s.configArgs(next.Spec)
		if err != nil {
			return err
		}
		sets := make([]string, 0, checkConfigCount)
		for i, col := range strings.Split(checkConfigColumns, ",") {
			sets = append(sets, fmt.Sprintf("%s = $%d", strings.TrimSpace(col), i+6))
		}
		next.UpdatedAt = s.now()
		tag, err := tx.Exec(ctx, `UPDATE checks SET paused = $3, muted = $4, updated_at = $5, `+strings.Join(sets, ", ")+`
			WHERE org_id = $1 AND id = $2`, append([]any{orgID, id, next.Paused, next.Muted, next.UpdatedAt}, args...)...)
		if err != nil {
			return fmt.Errorf("update check: %w", err)
		}
		if tag.RowsAffected() != 1 {
			return ErrNotFound
		}
		if err := bindCheckVars(ctx, tx, orgID, id, next.ProjectID, varRefs(next.Spec)); err != nil {
			return err
		}
		inWindow, err := inMaintenance(ctx, tx, "checks", []uuid.UUID{id}, next.UpdatedAt)
		if err != nil {
			return err
		}
		next.InMaintenance = inWindow[id]
		out = next
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "updated", AuditableType: "Check",
			AuditableID: id.String(), AuditableDisplayName: next.Spec.Name, Metadata: map[string]any{"check_type": string(next.Spec.Kind)}})
	})
	return out, err
}

// DeleteCheck deletes one check (its variable references and incidents go with it; its results
// stay until retention drops their partition) and audits it. kind, when not empty, makes a
// check of another kind ErrNotFound.
func (s *Store) DeleteCheck(ctx context.Context, actor Actor, orgID, id uuid.UUID, kind check.Kind) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var name, k string
		err := tx.QueryRow(ctx, `DELETE FROM checks WHERE org_id = $1 AND id = $2 AND ($3 = '' OR kind = $3) RETURNING name, kind`,
			orgID, id, string(kind)).Scan(&name, &k)
		if err != nil {
			return err
		}
		return writeAudit(ctx, tx, orgID, actor, AuditEvent{Action: "deleted", AuditableType: "Check",
			AuditableID: id.String(), AuditableDisplayName: name, Metadata: map[string]any{"check_type": k}})
	})
}

// CheckFilter narrows ListChecks.
type CheckFilter struct {
	ProjectID  *uuid.UUID // only this project's checks (ErrProjectNotFound when it does not exist)
	Unassigned bool       // only checks without a project
	Search     string     // case-insensitive substring of name or url
	// Status: PAUSED (paused), MUTED (muted, not paused), or a state (not paused, not muted);
	// "" for all.
	Status string
}

// CheckSummary is a check as the list shows it.
type CheckSummary struct {
	ID         uuid.UUID
	ProjectID  *uuid.UUID
	Kind       check.Kind
	Name       string
	URL        *string
	State      string
	Paused     bool
	Muted      bool
	LastQueued *time.Time
	// InMaintenance: an active, enabled maintenance window lists the check (store's clock).
	InMaintenance bool

	DNSDomain, DNSRecordType, DNSResolver, DNSProtocol *string
	TCPHostname                                        *string
	TCPPort                                            *int
	TCPIPFamily                                        *string
}

// ListChecks returns one page of the organization's checks, newest first (created_at, then id,
// descending: the checks_org / checks_org_project index order), and the total matching f.
func (s *Store) ListChecks(ctx context.Context, orgID uuid.UUID, f CheckFilter, limit, offset int64) ([]CheckSummary, int64, error) {
	if f.ProjectID != nil {
		if err := s.ProjectExists(ctx, orgID, f.ProjectID); err != nil {
			return nil, 0, err
		}
	}
	where := []string{"org_id = $1"}
	args := []any{orgID}
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	switch {
	case f.ProjectID != nil:
		where = append(where, "project_id = "+arg(*f.ProjectID))
	case f.Unassigned:
		where = append(where, "project_id IS NULL")
	}
	if f.Search != "" {
		p := arg(strings.ToLower(f.Search))
		where = append(where, fmt.Sprintf("(strpos(lower(name), %s) > 0 OR strpos(lower(coalesce(url, '')), %s) > 0)", p, p))
	}
	switch f.Status {
	case "":
	case "PAUSED":
		where = append(where, "paused")
	case "MUTED":
		where = append(where, "muted AND NOT paused")
	default:
		where = append(where, "state = "+arg(f.Status)+" AND NOT paused AND NOT muted")
	}
	cond := strings.Join(where, " AND ")
	now := s.now()
	var total int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM checks WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	if total <= offset {
		return []CheckSummary{}, total, nil
	}
	// A deferred join: the page's ids come from the (org_id, created_at, id) index alone, so the
	// rows OFFSET skips cost an index entry each, not a heap fetch; only the page's rows are
	// read, and their maintenance windows looked up.
	rows, err := s.pool.Query(ctx, `SELECT id, project_id, kind, name, url, state, paused, muted, last_queued,
			dns_domain, dns_record_type, dns_resolver, dns_protocol, tcp_hostname, tcp_port, tcp_ip_family, `+checkWindowsColumn+`
		FROM checks JOIN (SELECT id FROM checks WHERE `+cond+`
			ORDER BY created_at DESC, id DESC LIMIT `+arg(limit)+` OFFSET `+arg(offset)+`) AS page USING (id)
		WHERE checks.org_id = $1
		ORDER BY created_at DESC, id DESC`, args...)
	if err != nil {
		return nil, 0, translate(err)
	}
	items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (CheckSummary, error) {
		var c CheckSummary
		var kind string
		var windows []byte
		err := row.Scan(&c.ID, &c.ProjectID, &kind, &c.Name, &c.URL, &c.State, &c.Paused, &c.Muted, &c.LastQueued,
			&c.DNSDomain, &c.DNSRecordType, &c.DNSResolver, &c.DNSProtocol, &c.TCPHostname, &c.TCPPort, &c.TCPIPFamily, &windows)
		c.Kind = check.Kind(kind)
		if err != nil {
			return c, err
		}
		c.InMaintenance, err = windowsActive(windows, now)
		return c, err
	})
	return items, total, translate(err)
}

// keepVarRefs drops the check's recorded references to variables whose names refs no longer use.
func keepVarRefs(ctx context.Context, tx pgx.Tx, orgID, checkID uuid.UUID, refs []VarRef) error {
	names := make([]string, 0, len(refs))
	for _, r := range refs {
		names = append(names, r.Name)
	}
	_, err := tx.Exec(ctx, `DELETE FROM check_env_refs r USING env_vars v
		WHERE r.org_id = $1 AND r.check_id = $2 AND v.org_id = r.org_id AND v.id = r.env_var_id
		AND NOT (v.name = ANY($3))`, orgID, checkID, names)
	if err != nil {
		return fmt.Errorf("drop unused variable references: %w", err)
	}
	return nil
}

// varRefs converts the spec's references for bindCheckVars.
func varRefs(sp check.Spec) []VarRef {
	refs := sp.VarRefs()
	out := make([]VarRef, len(refs))
	for i, r := range refs {
		out[i] = VarRef{Field: r.Field, Name: r.Name}
	}
	return out
}

func colString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func colBool(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}
