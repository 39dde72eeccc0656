package console_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/evaluator"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// history describes the results a check got in the last hours, one run per interval in each
// region, judged by the real evaluator as the ingest path judges them.
type history struct {
	hours    int
	interval time.Duration
	baseMs   map[string]float64 // typical response time per region
	// fails reports whether the run at t in region failed, and why.
	fails func(region string, t time.Time) (bool, string)
	// screenshot, if set, is kept with the newest failed result (a browser run's page).
	screenshot []byte
	// certificates, if set, is the leaf certificate each region is served: {fingerprint, not_after}.
	certificates map[string][2]string
}

// ingestHistory stores h for a check through evaluator.IngestBatch, run by run, oldest first.
func (s *site) ingestHistory(org uuid.UUID, checkID string, h history) {
	s.t.Helper()
	ev, err := evaluator.New(evaluator.Config{}, evaluator.Deps{Store: s.st})
	if err != nil {
		s.t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(len(checkID)), 7))
	now := time.Now().UTC().Truncate(time.Minute)
	var lastFailed *store.ResultRow
	for at := now.Add(-time.Duration(h.hours) * time.Hour); !at.After(now); at = at.Add(h.interval) {
		job := uuid.New()
		var rows []store.ResultRow
		for region, base := range h.baseMs {
			ms := base*(1+0.25*math.Sin(float64(at.Unix())/5400)) + rng.Float64()*base*0.3
			failed, why := false, ""
			if h.fails != nil {
				failed, why = h.fails(region, at)
			}
			code := int32(200)
			summary := fmt.Sprintf("HTTP %d in %.0f ms", code, ms)
			if failed {
				code, summary = 503, why
			}
			dns, connect, tls := base*0.08, base*0.15, base*0.2
			first := ms - dns - connect - tls
			row := store.ResultRow{ID: uuid.Must(uuid.NewV7()), OrgID: org, CheckID: uuid.MustParse(checkID), JobID: job,
				Region: region, AttemptNumber: 1, IsFinalAttempt: true, ScheduledAt: at, CheckedAt: at.Add(2 * time.Second),
				Passing: !failed, ResponseTimeMs: ms, ResponseCode: &code, ResultSummary: &summary, BodyAvailability: "NOT_RECORDED",
				DNSTimeMs: &dns, ConnectTimeMs: &connect, TLSTimeMs: &tls, FirstByteTimeMs: &first,
				Details: fmt.Appendf(nil, `{"timings": {"dns_ms": %v, "connect_ms": %v, "tls_ms": %v, "first_byte_ms": %v, "total_ms": %v}%s}`,
					dns, connect, tls, first, ms, tlsChainJSON(h.certificates, region))}
			if failed {
				src, typ := "TRANSPORT", "HTTP_STATUS"
				row.FailureSource, row.FailureType = &src, &typ
			}
			rows = append(rows, row)
		}
		for i := range rows {
			if !rows[i].Passing {
				lastFailed = &rows[i]
			}
		}
		if lastFailed != nil && at.Equal(now) && h.screenshot != nil {
			lastFailed.Screenshot = h.screenshot
			// What the script kept: a screenshot taken with a path and a text attachment.
			lastFailed.Artifacts = []store.Artifact{
				{Name: "shots-cart.png", ContentType: "image/png", Body: h.screenshot},
				{Name: "notes.txt", ContentType: "text/plain", Body: []byte("cart id 42")},
			}
		}
		if _, err := ev.IngestBatch(context.Background(), rows); err != nil {
			s.t.Fatal(err)
		}
	}
}

// tlsChainJSON is the tls_chain member of a result's details for the certificate region is
// served, as ingest stores it; "" when the history has none.
func tlsChainJSON(certs map[string][2]string, region string) string {
	c, ok := certs[region]
	if !ok {
		return ""
	}
	return fmt.Sprintf(`, "tls_chain": {"host": "shop.example.com", "verified": true, "certificates": [{"subject": "CN=shop.example.com",
		"issuer": "CN=Example CA", "sans": ["shop.example.com"], "not_before": "2026-01-01T00:00:00Z", "not_after": %q, "sha256": %q}]}`, c[1], c[0])
}

// failingIn fails the runs of the given regions from since ago until now.
func failingIn(since time.Duration, why string, regions ...string) func(string, time.Time) (bool, string) {
	return func(region string, t time.Time) (bool, string) {
		if time.Since(t) > since {
			return false, ""
		}
		for _, r := range regions {
			if r == region {
				return true, why
			}
		}
		return false, ""
	}
}

// outage fails every region's runs between from and to ago.
func outage(from, to time.Duration, why string) func(string, time.Time) (bool, string) {
	return func(_ string, t time.Time) (bool, string) {
		ago := time.Since(t)
		return ago <= from && ago >= to, why
	}
}

var threeRegions = map[string]float64{"cloud:us-east-1": 70, "cloud:eu-central-1": 120, "cloud:ap-south-1": 230}
