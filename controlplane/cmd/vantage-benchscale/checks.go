package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/pkg/check"
)

// orgs is how many organizations the checks are spread over: the control plane keeps some
// state per organization, so one would understate it.
const orgs = 10

var scaleRegions = []string{"cloud:us-east-1", "cloud:eu-central-1", "cloud:ap-southeast-2"}

// spec is check i of the mix: six in ten uptime (HTTP) checks, two TCP, one DNS, one ping;
// alternate blocks of ten at 60 s and 300 s; one, two or three regions. Each has its own
// target, so no two stored documents are the same bytes.
func spec(i int) check.Spec {
	var k check.Kind
	switch i % 10 {
	case 6, 7:
		k = check.TCP
	case 8:
		k = check.DNS
	case 9:
		k = check.Ping
	default:
		k = check.Uptime
	}
	s := check.Example(k)
	s.Name = "scale " + strconv.Itoa(i)
	s.TestInterval = 60
	if (i/10)%2 == 1 {
		s.TestInterval = 300
	}
	s.TestRegions = scaleRegions[:1+(i/20)%3]
	s.RegionQuorum = check.QuorumMajority // the example's quorum may name more regions than the check has
	host := "service-" + strconv.Itoa(i) + ".example.test"
	switch k {
	case check.Uptime:
		u := "https://" + host + "/health"
		s.HTTP.URL = &u
	case check.TCP:
		s.TCP.Hostname = host
	case check.DNS:
		s.DNS.Domain = host
	case check.Ping:
		s.Ping.Hostname = host
	}
	return s
}

// createChecks writes n active checks in one COPY through psql (the column list is the one the
// store writes on create; the checks table's triggers add their progress rows and counters).
func createChecks(dbURL string, n int) error {
	var orgSQL strings.Builder
	orgIDs := make([]string, orgs)
	for o := range orgIDs {
		orgIDs[o] = uuid.NewString()
		fmt.Fprintf(&orgSQL, "INSERT INTO organizations (id, name, plan) VALUES ('%s', 'scale %d', 'paid');", orgIDs[o], o)
	}
	if err := psql(dbURL, orgSQL.String(), nil); err != nil {
		return err
	}
	var rows bytes.Buffer
	w := csv.NewWriter(&rows)
	for i := range n {
		s := spec(i)
		doc, err := s.Document()
		if err != nil {
			return fmt.Errorf("check %d: %w", i, err)
		}
		reminder := ""
		if s.ReminderAlertIntervalMinutes != nil {
			reminder = strconv.Itoa(*s.ReminderAlertIntervalMinutes)
		}
		timeout := ""
		if s.TimeoutMs != nil {
			timeout = strconv.Itoa(*s.TimeoutMs)
		}
		if err := w.Write([]string{uuid.NewString(), orgIDs[i%orgs], string(s.Kind), s.Name, strconv.Itoa(s.TestInterval), timeout,
			"{" + strings.Join(s.TestRegions, ",") + "}", s.AlertPriority, strconv.Itoa(s.ConfirmationPeriodSeconds),
			strconv.Itoa(s.RecoveryPeriodSeconds), reminder, string(s.RegionQuorum), string(doc)}); err != nil {
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return psql(dbURL, `COPY checks (id, org_id, kind, name, test_interval, timeout_ms, test_regions, alert_priority,
		confirmation_period_seconds, recovery_period_seconds, reminder_alert_interval_minutes, region_quorum, spec)
		FROM STDIN WITH (FORMAT csv)`, &rows)
}
