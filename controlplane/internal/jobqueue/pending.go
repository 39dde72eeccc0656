package jobqueue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/wire"
)

// pendingDesc is the gauge agent autoscaling is driven by.
var pendingDesc = prometheus.NewDesc("vantage_region_jobs_pending",
	"Jobs waiting in the region's JetStream consumer, not yet delivered to an agent (consumer num_pending), read at scrape time. Absent when NATS did not answer.",
	[]string{"region"}, nil)

// PendingConfig configures a PendingCollector. Zero values take the documented defaults.
type PendingConfig struct {
	// Regions are the regions whose consumers it reports. Default check.Regions.
	Regions []string
	// Timeout bounds the consumer-info requests of one scrape. Default 2s.
	Timeout time.Duration
}

// PendingDeps are a PendingCollector's collaborators.
type PendingDeps struct {
	JetStream jetstream.JetStream // required
	// Registerer receives the collector (the /metrics registry). Default: a private registry.
	Registerer prometheus.Registerer
}

// PendingCollector reports vantage_region_jobs_pending{region}: each region consumer's
// NumPending, asked of JetStream when /metrics is scraped. A region whose consumer cannot be
// read within the timeout has no sample in that scrape — an absent value rather than a wrong
// zero, so an autoscaler holds its scale instead of shrinking.
type PendingCollector struct {
	cfg PendingConfig
	js  jetstream.JetStream
}

var _ prometheus.Collector = (*PendingCollector)(nil)

// NewPendingCollector returns the collector of the regions' pending jobs, registered with
// deps.Registerer.
func NewPendingCollector(cfg PendingConfig, deps PendingDeps) (*PendingCollector, error) {
	if deps.JetStream == nil {
		return nil, errors.New("jobqueue pending collector: a JetStream context is required")
	}
	if len(cfg.Regions) == 0 {
		cfg.Regions = check.Regions
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Second
	}
	if deps.Registerer == nil {
		deps.Registerer = prometheus.NewRegistry()
	}
	c := &PendingCollector{cfg: cfg, js: deps.JetStream}
	if err := deps.Registerer.Register(c); err != nil {
		return nil, fmt.Errorf("jobqueue pending collector: register: %w", err)
	}
	return c, nil
}

// Describe implements prometheus.Collector.
func (c *PendingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- pendingDesc }

// Collect implements prometheus.Collector: one consumer-info request per region, all within
// one timeout.
func (c *PendingCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeout)
	defer cancel()
	for _, region := range c.cfg.Regions {
		b, err := RegionBacklog(ctx, c.js, region)
		if err != nil {
			continue
		}
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(b.Pending), region)
	}
}

// Backlog is how a region's job consumer stands at one moment.
type Backlog struct {
	// Pending is the jobs not yet delivered to an agent (consumer num_pending).
	Pending uint64
	// Delivered counts every delivery so far (the consumer's delivered sequence, redeliveries
	// included): its growth between two readings is how fast the region's agents take jobs.
	Delivered uint64
}

// RegionBacklog reads the backlog of region's job consumer (not its browser consumer) with
// one consumer-info request.
func RegionBacklog(ctx context.Context, js jetstream.JetStream, region string) (Backlog, error) {
	cons, err := js.Consumer(ctx, wire.JobStream, wire.ConsumerName(region))
	if err != nil {
		return Backlog{}, fmt.Errorf("consumer info of %s: %w", region, err)
	}
	info := cons.CachedInfo()
	return Backlog{Pending: info.NumPending, Delivered: info.Delivered.Consumer}, nil
}
