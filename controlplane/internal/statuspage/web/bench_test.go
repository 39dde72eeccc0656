package web

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkRenderStatusPage serves the public page of a status page with 50 components (five
// groups of ten), each fed by a check with 90 days of daily counters in PostgreSQL: both
// queries, the view, the template and gzip ("render", the cache off), and from the
// render cache ("cached"; the page lookup still runs). It reports per-request p50/p99 and the page's size,
// raw and gzip-compressed.
//
//	go test ./internal/statuspage/web -run '^$' -bench RenderStatusPage -benchtime 2000x
func BenchmarkRenderStatusPage(b *testing.B) {
	st := newStore(b)
	f := bigFixture(b, st, "big", 50, 90)
	for _, bc := range []struct {
		name string
		ttl  time.Duration
	}{{"render", -1}, {"cached", 5 * time.Second}} {
		b.Run(bc.name, func(b *testing.B) {
			h := f.handler(Config{CacheTTL: bc.ttl})
			request := func(gzip bool) *httptest.ResponseRecorder {
				req := httptest.NewRequest(http.MethodGet, "/status/big", nil)
				if gzip {
					req.Header.Set("Accept-Encoding", "gzip")
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d", rec.Code)
				}
				return rec
			}
			plain := request(false)
			if n := strings.Count(plain.Body.String(), `role="img"`); n != 50*90 {
				b.Fatalf("%d bars, want 4500", n)
			}
			raw := plain.Body.Len()
			compressed := request(true).Body.Len()

			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				request(true)
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(lat)
			pct := func(p float64) float64 { return float64(lat[int(float64(len(lat)-1)*p)].Microseconds()) / 1000 }
			b.ReportMetric(pct(0.50), "p50_ms")
			b.ReportMetric(pct(0.99), "p99_ms")
			b.ReportMetric(float64(raw), "html_bytes")
			b.ReportMetric(float64(compressed), "gzip_bytes")
		})
	}
}
