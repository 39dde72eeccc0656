package worker

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

type metrics struct {
	probes   *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
	skipped  *prometheus.CounterVec
	jobs     *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vantage_agent_probes_total",
			Help: "Probe attempts by check kind and outcome (pass or fail).",
		}, []string{"kind", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "vantage_agent_probe_duration_seconds",
			Help:    "Wall-clock duration of probe attempts by check kind.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"kind"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vantage_agent_jobs_in_flight",
			Help: "Jobs fetched and not yet acked or handed back; never more than the agent's concurrency plus its browser concurrency.",
		}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vantage_agent_jobs_skipped_total",
			Help: "Jobs dropped without a probe, by reason: past_deadline or undecodable.",
		}, []string{"reason"}),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vantage_agent_jobs_total",
			Help: "Jobs finished by outcome: acked (every result stored) or redelivered (handed back to JetStream).",
		}, []string{"outcome"}),
	}
	reg.MustRegister(m.probes, m.duration, m.inFlight, m.skipped, m.jobs)
	return m
}

// kindLabel is a check kind as a metric label: uptime, browser, dns, tcp.
func kindLabel(k vantagev1.CheckKind) string {
	return strings.ToLower(strings.TrimPrefix(k.String(), "CHECK_KIND_"))
}
