package jobqueue_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/vantagehq/vantage/controlplane/internal/jobqueue"
	"github.com/vantagehq/vantage/controlplane/internal/jobqueue/jobqueuetest"
	"github.com/vantagehq/vantage/pkg/check"
	"github.com/vantagehq/vantage/pkg/wire"
)

func TestPendingCollectorReportsEachRegionConsumersPendingJobs(t *testing.T) {
	t.Parallel()
	ns, _, js := jobqueuetest.NewStream(t)
	ctx := context.Background()
	publish := func(region string, n int) {
		for range n {
			if _, err := js.Publish(ctx, wire.JobSubject(region), []byte("job")); err != nil {
				t.Fatal(err)
			}
		}
	}
	publish("cloud:us-east-1", 3)
	publish("cloud:eu-west-2", 5)
	// A delivered (in-flight) job is no longer pending.
	cons, err := js.Consumer(ctx, wire.JobStream, wire.ConsumerName("cloud:eu-west-2"))
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(2, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	delivered := 0
	for range batch.Messages() {
		delivered++
	}
	if delivered != 2 {
		t.Fatalf("fetched %d jobs, want 2", delivered)
	}

	reg := prometheus.NewRegistry()
	if _, err := jobqueue.NewPendingCollector(jobqueue.PendingConfig{}, jobqueue.PendingDeps{JetStream: js, Registerer: reg}); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	want.WriteString("# HELP vantage_region_jobs_pending Jobs waiting in the region's JetStream consumer, not yet delivered to an agent (consumer num_pending), read at scrape time. Absent when NATS did not answer.\n# TYPE vantage_region_jobs_pending gauge\n")
	pending := map[string]int{"cloud:us-east-1": 3, "cloud:eu-west-2": 3}
	for _, r := range slices.Sorted(slices.Values(check.Regions)) { // the exposition order
		fmt.Fprintf(&want, "vantage_region_jobs_pending{region=%q} %d\n", r, pending[r])
	}
	// The server updates a consumer's pending count asynchronously after a publish or a
	// delivery, so the scrape is retried until it settles.
	var scrapeErr error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		scrapeErr = testutil.GatherAndCompare(reg, strings.NewReader(want.String()), "vantage_region_jobs_pending")
		if scrapeErr == nil || time.Now().After(deadline) {
			break
		}
	}
	if scrapeErr != nil {
		t.Error(scrapeErr)
	}

	// NATS gone: no samples (not zeros), and the scrape itself still succeeds.
	ns.Shutdown()
	ns.WaitForShutdown()
	n, err := testutil.GatherAndCount(reg, "vantage_region_jobs_pending")
	if err != nil || n != 0 {
		t.Errorf("with NATS down: %d samples, %v; want none and no error", n, err)
	}
}
