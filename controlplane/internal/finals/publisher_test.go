package finals

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/shard"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// A batch's finals over several shards travel as one message per shard, on the shard's
// subject, and decode field by field into what was published; attempts that are not final,
// and runs not run, stay home.
func TestPublishSendsOneMessagePerShardOfTheFinals(t *testing.T) {
	t.Parallel()
	nc := connect(t)
	pfx := prefix()
	h := listen(t, nc, pfx)
	reg := prometheus.NewRegistry()
	p, err := NewPublisher(PublisherConfig{SubjectPrefix: pfx}, PublisherDeps{NATS: nc, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}

	org := uuid.New()
	shards := []int{0, 7, 255}
	want := map[int][]store.ResultRow{}
	for i, k := range shards {
		for j := range i + 1 { // 1, 2 and 3 finals, of one check or two
			want[k] = append(want[k], final(org, checkIn(k), j%2 == 0))
		}
	}
	source := "TARGET"
	want[7][0].FailureSource = &source
	notAfter := time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
	want[7][1].Details = json.RawMessage(`{"timings":{"total_ms":12},"tls_chain":{"host":"example.com","verified":true,"certificates":[` +
		`{"subject":"CN=example.com","issuer":"CN=Test CA","sans":["example.com"],"not_before":"2026-01-02T03:04:05Z","not_after":"2027-01-02T03:04:05Z","sha256":"ab12"},` +
		`{"subject":"CN=Test CA","issuer":"CN=Test CA","not_after":"2030-01-01T00:00:00Z","sha256":"cd34"}]}}`)
	want[255][2].Details = json.RawMessage(`{"timings":{"total_ms":12}}`) // no chain: nothing for certwatch
	var rows []store.ResultRow
	for _, k := range shards {
		rows = append(rows, want[k]...)
	}
	notFinal := final(org, checkIn(3), false)
	notFinal.IsFinalAttempt, notFinal.AttemptNumber = false, 1
	notRun := final(org, checkIn(4), false)
	notRun.NotRunReason = "EXPIRED"
	rows = append(rows, notFinal, notRun)

	if err := p.Publish(rows); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 5*time.Second, h.count(len(shards)))
	time.Sleep(100 * time.Millisecond) // anything more would come now
	msgs := h.snapshot()
	if len(msgs) != len(shards) {
		t.Fatalf("%d messages, want one per shard (%d)", len(msgs), len(shards))
	}
	bySubject := map[string][]store.ResultRow{}
	for _, m := range msgs {
		got, err := Decode(m.Data)
		if err != nil {
			t.Fatalf("%s: %v", m.Subject, err)
		}
		bySubject[m.Subject] = got
	}
	for _, k := range shards {
		got, ok := bySubject[Subject(pfx, k)]
		if !ok {
			t.Fatalf("no message on %s; heard %v", Subject(pfx, k), slices.Collect(maps.Keys(bySubject)))
		}
		if len(got) != len(want[k]) {
			t.Fatalf("shard %d: %d finals, want %d", k, len(got), len(want[k]))
		}
		for i := range got {
			sameFinal(t, got[i], want[k][i])
		}
	}
	if leaf := leafOfRow(t, bySubject[Subject(pfx, 7)][1]); leaf == nil || leaf.SHA256 != "ab12" || leaf.Subject != "CN=example.com" ||
		leaf.Issuer != "CN=Test CA" || !leaf.NotAfter.Equal(notAfter) {
		t.Errorf("the leaf certificate certwatch reads did not travel: %+v", leaf)
	}
	if got := metric(reg, "vantage_finals_published_total"); got != 6 {
		t.Errorf("vantage_finals_published_total %v, want 6", got)
	}
	if got := metric(reg, "vantage_finals_published_messages_total"); got != 3 {
		t.Errorf("vantage_finals_published_messages_total %v, want 3", got)
	}
	if got := metric(reg, "vantage_finals_published_bytes_total"); got <= 0 {
		t.Errorf("vantage_finals_published_bytes_total %v", got)
	}
}

