package uplink

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	reconnects prometheus.Counter
	handovers  prometheus.Counter
	connected  prometheus.Gauge
	acks       *prometheus.CounterVec
	batch      prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		reconnects: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vantage_agent_uplink_reconnects_total",
			Help: "Times the agent opened a new stream to the control plane after losing one (or failing to open one).",
		}),
		handovers: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vantage_agent_uplink_handovers_total",
			Help: "Times the control plane asked for a new connection (GOAWAY, its VANTAGE_GRPC_MAX_CONNECTION_AGE) and the stream was handed over: every result sent on it acked, then reconnected at once.",
		}),
		connected: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vantage_agent_uplink_connected",
			Help: "1 while the agent has a registered stream to the control plane.",
		}),
		acks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vantage_agent_uplink_results_total",
			Help: "Results sent to the control plane by outcome: stored, not_stored (acked with stored=false), lost (the stream ended before the ack) or not_run_unsupported (a not-run result a protocol-1 control plane cannot take, not sent).",
		}, []string{"outcome"}),
		batch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "vantage_agent_uplink_batch_results",
			Help:    "Results per message sent to the control plane.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512},
		}),
	}
	for _, c := range []prometheus.Collector{m.reconnects, m.handovers, m.connected, m.acks, m.batch} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("uplink metrics: %w", err)
		}
	}
	return m, nil
}
