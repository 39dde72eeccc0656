package ingest

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// LateAfter is how long after its due time a run may start and still be on time: runs that
// start later count in vantage_runs_late_total. A second covers the queue, the fetch and the
// agent's dispatch on a healthy system.
const LateAfter = time.Second

// runMetrics account for runs as their results are stored, once each (duplicates are not
// counted): skipped runs per region and reason, and the lateness of the runs that ran (their
// first attempt's start minus their due time) per region. The scheduler's own skips (runs it
// could not queue in time) count in the same vantage_runs_skipped_total, reason NOT_QUEUED.
type runMetrics struct {
	skipped  *prometheus.CounterVec
	late     *prometheus.CounterVec
	lateness *prometheus.HistogramVec
}

// NewRunsSkipped returns the counter vantage_runs_skipped_total{region,reason}, shared by the
// Batcher (skips agents report) and the scheduler (runs it could not queue in time); the
// caller registers it once and passes it to both.
func NewRunsSkipped() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vantage_runs_skipped_total",
		Help: "Runs that did not run, per region and reason (EXPIRED, SHUTDOWN, SHED: reported by agents; NOT_QUEUED: the scheduler could not queue them in time; LATE: their result came after their job's last attempt could have ended, plus a slack)."},
		[]string{"region", "reason"})
}

func newRunMetrics(skipped *prometheus.CounterVec) *runMetrics {
	return &runMetrics{
		skipped: skipped,
		late: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vantage_runs_late_total",
			Help: "Runs whose first attempt started more than 1s after their due time, per region."}, []string{"region"}),
		lateness: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "vantage_run_lateness_seconds",
			Help:    "Start of a run's first attempt minus its due time, per region (p50/p99 with histogram_quantile).",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}}, []string{"region"}),
	}
}

// account counts the newly stored rows of a batch. A skipped run counts with its final
// attempt: a LATE run whose first attempt came late too counts once.
func (m *runMetrics) account(rows []store.ResultRow) {
	for i := range rows {
		r := &rows[i]
		if r.NotRunReason != "" {
			if r.IsFinalAttempt {
				m.skipped.WithLabelValues(r.Region, r.NotRunReason).Inc()
			}
			continue
		}
		if r.AttemptNumber != 1 || r.DispatchedAt == nil {
			continue
		}
		late := r.DispatchedAt.Sub(r.ScheduledAt)
		m.lateness.WithLabelValues(r.Region).Observe(max(late, 0).Seconds())
		if late > LateAfter {
			m.late.WithLabelValues(r.Region).Inc()
		}
	}
}
