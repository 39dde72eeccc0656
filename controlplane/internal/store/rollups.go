package store

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/store/dbsqlc"
	"github.com/vantagehq/vantage/pkg/wire"
)

// Rollups (check_rollups, 0021_check_rollups.sql) count a check's final results per region and
// UTC hour: runs, failures, a latency histogram and the timing phases. Ingest writes them in
// the transaction that stores the results, usually one statement per batch; the series and overview
// reads (series.go) use them wherever a bucket is a whole number of hours, so that 30 days of a
// check are 720 rows per region, never 30 days of results.

// RollupBucket is the granularity of check_rollups.
const RollupBucket = time.Hour

// RollupRetention is how long rollups are kept: the longest series (30 days) with a margin.
const RollupRetention = 35 * 24 * time.Hour

// The latency histogram has LatencyBuckets counters on a log scale, four per doubling: counter 0
// holds response times under 1 ms, counter i (1 ≤ i ≤ 64) those in [2^((i-1)/4), 2^(i/4)) ms,
// and the last one those of 65.536 s and more. A percentile is read as the geometric middle of
// its counter's interval, within LatencyErrorBound of every value the counter holds.
const (
	LatencyBuckets     = 66
	latencyPerDoubling = 4
	// LatencyErrorBound is the relative error of a percentile read from the histogram:
	// 2^(1/8) - 1 = 0.09051, rounded up. (Below 1 ms and from 65.536 s on it is not bounded.)
	LatencyErrorBound = 0.0906
)

// latencyBucket is the histogram counter of a response time of ms milliseconds.
func latencyBucket(ms float64) int {
	if !(ms >= 1) { // also NaN
		return 0
	}
	i := int(math.Floor(math.Log2(ms)*latencyPerDoubling)) + 1
	return min(i, LatencyBuckets-1)
}

// LatencyQuantile returns the q-quantile (0 < q ≤ 1) of the response times counted in hist,
// in milliseconds, or nil when hist counts none: the geometric middle of the counter that holds
// the value of rank ⌈q·n⌉.
func LatencyQuantile(hist []int32, q float64) *float64 {
	var n int64
	for _, c := range hist {
		n += int64(c)
	}
	if n == 0 {
		return nil
	}
	rank := int64(math.Ceil(q * float64(n)))
	var seen int64
	for i, c := range hist {
		seen += int64(c)
		if seen >= max(rank, 1) {
			v := latencyMiddle(i)
			return &v
		}
	}
	return nil // unreachable: seen reaches n
}

// latencyMiddle is the value a counter stands for.
func latencyMiddle(i int) float64 {
	switch {
	case i == 0:
		return 0.5
	case i == LatencyBuckets-1:
		return math.Exp2(float64(i-1) / latencyPerDoubling) // its lower bound: it has no upper one
	default:
		return math.Exp2((float64(i) - 0.5) / latencyPerDoubling)
	}
}

// phaseSum accumulates one timing phase: its mean is sum / n.
type phaseSum struct {
	sum float64
	n   int32
}

func (p *phaseSum) add(ms *float64) {
	if ms != nil && *ms >= 0 && !math.IsInf(*ms, 0) {
		p.sum += *ms
		p.n++
	}
}

func (p phaseSum) mean() *float64 {
	if p.n == 0 {
		return nil
	}
	m := p.sum / float64(p.n)
	return &m
}

func (p *phaseSum) merge(o phaseSum) { p.sum += o.sum; p.n += o.n }

// rollup is one bucket's counts, as stored in check_rollups or merged from several rows.
type rollup struct {
	runs, failed                 int32
	hist                         [LatencyBuckets]int32
	dns, connect, tls, firstByte phaseSum
}

func (r *rollup) addResult(row *ResultRow) {
	r.runs++
	if !row.Passing {
		r.failed++
		return
	}
	r.hist[latencyBucket(row.ResponseTimeMs)]++
	r.dns.add(row.DNSTimeMs)
	r.connect.add(row.ConnectTimeMs)
	r.tls.add(row.TLSTimeMs)
	r.firstByte.add(row.FirstByteTimeMs)
}

