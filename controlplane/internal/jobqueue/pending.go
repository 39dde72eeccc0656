package jobqueue

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/pkg/wire"
)

// pendingDesc is the gauge agent autoscaling is driven by.
var pendingDesc = prometheus.NewDesc("vantage_region_jobs_pending",
	"Jobs waiting in the region's JetStream consumer, not yet delivered to an agent (consumer num_pending), read at scrape time. Absent when NATS did not answer.",
	[]string{"region"}, nil)

// PendingCollector reports vantage_region_jobs_pending{region}: each region consumer's
// NumPending, asked of JetStream when /metrics is scraped. A region whose consumer cannot be
// read within the timeout has no sample in that scrape — an absent value rather than a wrong
// zero, so an autoscaler holds its scale instead of shrinking.
type PendingCollector struct {
	js      jetstream.JetStream
	regions []string
	timeout time.Duration
}

var _ prometheus.Collector = (*PendingCollector)(nil)

// NewPendingCollector reports the pending jobs of regions' consumers on js (register it with
// the /metrics registry).
func NewPendingCollector(js jetstream.JetStream, regions []string) *PendingCollector {
	return &PendingCollector{js: js, regions: regions, timeout: 2 * time.Second}
}

// Describe implements prometheus.Collector.
func (c *PendingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- pendingDesc }

// Collect implements prometheus.Collector: one consumer-info request per region, all within
// one timeout.
func (c *PendingCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	for _, region := range c.regions {
		cons, err := c.js.Consumer(ctx, wire.JobStream, wire.ConsumerName(region))
		if err != nil {
			continue
		}
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(cons.CachedInfo().NumPending), region)
	}
}
