package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// TestRollupsWrittenAtIngest: final results sent by an agent are counted in their hour's rollup
// with their timing phases (TLS and first byte come from the timings only), a retry's attempt
// is not, and a second batch adds to the same row.
func TestRollupsWrittenAtIngest(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{})
	a := h.connect("a1", "cloud:us-east-1")
	now := h.clock.Now()

	withPhases := func(r *vantagev1.CheckResult) *vantagev1.CheckResult {
		dns, connect, tls, firstByte := 1.0, 2.0, 3.0, 4.0
		r.Timings = &vantagev1.Timings{DnsMs: &dns, ConnectMs: &connect, TlsMs: &tls, FirstByteMs: &firstByte, TotalMs: 190}
		return r
	}
	retry := h.result(checkID, uuid.New(), "cloud:us-east-1", false, now)
	retry.IsFinalAttempt = false
	a.report(withPhases(h.result(checkID, uuid.New(), "cloud:us-east-1", true, now)), retry,
		h.result(checkID, uuid.New(), "cloud:us-east-1", false, now.Add(time.Second)))
	a.report(withPhases(h.result(checkID, uuid.New(), "cloud:us-east-1", true, now.Add(2*time.Second))))

	var runs, failed, hist, tlsN, firstByteN int
	var tlsSum, firstByteSum float64
	var bucket time.Time
	err := h.st.Pool().QueryRow(context.Background(), `SELECT runs, failed, (SELECT sum(x) FROM unnest(latency_hist) x),
			tls_n, tls_ms_sum, first_byte_n, first_byte_ms_sum, bucket_start
		FROM check_rollups WHERE check_id = $1 AND region = 'cloud:us-east-1'`, checkID).Scan(
		&runs, &failed, &hist, &tlsN, &tlsSum, &firstByteN, &firstByteSum, &bucket)
	if err != nil {
		t.Fatal(err)
	}
	checked := now.Add(200 * time.Millisecond).UTC()
	if runs != 3 || failed != 1 || hist != 2 || tlsN != 2 || tlsSum != 6 || firstByteN != 2 || firstByteSum != 8 ||
		!bucket.Equal(checked.Truncate(time.Hour)) {
		t.Errorf("rollup: runs %d failed %d histogram %d tls %d/%v first byte %d/%v hour %v",
			runs, failed, hist, tlsN, tlsSum, firstByteN, firstByteSum, bucket)
	}
}
