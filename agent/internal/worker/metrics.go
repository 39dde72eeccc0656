package worker

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

type metrics struct {
	// Per check kind (kindIndex), resolved once: a label lookup per probe is measurable at
	// thousands of probes per second.
	pass, fail []prometheus.Counter
	durations  []prometheus.Observer
	inFlight   prometheus.Gauge
	skipped    *prometheus.CounterVec
	notRun     *prometheus.CounterVec
	jobs       *prometheus.CounterVec
	acked      prometheus.Counter
}

// kinds are the check kinds the per-kind metrics are resolved for; kindIndex maps others to
// the first (unspecified).
var kinds = []vantagev1.CheckKind{
	vantagev1.CheckKind_CHECK_KIND_UNSPECIFIED,
	vantagev1.CheckKind_CHECK_KIND_UPTIME,
	vantagev1.CheckKind_CHECK_KIND_BROWSER,
	vantagev1.CheckKind_CHECK_KIND_DNS,
	vantagev1.CheckKind_CHECK_KIND_TCP,
	vantagev1.CheckKind_CHECK_KIND_PING,
	vantagev1.CheckKind_CHECK_KIND_GRPC,
	vantagev1.CheckKind_CHECK_KIND_WEBSOCKET,
	vantagev1.CheckKind_CHECK_KIND_MULTISTEP,
}

func kindIndex(k vantagev1.CheckKind) int {
	for i, kk := range kinds {
		if kk == k {
			return i
		}
	}
	return 0
}

func newMetrics(reg prometheus.Registerer) *metrics {
	probes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vantage_agent_probes_total",
		Help: "Probe attempts by check kind and outcome (pass or fail).",
	}, []string{"kind", "outcome"})
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "vantage_agent_probe_duration_seconds",
		Help:    "Wall-clock duration of probe attempts by check kind.",
		Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
	}, []string{"kind"})
	m := &metrics{
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vantage_agent_jobs_in_flight",
			Help: "Jobs fetched and not yet acked or handed back: running, or waiting for the control plane to confirm their results.",
		}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vantage_agent_jobs_skipped_total",
			Help: "Jobs dropped without a probe or a report, by reason: undecodable (nothing identifies them to report).",
		}, []string{"reason"}),
		notRun: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vantage_agent_jobs_not_run_total",
			Help: "Jobs reported to the control plane as not run, by region and reason (EXPIRED: past their deadline when fetched; SHED: late under overload and shed in rotation because their check's previous job ran; SHUTDOWN: the agent stopped on their last delivery).",
		}, []string{"region", "reason"}),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vantage_agent_jobs_total",
			Help: "Jobs finished by outcome: acked (every result stored) or redelivered (handed back to JetStream).",
		}, []string{"outcome"}),
	}
	m.acked = m.jobs.WithLabelValues("acked")
	for _, k := range kinds {
		label := kindLabel(k)
		m.pass = append(m.pass, probes.WithLabelValues(label, "pass"))
		m.fail = append(m.fail, probes.WithLabelValues(label, "fail"))
		m.durations = append(m.durations, duration.WithLabelValues(label))
	}
	reg.MustRegister(probes, duration, m.inFlight, m.skipped, m.notRun, m.jobs)
	return m
}

// kindLabel is a check kind as a metric label: uptime, browser, dns, tcp.
func kindLabel(k vantagev1.CheckKind) string {
	return strings.ToLower(strings.TrimPrefix(k.String(), "CHECK_KIND_"))
}
