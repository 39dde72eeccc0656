package ingest

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/vantagehq/vantage/pkg/testwait"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

func TestAuthentication(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	for _, tc := range []struct{ name, token string }{
		{"no token", ""},
		{"wrong token", "not-the-agent-token-0123456789"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stream, _ := h.dial(tc.token)
			_ = stream.Send(&vantagev1.AgentMessage{Msg: &vantagev1.AgentMessage_Register{
				Register: &vantagev1.Register{AgentId: "a1", Regions: []string{"cloud:us-east-1"}}}})
			_, err := stream.Recv()
			if status.Code(err) != codes.Unauthenticated {
				t.Fatalf("Recv: %v, want Unauthenticated", err)
			}
		})
	}
	if n := len(h.srv.LiveRegions()); n != 0 {
		t.Fatalf("rejected agents were registered: %v", h.srv.LiveRegions())
	}
}

func TestRegisterFirst(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{})
	for _, tc := range []struct {
		name  string
		first *vantagev1.AgentMessage
	}{
		{"result before register", &vantagev1.AgentMessage{Msg: &vantagev1.AgentMessage_Result{Result: &vantagev1.ResultEnvelope{
			Seq: 1, Result: h.result(checkID, uuid.New(), "cloud:us-east-1", true, h.clock.Now())}}}},
		{"register without regions", &vantagev1.AgentMessage{Msg: &vantagev1.AgentMessage_Register{
			Register: &vantagev1.Register{AgentId: "a1"}}}},
		{"register with a bad region", &vantagev1.AgentMessage{Msg: &vantagev1.AgentMessage_Register{
			Register: &vantagev1.Register{AgentId: "a1", Regions: []string{"us-east-1"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stream, _ := h.dial(testToken)
			if err := stream.Send(tc.first); err != nil {
				t.Fatal(err)
			}
			_, err := stream.Recv()
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("Recv: %v, want InvalidArgument", err)
			}
		})
	}
	if n := h.count(`SELECT count(*) FROM check_results`); n != 0 {
		t.Fatalf("%d results stored from unregistered streams", n)
	}
}

func TestRegistryTracksLiveRegions(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	a := h.connect("a1", "cloud:us-east-1", "cloud:eu-west-1")
	b := h.register("a2", []string{"browser"}, "cloud:us-east-1")
	want := map[string]int{"cloud:us-east-1": 2, "cloud:eu-west-1": 1}
	if got := h.srv.LiveRegions(); !equalCounts(got, want) {
		t.Fatalf("LiveRegions = %v, want %v", got, want)
	}
	agents := h.srv.Registry().Agents()
	i := slices.IndexFunc(agents, func(x Agent) bool { return x.AgentID == "a1" })
	if len(agents) != 2 || i < 0 || agents[i].SessionID != a.session || !slices.Equal(agents[i].Regions, []string{"cloud:eu-west-1", "cloud:us-east-1"}) {
		t.Fatalf("Agents = %+v", agents)
	}
	if agents[i].HasBrowser() || !agents[1-i].HasBrowser() {
		t.Errorf("capabilities: a1 (none) has a browser: %v; a2 (browser) has one: %v", agents[i].HasBrowser(), agents[1-i].HasBrowser())
	}
	a.cancel() // killed
	testwait.Eventually(t, 5*time.Second, testwait.Holds("a1 to leave the registry", func() bool {
		return equalCounts(h.srv.LiveRegions(), map[string]int{"cloud:us-east-1": 1})
	}))
	if err := b.stream.CloseSend(); err != nil { // a clean goodbye
		t.Fatal(err)
	}
	if _, err := b.stream.Recv(); err == nil {
		t.Fatal("stream still open after CloseSend")
	}
	testwait.Eventually(t, 5*time.Second, testwait.Holds("a2 to leave the registry", func() bool { return len(h.srv.LiveRegions()) == 0 }))
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestResultsStoredAndAcked(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{})
	a := h.connect("a1", "cloud:us-east-1")
	job := uuid.New()
	now := h.clock.Now()

	first := h.result(checkID, job, "cloud:us-east-1", false, now)
	first.IsFinalAttempt = false
	body, summary, tlsNotAfter := "hello\x00world", "timed out", now.Add(30*24*time.Hour).UnixMilli()
	first.ResponseBody, first.ResultSummary, first.TlsNotAfterUnixMs = &body, &summary, &tlsNotAfter
	first.BodyAvailability = "AVAILABLE"
	dns, connect, data := 1.5, 2.5, 3.5
	first.Timings = &vantagev1.Timings{DnsMs: &dns, ConnectMs: &connect, DataMs: &data, TotalMs: 190}
	first.Assertions = []*vantagev1.AssertionOutcome{{Assertion: &vantagev1.Assertion{Type: "STATUS_CODE",
		Property: "", Comparison: "EQUALS", Expected: "200"}, Passed: false, Actual: "0", Message: "no response"}}
	first.TlsChain = &vantagev1.TLSChain{Host: "shop.example", Problem: "host mismatch for shop.example", Certificates: []*vantagev1.TLSCertificate{
		{Subject: "CN=other\x00.example", Issuer: "CN=CA", Sans: []string{"other.example"}, NotBeforeUnixMs: now.UnixMilli(),
			NotAfterUnixMs: tlsNotAfter, Sha256: "ab12"}}}
	second := h.result(checkID, job, "cloud:us-east-1", true, now)
	second.AttemptNumber = 2
	a.report(first, second)

	var (
		n                          int
		gotBody, availability      string
		dnsMs, connectMs, dataMs   float64
		agentID, tlsExpiry, assert string
		final                      bool
	)
	err := h.st.Pool().QueryRow(context.Background(), `SELECT count(*) OVER (), response_body, body_availability,
			dns_time_ms, connect_time_ms, data_time_ms, details->>'agent_id', details->>'tls_not_after',
			details->'assertions'->0->>'comparison', is_final_attempt
		FROM check_results WHERE check_id = $1 ORDER BY attempt_number LIMIT 1`, checkID).Scan(
		&n, &gotBody, &availability, &dnsMs, &connectMs, &dataMs, &agentID, &tlsExpiry, &assert, &final)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || gotBody != "helloworld" || availability != "AVAILABLE" || dnsMs != 1.5 || connectMs != 2.5 ||
		dataMs != 3.5 || agentID != "agent-cloud:us-east-1" || tlsExpiry == "" || assert != "EQUALS" || final {
		t.Fatalf("stored: n=%d body=%q availability=%s timings=%v/%v/%v agent=%s tls=%s assertion=%s final=%v",
			n, gotBody, availability, dnsMs, connectMs, dataMs, agentID, tlsExpiry, assert, final)
	}
	if got := h.state(checkID); got != "UP" {
		t.Fatalf("state %s after a passing final attempt, want UP (the non-final failure is not judged)", got)
	}
	// The served chain is read back by the results API as it was stored.
	items, _, err := h.st.ListCheckResults(context.Background(), h.org, checkID, now.Add(-time.Hour), now.Add(time.Hour), 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].TLSChain == nil || items[1].TLSChain != nil {
		t.Fatalf("stored chains: %+v", items)
	}
	c := items[0].TLSChain
	if c.Host != "shop.example" || c.Verified || c.Problem != "host mismatch for shop.example" || len(c.Certificates) != 1 ||
		c.Certificates[0].Subject != "CN=other.example" || c.Certificates[0].SHA256 != "ab12" ||
		!c.Certificates[0].NotAfter.Equal(time.UnixMilli(tlsNotAfter)) || c.Certificates[0].SANs[0] != "other.example" {
		t.Fatalf("stored chain %+v", c)
	}
}

func TestInvalidAndUnknownResults(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{})
	a := h.connect("a1", "cloud:us-east-1")
	now := h.clock.Now()

	bad := h.result(checkID, uuid.New(), "cloud:us-east-1", true, now)
	bad.JobId = "not-a-uuid"
	otherRegion := h.result(checkID, uuid.New(), "cloud:eu-west-1", true, now)
	deleted := h.result(uuid.New(), uuid.New(), "cloud:us-east-1", true, now)
	otherOrg := h.result(checkID, uuid.New(), "cloud:us-east-1", true, now)
	otherOrg.OrgId = uuid.NewString()
	seqBad, seqRegion := a.send(bad), a.send(otherRegion)
	seqDeleted, seqOrg := a.send(deleted), a.send(otherOrg)
	acks := a.acks(4)
	for _, seq := range []uint64{seqBad, seqRegion} {
		if acks[seq].GetStored() || !strings.Contains(acks[seq].GetError(), "invalid result") {
			t.Errorf("invalid result %d: ack %v, want stored=false with an error", seq, acks[seq])
		}
	}
	for _, seq := range []uint64{seqDeleted, seqOrg} {
		if !acks[seq].GetStored() {
			t.Errorf("result of an unknown check %d: ack %v, want stored=true (dropped)", seq, acks[seq])
		}
	}
	if n := h.count(`SELECT count(*) FROM check_results`); n != 0 {
		t.Fatalf("%d results stored, want none", n)
	}
	if got := h.state(checkID); got != "PENDING" {
		t.Fatalf("state %s, want PENDING", got)
	}
}

func TestDuplicateResultStoredOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{})
	a := h.connect("a1", "cloud:us-east-1")
	r := h.result(checkID, uuid.New(), "cloud:us-east-1", true, h.clock.Now())
	a.report(r, r) // the same result twice, most likely in one batch
	a.report(r)    // and once more in a later one
	if n := h.count(`SELECT count(*) FROM check_results WHERE check_id = $1`, checkID); n != 1 {
		t.Fatalf("%d rows stored, want 1", n)
	}
}

// TestDrainEndsStreams: on shutdown, Drain ends every open agent stream with Unavailable (after
// the acks of the results it took) and refuses new streams, so that grpc.Server.GracefulStop
// need not wait for agents, whose streams never end on their own.
func TestDrainEndsStreams(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{})
	a := h.connect("a1", "cloud:us-east-1")
	a.report(h.result(checkID, uuid.New(), "cloud:us-east-1", true, h.clock.Now()))
	testwait.Eventually(t, 5*time.Second, testwait.Holds("the agent to be registered", func() bool { return h.srv.LiveRegions()["cloud:us-east-1"] == 1 }))

	h.srv.Drain()
	ended := make(chan error, 1)
	go func() {
		_, err := a.stream.Recv()
		ended <- err
	}()
	select {
	case err := <-ended:
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("stream ended with %v, want Unavailable", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream is still open 5s after Drain")
	}
	testwait.Eventually(t, 5*time.Second, testwait.Holds("the agent to leave the registry", func() bool { return len(h.srv.LiveRegions()) == 0 }))

	stream, _ := h.dial(testToken)
	if err := stream.Send(&vantagev1.AgentMessage{Msg: &vantagev1.AgentMessage_Register{Register: &vantagev1.Register{
		AgentId: "a2", Regions: []string{"cloud:us-east-1"}}}}); err != nil && err != io.EOF {
		// io.EOF: the server already ended the stream; Recv below reports its status.
		t.Fatal(err)
	}
	if _, err := stream.Recv(); status.Code(err) != codes.Unavailable {
		t.Fatalf("a stream opened while draining got %v, want Unavailable", err)
	}
}

