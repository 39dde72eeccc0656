package ingest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// TestHostileAgentResults: an agent with a real agent token, on a real stream, reports on a
// job validly signed for its region, but crafts the result. Nothing it sends lands outside its
// job's signed bounds: a result checked outside the job's window, or an attempt the job does
// not have, is refused (and the job is redelivered, until the agent reports it EXPIRED); a
// result arriving after the job's last attempt could have ended, plus LateSlack, is recorded
// as a run skipped LATE and never judged; oversized text is cut to the agent's own bounds.
func TestHostileAgentResults(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	const region = "cloud:eu-west-2"
	_, secret := h.agentToken(region)
	a, err := h.registerWith(secret, "hostile", nil, region)
	if err != nil {
		t.Fatal(err)
	}
	now := h.clock.Now()
	fresh := now.Add(-time.Second) // a run due a second ago: its result is on time

	type want struct {
		stored  bool   // the ack's stored
		row     bool   // a check_results row
		skipped string // the skipped_runs reason, "" for none
	}
	tests := []struct {
		name  string
		craft func(r *vantagev1.CheckResult)
		want  want
	}{
		{"far-future checked_at", func(r *vantagev1.CheckResult) {
			r.CheckedAtUnixMs = 8_640_000_000_000_000 // +275760-09-13
		}, want{}},
		{"checked before it was scheduled", func(r *vantagev1.CheckResult) {
			r.CheckedAtUnixMs = r.ScheduledAtUnixMs - time.Hour.Milliseconds()
		}, want{}},
		{"checked just past the window", func(r *vantagev1.CheckResult) {
			r.CheckedAtUnixMs = r.ScheduledAtUnixMs + (testDeadline + testAttempts*testTimeout + MaxClockSkew).Milliseconds() + 1
		}, want{}},
		{"checked in the future, within the job's window", func(r *vantagev1.CheckResult) {
			r.CheckedAtUnixMs = now.Add(MaxClockSkew + 5*time.Second).UnixMilli()
		}, want{}},
		{"dispatched in the far past", func(r *vantagev1.CheckResult) { r.DispatchedAtUnixMs = 1 }, want{}},
		{"attempt 99", func(r *vantagev1.CheckResult) { r.AttemptNumber = 99 }, want{}},
		{"attempt beyond the job's two", func(r *vantagev1.CheckResult) { r.AttemptNumber = testAttempts + 1 }, want{}},
		{"a clock a little off", func(r *vantagev1.CheckResult) {
			r.DispatchedAtUnixMs = r.ScheduledAtUnixMs - (MaxClockSkew - time.Second).Milliseconds()
		}, want{stored: true, row: true}},
		{"late: after the job's end plus the slack", func(r *vantagev1.CheckResult) {
			due := now.Add(-testDeadline - testAttempts*testTimeout - LateSlack - time.Second)
			r.ScheduledAtUnixMs = due.UnixMilli()
			r.DispatchedAtUnixMs, r.CheckedAtUnixMs = due.Add(time.Second).UnixMilli(), due.Add(2*time.Second).UnixMilli()
		}, want{stored: true, skipped: "LATE"}},
		{"just in time", func(r *vantagev1.CheckResult) {
			due := now.Add(-testDeadline - testAttempts*testTimeout - LateSlack + time.Second)
			r.ScheduledAtUnixMs = due.UnixMilli()
			r.DispatchedAtUnixMs, r.CheckedAtUnixMs = due.Add(time.Second).UnixMilli(), due.Add(2*time.Second).UnixMilli()
		}, want{stored: true, row: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkID := h.createCheck(checkSpec{regions: []string{region}})
			r := h.result(checkID, uuid.New(), region, false, fresh)
			tc.craft(r)
			h.sign(r) // the job as the scheduler signed it; the crafted fields are the agent's
			seq := a.sendAsIs(r)
			ack := a.acks(1)[seq]
			if ack.GetStored() != tc.want.stored {
				t.Fatalf("ack stored=%v (%s), want %v", ack.GetStored(), ack.GetError(), tc.want.stored)
			}
			t.Logf("ack: stored=%v %s", ack.GetStored(), ack.GetError())
			rows := h.count(`SELECT count(*) FROM check_results WHERE check_id = $1`, checkID)
			if rows == 1 != tc.want.row {
				t.Errorf("%d check_results rows, want a row: %v", rows, tc.want.row)
			}
			var reasons []string
			q, err := h.st.Pool().Query(context.Background(), `SELECT reason FROM skipped_runs WHERE check_id = $1`, checkID)
			if err != nil {
				t.Fatal(err)
			}
			for q.Next() {
				var s string
				if err := q.Scan(&s); err != nil {
					t.Fatal(err)
				}
				reasons = append(reasons, s)
			}
			if got := strings.Join(reasons, ","); got != tc.want.skipped {
				t.Errorf("skipped runs %q, want %q", got, tc.want.skipped)
			}
			if !tc.want.row {
				// Never judged: no run, no regional view, the check as it was.
				if n := h.count(`SELECT count(*) FROM check_runs WHERE check_id = $1`, checkID); n != 0 {
					t.Errorf("%d runs judged", n)
				}
				if n := h.count(`SELECT count(*) FROM check_regions WHERE check_id = $1`, checkID); n != 0 {
					t.Errorf("%d regional views written", n)
				}
				if s := h.state(checkID); s != "UP" && s != "PENDING" {
					t.Errorf("check is %s", s)
				}
			}
		})
	}
	if n := skippedMetric(t, h, region, "LATE"); n != 1 {
		t.Errorf("vantage_runs_skipped_total{reason=LATE} = %v, want 1", n)
	}
	if n := testutil.ToFloat64(h.srv.rejected.WithLabelValues(rejectOutOfJob)); n != 7 {
		t.Errorf("vantage_ingest_rejected_total{reason=out_of_bounds} = %v, want 7", n)
	}
}

