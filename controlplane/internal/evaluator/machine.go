package evaluator

import "time"

// Status is the check status machine's own state (checks.state). PAUSED, MUTED and MAINTENANCE
// are display states derived elsewhere; the machine keeps tracking UP/DOWN underneath them.
type Status string

// The machine's states (docs/architecture.md, "Check status machine").
const (
	Pending    Status = "PENDING"
	Up         Status = "UP"
	Verifying  Status = "VERIFYING"
	Down       Status = "DOWN"
	Recovering Status = "RECOVERING"
)

// State is everything the machine remembers about one check between verdicts.
type State struct {
	Status Status
	// ChangedAt is when Status last changed (the evaluator's clock).
	ChangedAt time.Time
	// FailingSince is the run time of the first failing verdict of the current failing streak;
	// zero while the last verdict passed. An incident starts at it.
	FailingSince time.Time
	// PassingSince is the run time of the first passing verdict of the current passing streak;
	// zero while the last verdict failed. An incident ends at it.
	PassingSince time.Time
	// LastAlertAt is when the last uptime.down (first alert or reminder) of the open incident
	// was emitted (the evaluator's clock); zero when none was.
	LastAlertAt time.Time
	// DownAlerted tells whether uptime.down was emitted for the open incident.
	DownAlerted bool
}

// Verdict is the outcome of one run of a check across its regions.
type Verdict struct {
	Passing bool
	// At is the run's time: when it was scheduled. Periods are measured between run times, so
	// that a run judged late (after its deadline) counts for when it happened.
	At time.Time
}

// Policy is a check's configuration as the machine reads it.
type Policy struct {
	// ConfirmationPeriod is how long a check must fail continuously before it is DOWN; 0 makes
	// the first failing verdict DOWN at once.
	ConfirmationPeriod time.Duration
	// RecoveryPeriod is how long a DOWN check must pass continuously before it is UP again; 0
	// makes the first passing verdict UP at once.
	RecoveryPeriod time.Duration
	// ReminderInterval is how often uptime.down is repeated while DOWN; 0 or less never.
	ReminderInterval time.Duration
	// Muted suppresses every alert effect; states and incidents are still tracked.
	Muted bool
	// Paused ignores verdicts altogether.
	Paused bool
}

// EffectKind names a side effect of a transition.
type EffectKind int

// Side effects (the "side effects" column of docs/architecture.md's table).
const (
	// EffectConfirm: the check entered VERIFYING; the scheduler should run it again soon from
	// its regions (delivered through the evaluator's OnStateChange hook).
	EffectConfirm EffectKind = iota + 1
	// EffectOpenIncident: open a check incident starting At (the first failure).
	EffectOpenIncident
	// EffectCloseIncident: close the open incident, ending At (the first passing run).
	EffectCloseIncident
	// EffectAlertDown: write an uptime.down outbox row.
	EffectAlertDown
	// EffectAlertReminder: write an uptime.down outbox row marked as a reminder.
	EffectAlertReminder
	// EffectAlertUp: write an uptime.up outbox row.
	EffectAlertUp
)

func (k EffectKind) String() string {
	switch k {
	case EffectConfirm:
		return "confirm"
	case EffectOpenIncident:
		return "open_incident"
	case EffectCloseIncident:
		return "close_incident"
	case EffectAlertDown:
		return "alert_down"
	case EffectAlertReminder:
		return "alert_reminder"
	case EffectAlertUp:
		return "alert_up"
	}
	return "unknown"
}

// Effect is one side effect; At is the time it refers to (incident bounds, alert time).
type Effect struct {
	Kind EffectKind
	At   time.Time
}