func (r *rollup) merge(o *rollup) {
	r.runs += o.runs
	r.failed += o.failed
	for i, c := range o.hist {
		r.hist[i] += c
	}
	r.dns.merge(o.dns)
	r.connect.merge(o.connect)
	r.tls.merge(o.tls)
	r.firstByte.merge(o.firstByte)
}

// addHist adds a stored histogram (a shorter one, written before a change of LatencyBuckets,
// would add to the first counters).
func (r *rollup) addHist(h []int32) {
	for i := 0; i < len(h) && i < LatencyBuckets; i++ {
		r.hist[i] += h[i]
	}
}

// histLiteral is the histogram as a PostgreSQL array literal.
func (r *rollup) histLiteral() string {
	var b strings.Builder
	b.Grow(2 * LatencyBuckets)
	b.WriteByte('{')
	for i, c := range r.hist {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(int64(c), 10))
	}
	b.WriteByte('}')
	return b.String()
}

// rollupKey is a row of check_rollups.
type rollupKey struct {
	org, check uuid.UUID
	region     string
	hour       time.Time
}

// saveRollups adds the batch's final results to their hours' rollups. Like the regional view,
// it leaves out the agent's own failures. It runs after saveRegionResults, whose upsert holds
// the row lock of each check and region of the batch until commit — whether or not the checks
// are locked too (they are not when the shard owner judges) — so the rows it reads cannot
// change or appear meanwhile: one statement adds to the rows that exist, with one
// histogram counter each; another inserts the rest; a row whose results of this batch fell
// into several counters (rare: two results of one check and region in one batch) gets another
// update per further counter.
func saveRollups(ctx context.Context, q *dbsqlc.Queries, rows []ResultRow) error {
	byKey := map[rollupKey]*rollup{}
	var order []rollupKey
	for i := range rows {
		r := &rows[i]
		if !r.IsFinalAttempt || (r.FailureSource != nil && *r.FailureSource == wire.FailureSourceAgent) {
			continue
		}
		k := rollupKey{r.OrgID, r.CheckID, r.Region, r.CheckedAt.UTC().Truncate(RollupBucket)}
		ru := byKey[k]
		if ru == nil {
			ru = &rollup{}
			byKey[k] = ru
			order = append(order, k)
		}
		ru.addResult(r)
	}
	if len(order) == 0 {
		return nil
	}
	counters := make(map[rollupKey][]int, len(order)) // the histogram counters each row adds to
	for _, k := range order {
		for i, c := range byKey[k].hist {
			if c > 0 {
				counters[k] = append(counters[k], i)
			}
		}
	}
	updated, err := q.AddToRollups(ctx, addToRollups(order, byKey, counters, 0))
	if err != nil {
		return fmt.Errorf("add to rollups: %w", err)
	}
	existed := make(map[rollupKey]bool, len(updated))
	for _, u := range updated {
		existed[rollupKey{check: u.CheckID, region: u.Region, hour: u.BucketStart.UTC()}] = true
	}
	var fresh, more []rollupKey
	for _, k := range order {
		switch nk := (rollupKey{check: k.check, region: k.region, hour: k.hour}); {
		case !existed[nk]:
			fresh = append(fresh, k)
		case len(counters[k]) > 1:
			more = append(more, k)
		}
	}
	if len(fresh) > 0 {
		if err := q.InsertRollups(ctx, insertRollups(fresh, byKey)); err != nil {
			return fmt.Errorf("insert rollups: %w", err)
		}
	}
	for round := 1; len(more) > 0; round++ {
		if _, err := q.AddToRollups(ctx, addToRollups(more, byKey, counters, round)); err != nil {
			return fmt.Errorf("add to rollups: %w", err)
		}
		more = slices.DeleteFunc(more, func(k rollupKey) bool { return len(counters[k]) <= round+1 })
	}
	return nil
}

