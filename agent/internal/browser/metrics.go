package browser

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	up       prometheus.Gauge
	confined prometheus.Gauge
	inUse    prometheus.Gauge
	restarts *prometheus.CounterVec
	workers  *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, memory func() (int64, error)) *metrics {
	m := &metrics{
		up: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vantage_agent_browser_up",
			Help: "1 while the agent's Chromium runs and answers, 0 while it is (re)starting.",
		}),
		confined: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vantage_agent_browser_file_view_confined",
			Help: "1 when the running Chromium is confined to its file view (Landlock), 0 when the kernel could not confine it and it can read what the agent can.",
		}),
		inUse: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vantage_agent_browser_checks_running",
			Help: "Browser checks using the browser now (each in its own browser context); at most the browser concurrency.",
		}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vantage_agent_browser_restarts_total",
			Help: "Restarts of the agent's Chromium, by reason: exited, hung, lost its connection.",
		}, []string{"reason"}),
		workers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vantage_agent_browser_script_workers_total",
			Help: "Script worker processes by how they ended: reported, killed_at_deadline, out_of_memory, crashed.",
		}, []string{"outcome"}),
	}
	mem := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "vantage_agent_browser_memory_bytes",
		Help: "The agent's Chromium's share of the machine's memory (PSS of its processes), 0 while it is not running.",
	}, func() float64 {
		n, err := memory()
		if err != nil {
			return 0
		}
		return float64(n)
	})
	reg.MustRegister(m.up, m.confined, m.inUse, m.restarts, m.workers, mem)
	return m
}
