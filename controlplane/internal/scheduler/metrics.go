package scheduler

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the scheduler's Prometheus series.
type metrics struct {
	published      *prometheus.CounterVec // by region
	duplicates     prometheus.Counter
	publishErrs    prometheus.Counter
	skipped        *prometheus.CounterVec // by reason
	lateness       prometheus.Histogram
	scheduled      prometheus.Gauge
	shards         prometheus.Gauge
	moves          *prometheus.CounterVec // by direction
	loadErrs       *prometheus.CounterVec // by kind of load
	unrunnable     prometheus.Gauge
	progressWrites prometheus.Counter
	shed           *prometheus.CounterVec // by region
	behind         *prometheus.GaugeVec   // by region
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		published: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vantage_scheduler_jobs_published_total",
			Help: "Check jobs queued in JetStream (acknowledged by the stream), by region.",
		}, []string{"region"}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vantage_scheduler_jobs_duplicate_total",
			Help: "Jobs JetStream dropped as duplicates of a run already queued (after a fail-over).",
		}),
		publishErrs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vantage_scheduler_publish_errors_total",
			Help: "Jobs that could not be queued (NATS unavailable, stream full, ack timeout).",
		}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vantage_scheduler_jobs_skipped_total",
			Help: "Jobs not published, by reason: late (their deadline passed before they could be queued).",
		}, []string{"reason"}),
		lateness: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "vantage_scheduler_publish_lateness_seconds",
			Help:    "Time from a job's due time until JetStream acknowledged it.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		scheduled: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vantage_scheduler_scheduled_checks",
			Help: "Active checks in this replica's schedule (those of its shards).",
		}),
		shards: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vantage_scheduler_owned_shards",
			Help: "Shards of the checks this replica schedules (their leases held); all replicas' sum is 256.",
		}),
		moves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vantage_scheduler_shard_moves_total",
			Help: "Shards this replica took over or gave up (rebalancing as replicas join and leave), by direction.",
		}, []string{"direction"}),
		loadErrs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vantage_scheduler_load_errors_total",
			Help: "Failed loads of checks from the database, by kind (full resync or by_id change).",
		}, []string{"kind"}),
		unrunnable: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vantage_scheduler_unrunnable_checks",
			Help: "Active checks the last full load could not turn into jobs (see the log).",
		}),
		progressWrites: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vantage_scheduler_progress_writes_total",
			Help: "Writes of the scheduler's progress (how far the runs of its shards were handled; one statement).",
		}),
		shed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vantage_scheduler_runs_shed_total",
			Help: "Ordinary runs not published because their region's job queue was behind, recorded as skipped (SHED), by region.",
		}, []string{"region"}),
		behind: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "vantage_scheduler_region_behind",
			Help: "1 while the region's job queue is judged behind and its ordinary runs are shed in rotation, else 0.",
		}, []string{"region"}),
	}
	for _, c := range []prometheus.Collector{m.published, m.duplicates, m.publishErrs, m.skipped, m.lateness,
		m.scheduled, m.shards, m.moves, m.loadErrs, m.unrunnable, m.progressWrites, m.shed, m.behind} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
