package finals

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

type routerMetrics struct {
	received, batches, judgeErrs, takeErrs, resyncs, decodeErrs prometheus.Counter
	queued                                                      prometheus.Gauge
}

func newRouterMetrics(reg prometheus.Registerer) (routerMetrics, error) {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	m := routerMetrics{
		received:   counter("vantage_finals_received_total", "Final attempts received for the shards this replica owns."),
		batches:    counter("vantage_finals_judged_batches_total", "Batches of finals the judge took."),
		judgeErrs:  counter("vantage_finals_judge_errors_total", "Failed attempts to judge a batch of finals (each is retried)."),
		takeErrs:   counter("vantage_finals_take_errors_total", "Failed attempts to take or re-sync shards (each is retried)."),
		resyncs:    counter("vantage_finals_resyncs_total", "Re-syncs of shards whose finals may have been lost (drops, reconnects, undecodable messages)."),
		decodeErrs: counter("vantage_finals_decode_errors_total", "Messages of finals that did not decode (their shard is re-synced)."),
		queued: prometheus.NewGauge(prometheus.GaugeOpts{Name: "vantage_finals_queued",
			Help: "Finals received and waiting for the judge, or with it."}),
	}
	for _, c := range []prometheus.Collector{m.received, m.batches, m.judgeErrs, m.takeErrs, m.resyncs, m.decodeErrs, m.queued} {
		if err := reg.Register(c); err != nil {
			return routerMetrics{}, fmt.Errorf("finals router metrics: %w", err)
		}
	}
	return m, nil
}
