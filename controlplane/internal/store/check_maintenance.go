package store

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/recurrence"
)

// A check read decides MAINTENANCE in the same query as the check: the query returns the
// check's enabled windows as a JSON column, and windowsActive judges them at the read's time.

// windowsActive reports whether any window of a maintenance_windows JSON column value (see the
// check queries) is active at now.
func windowsActive(raw []byte, now time.Time) (bool, error) {
	if len(raw) == 0 || string(raw) == "[]" { // most checks: no window to decode
		return false, nil
	}
	var ws []struct {
		Start    time.Time `json:"start"`
		Duration int       `json:"duration"`
		TZ       string    `json:"tz"`
		Days     []int16   `json:"days"`
	}
	if err := json.Unmarshal(raw, &ws); err != nil {
		return false, fmt.Errorf("decode maintenance windows: %w", err)
	}
	for _, w := range ws {
		if recurrence.Active(schedule(w.Start, w.Duration, w.TZ, w.Days, true), now) {
			return true, nil
		}
	}
	return false, nil
}
