package wire

import (
	"slices"
	"testing"
)

// TestCapabilityNegotiation: agents and control planes of every age agree on the
// capabilities both have, whether they name them or send only a protocol version.
func TestCapabilityNegotiation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		named    []string
		protocol uint32
		want     []string
		version  uint32
	}{
		{"version 1 agent (nothing sent)", nil, 0, []string{}, 1},
		{"version 1 agent", []string{CapabilityBrowser}, 1, []string{}, 1},
		{"version 2 agent", nil, 2, []string{CapabilityBatchedResults}, 2},
		{"version 3 agent with a browser", []string{CapabilityBrowser}, 3, []string{CapabilityBatchedResults, CapabilityShedReason}, 3},
		{"named agent", []string{CapabilityBatchedResults, CapabilityShedReason, CapabilityCanaries}, 3,
			[]string{CapabilityBatchedResults, CapabilityCanaries, CapabilityShedReason}, 3},
		{"named agent without batching", []string{CapabilityCanaries}, 0, []string{CapabilityCanaries}, 1},
		{"unknown names are dropped", []string{"teleport", CapabilityCanaries}, 2,
			[]string{CapabilityBatchedResults, CapabilityCanaries}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Agreed(PeerCapabilities(tc.named, tc.protocol))
			if !slices.Equal(got, tc.want) {
				t.Errorf("Agreed = %v, want %v", got, tc.want)
			}
			if v := ProtocolOf(got); v != tc.version {
				t.Errorf("ProtocolOf(%v) = %d, want %d", got, v, tc.version)
			}
		})
	}
}

// TestProtocolCapabilitiesRoundTrip: every protocol version maps to capabilities that map
// back to it, so an old peer told the version of the agreed set uses exactly that set.
func TestProtocolCapabilitiesRoundTrip(t *testing.T) {
	t.Parallel()
	for v := uint32(1); v <= StreamProtocol; v++ {
		if got := ProtocolOf(ProtocolCapabilities(v)); got != v {
			t.Errorf("ProtocolOf(ProtocolCapabilities(%d)) = %d", v, got)
		}
	}
}