// addToRollups is the update of round: round 0 adds each row's counts and phases and its first
// histogram counter; round n > 0 only its counter n.
func addToRollups(keys []rollupKey, byKey map[rollupKey]*rollup, counters map[rollupKey][]int, round int) dbsqlc.AddToRollupsParams {
	n := len(keys)
	arg := dbsqlc.AddToRollupsParams{OrgIds: make([]uuid.UUID, n), CheckIds: make([]uuid.UUID, n),
		Regions: make([]string, n), BucketStarts: make([]time.Time, n), Runs: make([]int32, n), Failed: make([]int32, n),
		HistIndex: make([]int32, n), HistCount: make([]int32, n), DnsSums: make([]float64, n), DnsNs: make([]int32, n),
		ConnectSums: make([]float64, n), ConnectNs: make([]int32, n), TlsSums: make([]float64, n), TlsNs: make([]int32, n),
		FirstByteSums: make([]float64, n), FirstByteNs: make([]int32, n)}
	for j, k := range keys {
		ru := byKey[k]
		arg.OrgIds[j], arg.CheckIds[j], arg.Regions[j], arg.BucketStarts[j] = k.org, k.check, k.region, k.hour
		arg.HistIndex[j] = 1 // a row without passing results adds 0 to its first counter
		if c := counters[k]; round < len(c) {
			arg.HistIndex[j], arg.HistCount[j] = int32(c[round]+1), ru.hist[c[round]]
		}
		if round > 0 {
			continue
		}
		arg.Runs[j], arg.Failed[j] = ru.runs, ru.failed
		arg.DnsSums[j], arg.DnsNs[j] = ru.dns.sum, ru.dns.n
		arg.ConnectSums[j], arg.ConnectNs[j] = ru.connect.sum, ru.connect.n
		arg.TlsSums[j], arg.TlsNs[j] = ru.tls.sum, ru.tls.n
		arg.FirstByteSums[j], arg.FirstByteNs[j] = ru.firstByte.sum, ru.firstByte.n
	}
	return arg
}

func insertRollups(keys []rollupKey, byKey map[rollupKey]*rollup) dbsqlc.InsertRollupsParams {
	n := len(keys)
	arg := dbsqlc.InsertRollupsParams{OrgIds: make([]uuid.UUID, n), CheckIds: make([]uuid.UUID, n),
		Regions: make([]string, n), BucketStarts: make([]time.Time, n), Runs: make([]int32, n), Failed: make([]int32, n),
		Hists: make([]string, n), DnsSums: make([]float64, n), DnsNs: make([]int32, n), ConnectSums: make([]float64, n),
		ConnectNs: make([]int32, n), TlsSums: make([]float64, n), TlsNs: make([]int32, n),
		FirstByteSums: make([]float64, n), FirstByteNs: make([]int32, n)}
	for j, k := range keys {
		ru := byKey[k]
		arg.OrgIds[j], arg.CheckIds[j], arg.Regions[j], arg.BucketStarts[j] = k.org, k.check, k.region, k.hour
		arg.Runs[j], arg.Failed[j], arg.Hists[j] = ru.runs, ru.failed, ru.histLiteral()
		arg.DnsSums[j], arg.DnsNs[j] = ru.dns.sum, ru.dns.n
		arg.ConnectSums[j], arg.ConnectNs[j] = ru.connect.sum, ru.connect.n
		arg.TlsSums[j], arg.TlsNs[j] = ru.tls.sum, ru.tls.n
		arg.FirstByteSums[j], arg.FirstByteNs[j] = ru.firstByte.sum, ru.firstByte.n
	}
	return arg
}

// PruneRollups deletes the rollups of the hours that began before before and returns how many.
func (s *Store) PruneRollups(ctx context.Context, before time.Time) (int64, error) {
	n, err := s.q.PruneRollups(ctx, before)
	if err != nil {
		return 0, fmt.Errorf("prune rollups: %w", err)
	}
	return n, nil
}
