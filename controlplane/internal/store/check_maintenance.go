package store

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vantagehq/vantage/controlplane/internal/recurrence"
)

// What the check reads in checks.go use to decide MAINTENANCE in the same query as the check.
// They go away when those reads move to the query layer (the windows then come from
// CheckWindowSchedules, maintenance_windows.sql).

// checkWindowsColumn is a select-list column of a query on checks: the enabled maintenance
// windows of the row's check as a JSON array, for windowsActive. Windows per check are few.
const checkWindowsColumn = `(SELECT coalesce(json_agg(json_build_object('start', w.start_date,
		'duration', w.duration_minutes, 'tz', w.timezone, 'days', w.days_of_week)), '[]')
	FROM maintenance_window_checks l JOIN maintenance_windows w ON w.org_id = l.org_id AND w.id = l.window_id
	WHERE l.check_id = checks.id AND l.org_id = checks.org_id AND w.status = 'ENABLED')`

// windowsActive reports whether any window of a checkWindowsColumn value is active at now.
func windowsActive(raw []byte, now time.Time) (bool, error) {
	if len(raw) == 0 {
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

// rowWithExtra reads a row whose last column comes after what a shared scan function reads.
type rowWithExtra struct {
	row   pgx.Row
	extra any
}

func (r rowWithExtra) Scan(dest ...any) error { return r.row.Scan(append(dest, r.extra)...) }