// sameFinal compares every field the judge reads; Details only as far as certwatch reads it.
func sameFinal(t *testing.T, got, want store.ResultRow) {
	t.Helper()
	if got.ID != want.ID || got.OrgID != want.OrgID || got.CheckID != want.CheckID || got.JobID != want.JobID ||
		got.Region != want.Region || got.AttemptNumber != want.AttemptNumber || !got.IsFinalAttempt ||
		!got.ScheduledAt.Equal(want.ScheduledAt) || !got.CheckedAt.Equal(want.CheckedAt) ||
		got.Passing != want.Passing || got.ResponseTimeMs != want.ResponseTimeMs || got.NotRunReason != "" {
		t.Errorf("final decoded as\n%+v\nwant\n%+v", got, want)
	}
	if (got.FailureSource == nil) != (want.FailureSource == nil) || (got.FailureSource != nil && *got.FailureSource != *want.FailureSource) {
		t.Errorf("final %s: failure source %v, want %v", want.ID, got.FailureSource, want.FailureSource)
	}
	if wl, gl := leafOfRow(t, want), leafOfRow(t, got); (wl == nil) != (gl == nil) ||
		(wl != nil && (wl.SHA256 != gl.SHA256 || wl.Subject != gl.Subject || wl.Issuer != gl.Issuer || !wl.NotAfter.Equal(gl.NotAfter))) {
		t.Errorf("final %s: leaf certificate %+v, want %+v", want.ID, gl, wl)
	}
}

// leafOfRow reads the leaf certificate from a row's details as certwatch does; nil without one.
func leafOfRow(t *testing.T, r store.ResultRow) *store.TLSCertificate {
	t.Helper()
	if r.Details == nil {
		return nil
	}
	var d struct {
		TLSChain *store.TLSChain `json:"tls_chain"`
	}
	if err := json.Unmarshal(r.Details, &d); err != nil {
		t.Fatalf("details of %s: %v", r.ID, err)
	}
	if d.TLSChain == nil || len(d.TLSChain.Certificates) == 0 {
		return nil
	}
	return &d.TLSChain.Certificates[0]
}

// The sink stores a batch in PostgreSQL, unjudged, and publishes its finals; the same batch
// again (an agent's redelivery after a failed publish) is stored as duplicates and published
// again.
func TestSinkStoresThenPublishesEvenDuplicates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	c := storetest.Check(t, st, nil)
	nc := connect(t)
	pfx := prefix()
	h := listen(t, nc, pfx)
	p, err := NewPublisher(PublisherConfig{SubjectPrefix: pfx}, PublisherDeps{NATS: nc})
	if err != nil {
		t.Fatal(err)
	}
	sink := NewSink(st, p)

	first := final(c.OrgID, c.ID, false)
	first.IsFinalAttempt, first.AttemptNumber = false, 1
	last := final(c.OrgID, c.ID, true)
	last.JobID = first.JobID
	batch := []store.ResultRow{first, last}

	stats, err := sink.IngestBatch(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Stored != 2 {
		t.Fatalf("stored %d rows, want 2: %+v", stats.Stored, stats)
	}
	var stored int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM check_results WHERE check_id = $1`, c.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != 2 {
		t.Fatalf("%d rows in check_results, want 2", stored)
	}
	var runs int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM check_runs WHERE check_id = $1`, c.ID).Scan(&runs); err != nil {
		t.Fatal(err)
	}
	if runs != 0 {
		t.Errorf("%d runs being judged: the sink judged the batch", runs)
	}
	testwait.Eventually(t, 5*time.Second, h.count(1))

	stats, err = sink.IngestBatch(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Duplicates != 2 || stats.Stored != 0 {
		t.Fatalf("again: %+v, want 2 duplicates", stats)
	}
	testwait.Eventually(t, 5*time.Second, h.count(2))
	for i, m := range h.snapshot() {
		got, err := Decode(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		if m.Subject != Subject(pfx, shard.Of(c.ID)) || len(got) != 1 || got[0].ID != last.ID {
			t.Errorf("message %d on %s: %d finals, want the final attempt on its shard's subject", i, m.Subject, len(got))
		}
	}

	// A connection that cannot publish fails the batch, though it was stored: the agent sends
	// it again.
	closed := connect(t)
	reg := prometheus.NewRegistry()
	p, err = NewPublisher(PublisherConfig{SubjectPrefix: pfx}, PublisherDeps{NATS: closed, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	again := final(c.OrgID, c.ID, true)
	if _, err := NewSink(st, p).IngestBatch(ctx, []store.ResultRow{again}); err == nil {
		t.Error("a batch whose finals were not published succeeded")
	}
	if got := metric(reg, "vantage_finals_publish_errors_total"); got != 1 {
		t.Errorf("vantage_finals_publish_errors_total %v, want 1", got)
	}
}
