package wire

import "slices"

// Capabilities of the agent stream, named in Register.capabilities and
// Registered.capabilities (proto/vantage/v1/agent.proto, "Capabilities"). Both sides use a
// capability only when the control plane's answer names it.
const (
	// CapabilityBatchedResults: ResultBatch and ResultAckBatch (many results and acks to a
	// message, pipelined), and results that report a run as not run (not_run_reason).
	CapabilityBatchedResults = "batched_results"
	// CapabilityShedReason: the not-run reason NotRunShed.
	CapabilityShedReason = "shed_reason"
	// CapabilityCanaries: CanaryReport and CanaryAck, the agent's canary probes and its own
	// health (docs/detection.md "Canaries").
	CapabilityCanaries = "canaries"
)

// StreamCapabilities are the stream capabilities this tree speaks (CapabilityBrowser is the
// agent's own, not the stream's: it is not negotiated).
var StreamCapabilities = []string{CapabilityBatchedResults, CapabilityShedReason, CapabilityCanaries}

// Capabilities is a set of capability names.
type Capabilities []string

// Has reports whether the set names c.
func (cs Capabilities) Has(c string) bool { return slices.Contains(cs, c) }

// ProtocolCapabilities are the capabilities a peer that predates named capabilities has,
// from the stream protocol version it sends (0 and 1: none).
func ProtocolCapabilities(version uint32) Capabilities {
	var out Capabilities
	if version >= 2 {
		out = append(out, CapabilityBatchedResults)
	}
	if version >= 3 {
		out = append(out, CapabilityShedReason)
	}
	return out
}

// PeerCapabilities are the stream capabilities a peer has: those it names, and those its
// protocol version stands for (a peer that predates names sends only the version; a newer
// one sends both, for older peers). Names this tree does not speak are dropped.
func PeerCapabilities(named []string, version uint32) Capabilities {
	out := ProtocolCapabilities(version)
	for _, c := range named {
		if slices.Contains(StreamCapabilities, c) && !out.Has(c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// Agreed are the capabilities both sides have: this tree's StreamCapabilities among the
// peer's.
func Agreed(peer Capabilities) Capabilities {
	out := Capabilities{}
	for _, c := range StreamCapabilities {
		if peer.Has(c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// ProtocolOf is the stream protocol version an older peer needs to use capabilities cs: the
// highest version all of whose capabilities cs has.
func ProtocolOf(cs Capabilities) uint32 {
	v := uint32(1)
	for next := uint32(2); next <= StreamProtocol; next++ {
		for _, c := range ProtocolCapabilities(next) {
			if !cs.Has(c) {
				return v
			}
		}
		v = next
	}
	return v
}

// Reasons an agent reports itself unhealthy (CanaryReport.agent_unhealthy_reason).
const (
	// AgentUnhealthyClock: its clock is off the control plane's beyond its bound. The control
	// plane leaves the agent's results out of verdicts at once: the measure is against the
	// control plane's own clock, so no misconfiguration can make every agent claim it.
	AgentUnhealthyClock = "clock"
	// AgentUnhealthyDNS: every DNS canary failed, it cannot resolve names.
	AgentUnhealthyDNS = "dns"
	// AgentUnhealthyRoute: every canary failed, it reaches nothing.
	AgentUnhealthyRoute = "route"
)
