package ingest

import (
	"testing"
	"time"
	"unicode/utf8"

	"github.com/vantagehq/vantage/controlplane/internal/jobguard"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// FuzzConvertResult drives the conversion of an agent's result (accept: validation, the job's
// signature, the job's bounds) with arbitrary fields, signed as the scheduler signs the job or
// not: it never panics, refuses every result whose signature does not match, and never returns
// a row outside its job's bounds — an attempt the job does not have, a time outside its window,
// a time in the future, a result arriving after its end plus LateSlack that is not a skipped
// run, text above the caps.
func FuzzConvertResult(f *testing.F) {
	guard, err := jobguard.New([]byte(testSecretKey))
	if err != nil {
		f.Fatal(err)
	}
	const (
		jobID   = "0190a000-0000-7000-8000-000000000001"
		checkID = "0190a000-0000-7000-8000-000000000002"
		orgID   = "0190a000-0000-7000-8000-000000000003"
		region  = "cloud:eu-west-2"
	)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	ok := now - 1000
	f.Add(jobID, checkID, orgID, region, uint32(1), true, ok, ok+10, ok+200, "body", "summary", "", true)
	f.Add(jobID, checkID, orgID, region, uint32(2), true, ok, ok+10, ok+200, "", "", "", true)
	f.Add(jobID, checkID, orgID, region, uint32(99), true, ok, ok+10, ok+200, "", "", "", true)
	f.Add(jobID, checkID, orgID, region, uint32(1), true, ok, ok+10, int64(8_640_000_000_000_000), "", "", "", true)
	f.Add(jobID, checkID, orgID, region, uint32(1), true, ok, ok+10, ok-3_600_000, "", "", "", true)
	f.Add(jobID, checkID, orgID, region, uint32(1), true, ok, ok+10, now+45_000, "", "", "", true)
	f.Add(jobID, checkID, orgID, region, uint32(1), true, now-600_000, now-599_000, now-598_000, "", "", "", true)
	f.Add(jobID, checkID, orgID, region, uint32(1), true, ok, ok, ok, "", "", wire.NotRunExpired, true)
	f.Add(jobID, checkID, orgID, region, uint32(1), true, ok, ok, ok, "", "", "LATE", true)
	f.Add(jobID, checkID, orgID, "cloud:us-east-1", uint32(1), true, ok, ok+10, ok+200, "", "", "", true)
	f.Add(jobID, checkID, orgID, region, uint32(1), true, ok, ok+10, ok+200, string(make([]byte, 70_000)), "é\x00", "", true)
	f.Add(jobID, checkID, orgID, region, uint32(1), false, ok, ok+10, ok+200, "", "", "", false)
	f.Add("not a uuid", checkID, orgID, region, uint32(0), false, int64(-1), int64(0), int64(-5), "", "", "BORED", true)
	f.Fuzz(func(t *testing.T, job, check, org, reg string, attempt uint32, final bool,
		scheduled, dispatched, checked int64, body, summary, notRun string, signed bool) {
		res := &vantagev1.CheckResult{JobId: job, CheckId: check, OrgId: org, Region: reg,
			Kind: vantagev1.CheckKind_CHECK_KIND_UPTIME, AttemptNumber: attempt, IsFinalAttempt: final,
			ScheduledAtUnixMs: scheduled, DispatchedAtUnixMs: dispatched, CheckedAtUnixMs: checked,
			ResponseBody: &body, ResultSummary: &summary, NotRunReason: notRun}
		var bounds jobguard.Bounds
		if signed {
			j := jobOf(res)
			guard.Sign(j)
			res.JobSignature = j.Signature
			bounds, _ = guard.VerifyResult(res)
		}
		agent := Agent{Regions: []string{region}, Protocol: wire.StreamProtocol}
		row, reason, err := accept(res, agent, guard, time.UnixMilli(now))
		if err != nil {
			if reason == "" {
				t.Fatalf("refused without a reason: %v", err)
			}
			return
		}
		if !signed {
			t.Fatal("an unsigned result was accepted")
		}
		if row.AttemptNumber < 1 || uint32(row.AttemptNumber) > bounds.MaxAttempts {
			t.Fatalf("attempt %d of a job of %d", row.AttemptNumber, bounds.MaxAttempts)
		}
		if b, s := row.ResponseBody, row.ResultSummary; len(*b) > wire.MaxResponseBodyBytes ||
			len(*s) > wire.MaxResultSummaryBytes || !utf8.ValidString(*b) && utf8.ValidString(body) {
			t.Fatalf("text of %d and %d bytes stored", len(*b), len(*s))
		}
		if row.NotRunReason != "" {
			return // a skipped run: its scheduled time is signed, it has no probe times
		}
		end := bounds.Deadline.Add(time.Duration(bounds.MaxAttempts) * bounds.Timeout)
		from, to := row.ScheduledAt.Add(-MaxClockSkew), end.Add(MaxClockSkew)
		if row.CheckedAt.Before(from) || row.CheckedAt.After(to) || row.CheckedAt.After(time.UnixMilli(now).Add(MaxClockSkew)) {
			t.Fatalf("checked_at %s outside %s … %s, or in the future", row.CheckedAt, from, to)
		}
		if time.UnixMilli(now).After(end.Add(LateSlack)) {
			t.Fatalf("a result arriving after %s was not recorded as late", end.Add(LateSlack))
		}
	})
}
