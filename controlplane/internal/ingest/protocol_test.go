package ingest

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// registerProtocol registers an agent that asks for stream protocol version v and returns its
// stream and the version the server agreed to.
func (h *harness) registerProtocol(v uint32, regions ...string) (*agent, uint32) {
	h.t.Helper()
	stream, cancel := h.dial(testToken)
	if err := stream.Send(&vantagev1.AgentMessage{Msg: &vantagev1.AgentMessage_Register{Register: &vantagev1.Register{
		AgentId: "batcher", Regions: regions, Version: "test", Capacity: 8, ProtocolVersion: v}}}); err != nil {
		h.t.Fatal(err)
	}
	m, err := stream.Recv()
	if err != nil {
		h.t.Fatal(err)
	}
	return &agent{t: h.t, stream: stream, cancel: cancel, session: m.GetRegistered().GetSessionId(), sign: h.sign},
		m.GetRegistered().GetProtocolVersion()
}

// sendBatch sends results in one ResultBatch, numbered from seq 1.
func (a *agent) sendBatch(results ...*vantagev1.CheckResult) {
	a.t.Helper()
	b := &vantagev1.ResultBatch{}
	for _, r := range results {
		if len(r.JobSignature) == 0 {
			a.sign(r)
		}
		a.seq++
		b.Results = append(b.Results, &vantagev1.ResultEnvelope{Seq: a.seq, Result: r})
	}
	if err := a.stream.Send(&vantagev1.AgentMessage{Msg: &vantagev1.AgentMessage_Results{Results: b}}); err != nil {
		a.t.Fatal(err)
	}
}

// batchAcks receives ResultAckBatch messages until n acks arrived, and how many messages
// carried them.
func (a *agent) batchAcks(n int) (map[uint64]*vantagev1.ResultAck, int) {
	a.t.Helper()
	out := map[uint64]*vantagev1.ResultAck{}
	msgs := 0
	for len(out) < n {
		m, err := a.stream.Recv()
		if err != nil {
			a.t.Fatalf("waiting for %d acks, got %d: %v", n, len(out), err)
		}
		if m.GetAcks() == nil {
			a.t.Fatalf("got %v, want a ResultAckBatch", m)
		}
		msgs++
		for _, ack := range m.GetAcks().GetAcks() {
			out[ack.GetSeq()] = ack
		}
	}
	return out, msgs
}

func TestProtocolVersionIsTheLowerOfBoth(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	for _, tt := range []struct{ ask, want uint32 }{{0, 1}, {1, 1}, {2, 2}, {3, 3}, {99, wire.StreamProtocol}} {
		if _, got := h.registerProtocol(tt.ask, "cloud:us-east-1"); got != tt.want {
			t.Errorf("agent asking for %d got protocol %d, want %d", tt.ask, got, tt.want)
		}
	}
}

func TestBatchedResultsAndNotRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{})
	a, v := h.registerProtocol(2, "cloud:us-east-1")
	if v != 2 {
		t.Fatalf("protocol %d, want 2", v)
	}
	now := h.clock.Now()
	var results []*vantagev1.CheckResult
	for i := range 40 {
		results = append(results, h.result(checkID, uuid.New(), "cloud:us-east-1", true, now.Add(-time.Duration(i)*time.Second)))
	}
	dup := h.result(checkID, uuid.MustParse(results[0].GetJobId()), "cloud:us-east-1", true, now.Add(0))
	dup.ScheduledAtUnixMs = results[0].GetScheduledAtUnixMs()
	expired := h.result(checkID, uuid.New(), "cloud:us-east-1", false, now)
	expired.NotRunReason = wire.NotRunExpired
	bogus := h.result(checkID, uuid.New(), "cloud:us-east-1", false, now)
	bogus.NotRunReason = "BORED"
	a.sendBatch(append(results, dup, expired, bogus)...)

	acks, msgs := a.batchAcks(43)
	for seq, ack := range acks {
		if want := seq != 43; ack.GetStored() != want {
			t.Errorf("ack of seq %d: stored=%v (%s), want %v", seq, ack.GetStored(), ack.GetError(), want)
		}
	}
	if msgs >= 43 {
		t.Errorf("43 acks came in %d messages, want them batched", msgs)
	}
	if n := h.count(`SELECT count(*) FROM check_results WHERE check_id = $1`, checkID); n != 40 {
		t.Errorf("%d rows stored, want 40 (the duplicate once, the not-run result and the refused one not as probes)", n)
	}
	if n := h.count(`SELECT count(*) FROM skipped_runs WHERE check_id = $1 AND reason = 'EXPIRED'`, checkID); n != 1 {
		t.Errorf("%d skipped runs recorded, want the not-run result's", n)
	}
}