// Step applies one verdict to a check's state at now and returns the next state and the side
// effects to carry out, in order. It is pure: same input, same output; no I/O.
//
// It implements the table of docs/architecture.md row by row:
//
//	PENDING    pass                                   → UP
//	PENDING    fail                                   → VERIFYING, confirm effect (then as VERIFYING fail)
//	UP         fail                                   → VERIFYING, confirm effect (then as VERIFYING fail)
//	VERIFYING  failing for ≥ ConfirmationPeriod       → DOWN: open incident at FailingSince, uptime.down
//	VERIFYING  pass                                   → UP, nothing else (a blip is not an incident)
//	DOWN       pass                                   → RECOVERING (then as RECOVERING pass)
//	DOWN       fail, ReminderInterval since last alert → DOWN, reminder (uptime.down, reminder)
//	RECOVERING passing for ≥ RecoveryPeriod           → UP: close incident at PassingSince, uptime.up
//	RECOVERING fail                                   → DOWN, same incident, no new alert
//
// Choices where the table is silent:
//   - "Failing continuously for P" is measured between run times: v.At − FailingSince ≥ P. With
//     P = 0 the first failing verdict goes straight to DOWN, from PENDING or UP alike (no
//     confirm effect then). Likewise RecoveryPeriod 0 makes DOWN → UP on one passing verdict.
//   - The incident starts at the first failing run (FailingSince) and ends at the first run of
//     the passing streak that closed it (PassingSince): its span is the outage, not the time the
//     periods took to confirm it.
//   - Muted: every alert effect is dropped; states and incidents are unchanged. An incident
//     that opened while muted has DownAlerted false; if the check is unmuted while still DOWN,
//     the next failing verdict emits the uptime.down that was held back, and reminders count
//     from it. uptime.up is emitted only if uptime.down was, so no "up" without a "down".
//   - Reminders: ReminderInterval ≤ 0 means never (the API's -1; a stored 0 or NULL is treated
//     the same, as a zero interval would alert on every run). A reminder is due when
//     now − LastAlertAt ≥ ReminderInterval, measured on the evaluator's clock.
//   - PENDING → VERIFYING carries the confirm effect too: a first failure deserves the same
//     fast confirmation runs as a failure after UP.
//   - RECOVERING → DOWN emits nothing (the table's row); a due reminder or a held-back alert
//     goes out on the next failing verdict in DOWN.
//   - Paused: the verdict is ignored; the state is returned unchanged with no effects.
//   - ChangedAt is set to now whenever Status changes.
func Step(s State, v Verdict, now time.Time, p Policy) (State, []Effect) {
	if p.Paused {
		return s, nil
	}
	m := machine{s: s, v: v, now: now, p: p}
	if v.Passing {
		m.s.FailingSince = time.Time{}
		if m.s.PassingSince.IsZero() {
			m.s.PassingSince = v.At
		}
		m.pass()
	} else {
		m.s.PassingSince = time.Time{}
		if m.s.FailingSince.IsZero() {
			m.s.FailingSince = v.At
		}
		m.fail()
	}
	return m.s, m.fx
}

type machine struct {
	s   State
	v   Verdict
	now time.Time
	p   Policy
	fx  []Effect
}

func (m *machine) to(st Status) {
	if m.s.Status != st {
		m.s.Status = st
		m.s.ChangedAt = m.now
	}
}

func (m *machine) emit(k EffectKind, at time.Time) { m.fx = append(m.fx, Effect{Kind: k, At: at}) }

func (m *machine) pass() {
	switch m.s.Status {
	case Pending, Verifying:
		m.to(Up)
	case Up:
		// still up
	case Down:
		m.to(Recovering)
		m.recoverIfDue()
	case Recovering:
		m.recoverIfDue()
	default: // an unknown stored state: start over
		m.to(Up)
	}
}

func (m *machine) fail() {
	switch m.s.Status {
	case Pending, Up:
		m.to(Verifying)
		if !m.confirmIfDue() {
			m.emit(EffectConfirm, m.v.At)
		}
	case Verifying:
		m.confirmIfDue()
	case Down:
		m.alertStillDown()
	case Recovering:
		m.to(Down) // the open incident continues; alerts resume on the next failing verdict
	default:
		m.to(Verifying)
		m.confirmIfDue()
	}
}

// confirmIfDue moves VERIFYING to DOWN once the failing streak has lasted the confirmation
// period, opening the incident and alerting.
func (m *machine) confirmIfDue() bool {
	if m.v.At.Sub(m.s.FailingSince) < m.p.ConfirmationPeriod {
		return false
	}
	m.to(Down)
	m.emit(EffectOpenIncident, m.s.FailingSince)
	m.s.DownAlerted, m.s.LastAlertAt = false, time.Time{}
	if !m.p.Muted {
		m.emit(EffectAlertDown, m.now)
		m.s.DownAlerted, m.s.LastAlertAt = true, m.now
	}
	return true
}

// recoverIfDue moves RECOVERING to UP once the passing streak has lasted the recovery period,
// closing the incident.
func (m *machine) recoverIfDue() {
	if m.v.At.Sub(m.s.PassingSince) < m.p.RecoveryPeriod {
		return
	}
	m.to(Up)
	m.emit(EffectCloseIncident, m.s.PassingSince)
	if m.s.DownAlerted && !m.p.Muted {
		m.emit(EffectAlertUp, m.now)
	}
	m.s.DownAlerted, m.s.LastAlertAt = false, time.Time{}
}

// alertStillDown handles a failing verdict while DOWN: the uptime.down held back while muted,
// or a reminder when one is due.
func (m *machine) alertStillDown() {
	if m.p.Muted {
		return
	}
	switch {
	case !m.s.DownAlerted:
		m.emit(EffectAlertDown, m.now)
	case m.p.ReminderInterval > 0 && m.now.Sub(m.s.LastAlertAt) >= m.p.ReminderInterval:
		m.emit(EffectAlertReminder, m.now)
	default:
		return
	}
	m.s.DownAlerted, m.s.LastAlertAt = true, m.now
}
