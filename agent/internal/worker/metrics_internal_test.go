package worker

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// TestMetricsPerKind: every kind of the CheckKind enum is counted under its own label, and a
// value the enum does not name under "unspecified".
func TestMetricsPerKind(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := newMetrics(reg)
	for v := range vantagev1.CheckKind_name {
		m.pass[kindIndex(vantagev1.CheckKind(v))].Inc()
	}
	m.pass[kindIndex(vantagev1.CheckKind(99))].Inc()

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "vantage_agent_probes_total" {
			continue
		}
		for _, c := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range c.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			if labels["outcome"] == "pass" {
				got[labels["kind"]] = c.GetCounter().GetValue()
			}
		}
	}
	want := map[string]float64{"unspecified": 2, "uptime": 1, "browser": 1, "dns": 1, "tcp": 1,
		"multistep": 1, "ping": 1, "grpc": 1, "websocket": 1}
	if len(got) != len(want) {
		t.Errorf("pass counters %v, want %v", got, want)
	}
	for kind, n := range want {
		if got[kind] != n {
			t.Errorf("kind %s passed %v times, want %v", kind, got[kind], n)
		}
	}
}