// TestShedNeedsProtocolThree: the not-run reason SHED came with protocol 3; a version-2 stream
// reporting it is refused (its agent would report EXPIRED), a version-3 one records it.
func TestShedNeedsProtocolThree(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{})
	for _, tt := range []struct {
		protocol uint32
		stored   bool
	}{{2, false}, {3, true}} {
		a, v := h.registerProtocol(tt.protocol, "cloud:us-east-1")
		if v != tt.protocol {
			t.Fatalf("protocol %d, want %d", v, tt.protocol)
		}
		r := h.result(checkID, uuid.New(), "cloud:us-east-1", false, h.clock.Now())
		r.NotRunReason = wire.NotRunShed
		a.sendBatch(r)
		acks, _ := a.batchAcks(1)
		if ack := acks[1]; ack.GetStored() != tt.stored {
			t.Errorf("protocol %d: SHED result stored=%v (%s), want %v", tt.protocol, ack.GetStored(), ack.GetError(), tt.stored)
		}
	}
	if n := h.count(`SELECT count(*) FROM skipped_runs WHERE check_id = $1 AND reason = 'SHED'`, checkID); n != 1 {
		t.Errorf("%d SHED runs recorded, want the protocol-3 stream's", n)
	}
	if n := h.count(`SELECT count(*) FROM check_results WHERE check_id = $1`, checkID); n != 0 {
		t.Errorf("%d probe results stored for shed runs, want none", n)
	}
}

func TestProtocolOneRefusesBatchesAndNotRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	checkID := h.createCheck(checkSpec{})

	a := h.connect("old", "cloud:us-east-1")
	r := h.result(checkID, uuid.New(), "cloud:us-east-1", false, h.clock.Now())
	r.NotRunReason = wire.NotRunExpired
	a.send(r)
	if ack := a.acks(1)[1]; ack.GetStored() {
		t.Error("a protocol-1 stream's not-run result was accepted")
	}

	b := h.connect("old-batching", "cloud:us-east-1")
	b.sendBatch(h.result(checkID, uuid.New(), "cloud:us-east-1", true, h.clock.Now()))
	if _, err := b.stream.Recv(); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a batch on a protocol-1 stream: %v, want InvalidArgument", err)
	}
}

// TestCapabilitiesNegotiated: an agent that names capabilities gets those both sides have
// (and the protocol version that stands for them, for its older code paths); an old agent that
// sends only a version gets that version's set; a canary round is answered with the control
// plane's clock, and a round of an agent that names no canaries ends its stream.
func TestCapabilitiesNegotiated(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	register := func(caps []string, v uint32) (*vantagev1.Registered, vantagev1.AgentService_ConnectClient) {
		t.Helper()
		stream, _ := h.dial(testToken)
		if err := stream.Send(&vantagev1.AgentMessage{Msg: &vantagev1.AgentMessage_Register{Register: &vantagev1.Register{
			AgentId: "caps", Regions: []string{"cloud:us-east-1"}, Capabilities: caps, ProtocolVersion: v}}}); err != nil {
			t.Fatal(err)
		}
		m, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		return m.GetRegistered(), stream
	}
	for _, tc := range []struct {
		name     string
		caps     []string
		version  uint32
		want     []string
		protocol uint32
	}{
		{"old agent, version 1", nil, 1, []string{}, 1},
		{"old agent, version 3, with a browser", []string{wire.CapabilityBrowser}, 3,
			[]string{wire.CapabilityBatchedResults, wire.CapabilityShedReason}, 3},
		{"new agent", append([]string{wire.CapabilityBrowser}, wire.StreamCapabilities...), wire.StreamProtocol,
			[]string{wire.CapabilityBatchedResults, wire.CapabilityCanaries, wire.CapabilityShedReason}, 3},
		{"named canaries only", []string{wire.CapabilityCanaries, "teleport"}, 0, []string{wire.CapabilityCanaries}, 1},
	} {
		reg, _ := register(tc.caps, tc.version)
		got := reg.GetCapabilities()
		if got == nil {
			got = []string{}
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") || reg.GetProtocolVersion() != tc.protocol {
			t.Errorf("%s: capabilities %v protocol %d, want %v %d", tc.name, got, reg.GetProtocolVersion(), tc.want, tc.protocol)
		}
		if reg.GetServerTimeUnixMs() == 0 {
			t.Errorf("%s: Registered carries no server time", tc.name)
		}
	}

	_, stream := register(wire.StreamCapabilities, wire.StreamProtocol)
	if err := stream.Send(&vantagev1.AgentMessage{Msg: &vantagev1.AgentMessage_Canaries{Canaries: &vantagev1.CanaryReport{
		CheckedAtUnixMs: time.Now().UnixMilli(), AgentHealthy: true,
		Results: []*vantagev1.CanaryResult{{Target: "tcp://192.0.2.1:53", Kind: "tcp", Passing: true}}}}}); err != nil {
		t.Fatal(err)
	}
	m, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if m.GetCanaryAck().GetServerTimeUnixMs() == 0 { // the harness's clock: any instant it gives
		t.Errorf("canary round answered with %v, want a CanaryAck with the server's time", m)
	}

	_, old := register(nil, 3)
	if err := old.Send(&vantagev1.AgentMessage{Msg: &vantagev1.AgentMessage_Canaries{Canaries: &vantagev1.CanaryReport{}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Recv(); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a canary round without the capability: %v, want InvalidArgument", err)
	}
}