// TestRefusedResultThenExpired: a refused result is not acked as stored, so the agent hands
// its job back; the redelivery past the job's deadline is reported EXPIRED, and that is
// stored: the job ends there, it is not retried forever.
func TestRefusedResultThenExpired(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{batcher: BatcherConfig{}})
	const region = "cloud:eu-west-2"
	a, _ := h.registerProtocol(wire.StreamProtocol, region)
	checkID := h.createCheck(checkSpec{regions: []string{region}})
	job := uuid.New()
	due := h.clock.Now().Add(-time.Second)
	r := h.result(checkID, job, region, false, due)
	r.CheckedAtUnixMs = 8_640_000_000_000_000
	a.sign(r)
	a.sendBatch(r)
	if acks, _ := a.batchAcks(1); acks[a.seq].GetStored() {
		t.Fatal("a far-future result was stored")
	}
	// Hours later (the job long expired), the agent reports the redelivered job as not run.
	h.clock.Set(h.clock.Now().Add(3 * time.Hour))
	expired := h.result(checkID, job, region, false, due)
	expired.NotRunReason = wire.NotRunExpired
	expired.CheckedAtUnixMs = h.clock.Now().UnixMilli()
	a.sign(expired)
	a.sendBatch(expired)
	if acks, _ := a.batchAcks(1); !acks[a.seq].GetStored() {
		t.Fatalf("the EXPIRED report was not stored: %s", acks[a.seq].GetError())
	}
	if n := h.count(`SELECT count(*) FROM skipped_runs WHERE check_id = $1 AND reason = 'EXPIRED'`, checkID); n != 1 {
		t.Errorf("%d EXPIRED runs recorded, want 1", n)
	}
}

// TestOversizedResultText: whatever an agent sends, response_body and result_summary are
// stored cut to the agent's own bounds (wire.MaxResponseBodyBytes, MaxResultSummaryBytes),
// marked in details.truncated; a message above gRPC's 4 MiB limit ends the stream and
// stores nothing.
func TestOversizedResultText(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	const region = "cloud:eu-west-2"
	_, secret := h.agentToken(region)
	checkID := h.createCheck(checkSpec{regions: []string{region}})
	due := h.clock.Now().Add(-time.Second)

	a, err := h.registerWith(secret, "big", nil, region)
	if err != nil {
		t.Fatal(err)
	}
	r := h.result(checkID, uuid.New(), region, false, due)
	body, summary := strings.Repeat("é", 1<<20), strings.Repeat("x", 512<<10)
	r.ResponseBody, r.ResultSummary = &body, &summary
	a.report(r)
	var gotBody, gotSummary string
	var details []byte
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT response_body, result_summary, details
		FROM check_results WHERE check_id = $1`, checkID).Scan(&gotBody, &gotSummary, &details); err != nil {
		t.Fatal(err)
	}
	if len(gotBody) > wire.MaxResponseBodyBytes || len(gotBody) < wire.MaxResponseBodyBytes-1 || !strings.HasPrefix(body, gotBody) {
		t.Errorf("response_body of %d bytes stored, want the first %d", len(gotBody), wire.MaxResponseBodyBytes)
	}
	if len(gotSummary) != wire.MaxResultSummaryBytes {
		t.Errorf("result_summary of %d bytes stored, want %d", len(gotSummary), wire.MaxResultSummaryBytes)
	}
	var d struct{ Truncated []string }
	if err := json.Unmarshal(details, &d); err != nil {
		t.Fatal(err)
	}
	if strings.Join(d.Truncated, ",") != "response_body,result_summary" {
		t.Errorf("details.truncated = %v", d.Truncated)
	}

	for _, field := range []string{"response_body", "result_summary"} {
		t.Run("10 MiB "+field, func(t *testing.T) {
			a, err := h.registerWith(secret, "huge", nil, region)
			if err != nil {
				t.Fatal(err)
			}
			r := h.result(checkID, uuid.New(), region, false, due)
			huge := strings.Repeat("x", 10<<20)
			if field == "response_body" {
				r.ResponseBody = &huge
			} else {
				r.ResultSummary = &huge
			}
			a.send(r)
			if _, err := a.stream.Recv(); status.Code(err) != codes.ResourceExhausted {
				t.Errorf("after a 10 MiB result: %v, want ResourceExhausted", err)
			}
		})
	}
	if n := h.count(`SELECT count(*) FROM check_results WHERE check_id = $1`, checkID); n != 1 {
		t.Errorf("%d rows, want only the capped one", n)
	}
}

// skippedMetric is vantage_runs_skipped_total{region,reason} of h's pipeline.
func skippedMetric(t *testing.T, h *harness, region, reason string) float64 {
	t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "vantage_runs_skipped_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["region"] == region && labels["reason"] == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
