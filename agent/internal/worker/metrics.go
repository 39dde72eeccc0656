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

// kinds are the check kinds the per-kind metrics are resolved for: every value of the job's
// CheckKind enum, so a kind added to the protocol is counted without a list to keep here.
// The slices of metrics are indexed by the enum's value (kindIndex).
func kinds() []vantagev1.CheckKind {
	var last int32
	for v := range vantagev1.CheckKind_name {
		last = max(last, v)
	}
	out := make([]vantagev1.CheckKind, 0, last+1)
	for v := range last + 1 {
		out = append(out, vantagev1.CheckKind(v))
	}
	return out
}

// kindIndex is k's index in the per-kind metrics: its value, or 0 (unspecified) for a value
// the enum does not name — one from a newer control plane, or a gap in the numbering.
func kindIndex(k vantagev1.CheckKind) int {
	if _, ok := vantagev1.CheckKind_name[int32(k)]; !ok {
		return 0
	}
	return int(k)
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
	for _, k := range kinds() {
		label := kindLabel(vantagev1.CheckKind(kindIndex(k)))
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