// TestAgentKilledMidJob: agent A reports its attempts and dies before acking the job to
// JetStream; the job is redelivered to agent B, which runs it again. B's results are acked
// (stored) but the run is stored and counted once: one uptime.down, one incident.
func TestAgentKilledMidJob(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{confirmation: 0})
	job, now := uuid.New(), h.clock.Now()
	attempt := func(n uint32, final bool) *vantagev1.CheckResult {
		r := h.result(checkID, job, "cloud:us-east-1", false, now)
		r.AttemptNumber, r.IsFinalAttempt = n, final
		r.CheckedAtUnixMs += int64(n) * 1000
		return r
	}
	a := h.connect("agent-a", "cloud:us-east-1")
	a.report(attempt(1, false), attempt(2, true))
	a.cancel()

	b := h.connect("agent-b", "cloud:us-east-1")
	b.report(attempt(1, false), attempt(2, true))

	if n := h.count(`SELECT count(*) FROM check_results WHERE check_id = $1`, checkID); n != 2 {
		t.Fatalf("%d results stored, want 2 (one per attempt)", n)
	}
	if got := h.state(checkID); got != "DOWN" {
		t.Fatalf("state %s, want DOWN", got)
	}
	if ob := h.outbox(checkID); len(ob) != 1 || ob[0].event != "uptime.down" {
		t.Fatalf("outbox %+v, want one uptime.down", ob)
	}
	if inc := h.incidents(checkID); len(inc) != 1 {
		t.Fatalf("%d incidents, want 1", len(inc))
	}
}

// TestRedeliveredJobRestartsAttempts: agent A stores a failing, non-final attempt 1 and dies;
// agent B runs the redelivered job from attempt 1, which passes and is final. B's final attempt
// must count (it is not a duplicate of A's non-final attempt 1), so the check goes UP.
func TestRedeliveredJobRestartsAttempts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{confirmation: 0})
	job, now := uuid.New(), h.clock.Now()
	a := h.connect("agent-a", "cloud:us-east-1")
	first := h.result(checkID, job, "cloud:us-east-1", false, now)
	first.AttemptNumber, first.IsFinalAttempt = 1, false
	a.report(first)
	a.cancel()

	b := h.connect("agent-b", "cloud:us-east-1")
	rerun := h.result(checkID, job, "cloud:us-east-1", true, now)
	rerun.AttemptNumber, rerun.IsFinalAttempt = 1, true
	rerun.CheckedAtUnixMs += 5000
	b.report(rerun)

	if n := h.count(`SELECT count(*) FROM check_results WHERE check_id = $1`, checkID); n != 2 {
		t.Fatalf("%d results stored, want 2 (A's non-final and B's final attempt 1)", n)
	}
	testwait.Eventually(t, 5*time.Second, testwait.Holds("the run to be judged UP", func() bool { return h.state(checkID) == "UP" }))
}
