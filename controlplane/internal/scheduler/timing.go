package scheduler

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/rungrid"
)

// Times inside the schedule are Unix milliseconds: the unit of CheckJob.scheduled_at_unix_ms,
// cheap to compare, and free of monotonic-clock surprises.

// noTime marks "never" (no run published yet).
const noTime = math.MinInt64

func unixMs(t time.Time) int64 { return t.UnixMilli() }

// phase is the check's deterministic offset within its interval (rungrid.Phase). Every
// replica computes the same phase, so a new leader keeps each check's rhythm.
func phase(id uuid.UUID, interval time.Duration) int64 { return rungrid.Phase(id, interval) }

// grid is an arithmetic sequence of due times: base + k·step, restricted to points ≥ min.
type grid struct {
	base, step int64
	min        int64 // noTime: unrestricted
}

// after is the first point of g strictly after t.
func (g grid) after(t int64) int64 {
	k := floorDiv(t-g.base, g.step) + 1
	p := g.base + k*g.step
	if p < g.min {
		p = g.min
	}
	return p
}

// firstDue is the first run of g to publish for a check whose runs due up to lastDone were
// handled (noTime: none known). A check that missed runs — due after lastDone and by now —
// runs once, at once and late: the newest missed point, not a burst of all of them and not
// none. Otherwise, and without history, it is the first point from now on.
func (g grid) firstDue(lastDone, now int64) int64 {
	if lastDone != noTime {
		if p := g.atOrBefore(now); p > lastDone {
			return p
		}
	}
	return g.after(now - 1)
}

// atOrBefore is the last point of g at or before t, or noTime when g has none.
func (g grid) atOrBefore(t int64) int64 {
	p := g.base + floorDiv(t-g.base, g.step)*g.step
	if p < g.min {
		return noTime
	}
	return p
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// regularGrid is a check's normal rhythm: every interval, at its phase.
func regularGrid(id uuid.UUID, interval time.Duration) grid {
	return grid{base: phase(id, interval), step: interval.Milliseconds(), min: noTime}
}

// confirmGrid is the rhythm of confirmation runs: every cadence after the state change that
// started the confirmation (anchor), the first one cadence after it.
func confirmGrid(anchor int64, cadence time.Duration) grid {
	step := cadence.Milliseconds()
	return grid{base: anchor, step: step, min: anchor + step}
}

// confirmCadence is how often a VERIFYING or RECOVERING check runs: a third of the period to
// confirm, so the third confirmation run lands when the period has passed, never more often
// than every floor (runs that overlap a run still in its first attempt would only add load)
// and never less often than the check's own interval.
func confirmCadence(interval, period, floor time.Duration) time.Duration {
	return min(interval, max(period/3, floor))
}

// deadlineGrace is added to a job's attempt budget when computing its deadline.
const deadlineGrace = 10 * time.Second

// jobDeadline is when a job stops being worth starting: when the check's next run is due
// (spacing), or when its attempts could no longer finish near their due time, whichever comes
// first. due is when the job could first be published: its due time, or for a catch-up run,
// when the leader took it up.
func jobDeadline(due int64, spacing, timeout time.Duration, attempts uint32) int64 {
	budget := time.Duration(attempts)*timeout + deadlineGrace
	return due + min(spacing, budget).Milliseconds()
}

// jobID is the id of a check's run due at due: a UUIDv7 whose timestamp is the due time and
// whose other 74 bits are a hash of the check id and the due time. It is deterministic, so a
// scheduler that takes over and publishes a run its predecessor may already have queued uses
// the same id, and JetStream drops the duplicate by its Nats-Msg-Id; results stay idempotent
// on (job_id, region, attempt).
func jobID(check uuid.UUID, due int64) uuid.UUID {
	var in [24]byte
	copy(in[:16], check[:])
	binary.BigEndian.PutUint64(in[16:], uint64(due))
	sum := sha256.Sum256(in[:])
	var u uuid.UUID
	ts := uint64(due)
	u[0], u[1], u[2], u[3], u[4], u[5] = byte(ts>>40), byte(ts>>32), byte(ts>>24), byte(ts>>16), byte(ts>>8), byte(ts)
	copy(u[6:], sum[:10])
	u[6] = 0x70 | u[6]&0x0f // version 7
	u[8] = 0x80 | u[8]&0x3f // RFC 9562 variant
	return u
}
