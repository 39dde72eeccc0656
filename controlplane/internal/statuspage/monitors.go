package statuspage

// Monitor is the state of one check or heartbeat that feeds a component.
type Monitor struct {
	// State is the monitor's own state: PENDING, UP, VERIFYING, DOWN or RECOVERING for checks,
	// PENDING, UP or DOWN for heartbeats; DEGRADED for an UP check some of whose regions fail,
	// or that is slow (regional degradation and slowness, docs/detection.md). Muting does not change it (a muted monitor
	// still reports its real state; muting only silences alerts).
	State  string
	Paused bool
}

// FromMonitors is the status of a component that follows its linked checks and heartbeat
// (api/openapi/status-page-components.yaml [I]). Paused monitors and monitors without a verdict yet (PENDING) give no
// signal; among the others:
//
//	every one DOWN                         → MAJOR_OUTAGE
//	some DOWN                              → PARTIAL_OUTAGE
//	none DOWN, some VERIFYING / RECOVERING → DEGRADED_PERFORMANCE (failing, or recovering,
//	  / DEGRADED                             but not confirmed yet; or UP but failing in some
//	                                         regions, or slow)
//	otherwise (all UP, or no signal)       → OPERATIONAL
func FromMonitors(ms []Monitor) string {
	live, down, unsure := 0, 0, 0
	for _, m := range ms {
		if m.Paused {
			continue
		}
		switch m.State {
		case "DOWN":
			live++
			down++
		case "VERIFYING", "RECOVERING", "DEGRADED":
			live++
			unsure++
		case "UP":
			live++
		}
	}
	switch {
	case down > 0 && down == live:
		return MajorOutage
	case down > 0:
		return PartialOutage
	case unsure > 0:
		return DegradedPerformance
	}
	return Operational
}
