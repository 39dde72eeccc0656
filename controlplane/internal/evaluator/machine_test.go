package evaluator

import (
	"reflect"
	"testing"
	"time"
)

// TestStep walks the status machine table of docs/architecture.md row by row, then the edge
// cases the table leaves to the implementation. Time is injected: t(n) is n seconds after a
// fixed instant.
func TestStep(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(sec int) time.Time { return base.Add(time.Duration(sec) * time.Second) }
	policy := Policy{ConfirmationPeriod: 60 * time.Second, RecoveryPeriod: 120 * time.Second, ReminderInterval: 10 * time.Minute}
	with := func(f func(p *Policy)) Policy { p := policy; f(&p); return p }
	pass := func(sec int) Verdict { return Verdict{Passing: true, At: at(sec)} }
	fail := func(sec int) Verdict { return Verdict{Passing: false, At: at(sec)} }
	fx := func(k EffectKind, sec int) Effect { return Effect{Kind: k, At: at(sec)} }

	// A check that went DOWN at t(100) after failing since t(0), alerted at t(100).
	down := State{Status: Down, ChangedAt: at(100), FailingSince: at(0), LastAlertAt: at(100), DownAlerted: true}
	// The same check recovering since t(1000).
	recovering := State{Status: Recovering, ChangedAt: at(1000), PassingSince: at(1000), LastAlertAt: at(100), DownAlerted: true}

	tests := []struct {
		name    string
		from    State
		verdict Verdict
		now     time.Time
		policy  Policy
		want    State
		effects []Effect
	}{
		// The table of docs/architecture.md, one case per transition.
		{
			name: "PENDING first verdict pass -> UP",
			from: State{Status: Pending}, verdict: pass(0), now: at(5), policy: policy,
			want: State{Status: Up, ChangedAt: at(5), PassingSince: at(0)},
		},
		{
			name: "PENDING first verdict fail -> VERIFYING",
			from: State{Status: Pending}, verdict: fail(0), now: at(5), policy: policy,
			want:    State{Status: Verifying, ChangedAt: at(5), FailingSince: at(0)},
			effects: []Effect{fx(EffectConfirm, 0)},
		},
		{
			name: "UP failing verdict -> VERIFYING, schedule confirmation runs",
			from: State{Status: Up, ChangedAt: at(0), PassingSince: at(0)}, verdict: fail(300), now: at(305), policy: policy,
			want:    State{Status: Verifying, ChangedAt: at(305), FailingSince: at(300)},
			effects: []Effect{fx(EffectConfirm, 300)},
		},
		{
			name: "VERIFYING failing for the confirmation period -> DOWN, incident from first failure, uptime.down",
			from: State{Status: Verifying, ChangedAt: at(5), FailingSince: at(0)}, verdict: fail(60), now: at(65), policy: policy,
			want:    State{Status: Down, ChangedAt: at(65), FailingSince: at(0), LastAlertAt: at(65), DownAlerted: true},
			effects: []Effect{fx(EffectOpenIncident, 0), fx(EffectAlertDown, 65)},
		},
		{
			name: "VERIFYING passing verdict -> UP, nothing (a blip)",
			from: State{Status: Verifying, ChangedAt: at(5), FailingSince: at(0)}, verdict: pass(30), now: at(35), policy: policy,
			want: State{Status: Up, ChangedAt: at(35), PassingSince: at(30)},
		},
		{
			name: "DOWN passing verdict -> RECOVERING",
			from: down, verdict: pass(1000), now: at(1005), policy: policy,
			want: State{Status: Recovering, ChangedAt: at(1005), PassingSince: at(1000), LastAlertAt: at(100), DownAlerted: true},
		},
		{
			name: "DOWN still failing, reminder interval elapsed -> DOWN, reminder",
			from: down, verdict: fail(690), now: at(700), policy: policy,
			want:    State{Status: Down, ChangedAt: at(100), FailingSince: at(0), LastAlertAt: at(700), DownAlerted: true},
			effects: []Effect{fx(EffectAlertReminder, 700)},
		},
		{
			name: "RECOVERING passing for the recovery period -> UP, close incident, uptime.up",
			from: recovering, verdict: pass(1120), now: at(1125), policy: policy,
			want:    State{Status: Up, ChangedAt: at(1125), PassingSince: at(1000)},
			effects: []Effect{fx(EffectCloseIncident, 1000), fx(EffectAlertUp, 1125)},
		},
		{
			name: "RECOVERING failing verdict -> DOWN, same incident, no alert",
			from: recovering, verdict: fail(1060), now: at(1065), policy: policy,
			want: State{Status: Down, ChangedAt: at(1065), FailingSince: at(1060), LastAlertAt: at(100), DownAlerted: true},
		},

		// Within-row cases.
		{
			name: "UP passing verdict stays UP without touching ChangedAt",
			from: State{Status: Up, ChangedAt: at(0), PassingSince: at(0)}, verdict: pass(60), now: at(65), policy: policy,
			want: State{Status: Up, ChangedAt: at(0), PassingSince: at(0)},
		},
		{
			name: "VERIFYING failing but not yet for the confirmation period stays VERIFYING",
			from: State{Status: Verifying, ChangedAt: at(5), FailingSince: at(0)}, verdict: fail(59), now: at(64), policy: policy,
			want: State{Status: Verifying, ChangedAt: at(5), FailingSince: at(0)},
		},
		{
			name: "DOWN still failing before the reminder interval: no reminder",
			from: down, verdict: fail(690), now: at(699), policy: policy,
			want: State{Status: Down, ChangedAt: at(100), FailingSince: at(0), LastAlertAt: at(100), DownAlerted: true},
		},
		{
			name: "DOWN still failing, reminders never (-1, 0 or NULL all map to 0)",
			from: down, verdict: fail(99990), now: at(99999), policy: with(func(p *Policy) { p.ReminderInterval = 0 }),
			want: State{Status: Down, ChangedAt: at(100), FailingSince: at(0), LastAlertAt: at(100), DownAlerted: true},
		},
		{
			name: "RECOVERING passing but not yet for the recovery period stays RECOVERING",
			from: recovering, verdict: pass(1119), now: at(1124), policy: policy,
			want: recovering,
		},

		// Zero periods.
		{
			name: "confirmation period 0: UP failing verdict -> DOWN at once",
			from: State{Status: Up, ChangedAt: at(0), PassingSince: at(0)}, verdict: fail(300), now: at(305),
			policy:  with(func(p *Policy) { p.ConfirmationPeriod = 0 }),
			want:    State{Status: Down, ChangedAt: at(305), FailingSince: at(300), LastAlertAt: at(305), DownAlerted: true},
			effects: []Effect{fx(EffectOpenIncident, 300), fx(EffectAlertDown, 305)},
		},
		{
			name: "confirmation period 0: PENDING first verdict fail -> DOWN at once",
			from: State{Status: Pending}, verdict: fail(0), now: at(5),
			policy:  with(func(p *Policy) { p.ConfirmationPeriod = 0 }),
			want:    State{Status: Down, ChangedAt: at(5), FailingSince: at(0), LastAlertAt: at(5), DownAlerted: true},
			effects: []Effect{fx(EffectOpenIncident, 0), fx(EffectAlertDown, 5)},
		},
		{
			name: "recovery period 0: DOWN passing verdict -> UP at once",
			from: down, verdict: pass(1000), now: at(1005),
			policy:  with(func(p *Policy) { p.RecoveryPeriod = 0 }),
			want:    State{Status: Up, ChangedAt: at(1005), PassingSince: at(1000)},
			effects: []Effect{fx(EffectCloseIncident, 1000), fx(EffectAlertUp, 1005)},
		},

		// Muted: states and incidents tracked, no alerts.
		{
			name: "muted: VERIFYING -> DOWN opens the incident without uptime.down",
			from: State{Status: Verifying, ChangedAt: at(5), FailingSince: at(0)}, verdict: fail(60), now: at(65),
			policy:  with(func(p *Policy) { p.Muted = true }),
			want:    State{Status: Down, ChangedAt: at(65), FailingSince: at(0)},
			effects: []Effect{fx(EffectOpenIncident, 0)},
		},
		{
			name: "muted: DOWN reminder is suppressed",
			from: down, verdict: fail(690), now: at(700), policy: with(func(p *Policy) { p.Muted = true }),
			want: down,
		},
		{
			name: "muted: RECOVERING -> UP closes the incident without uptime.up",
			from: recovering, verdict: pass(1120), now: at(1125), policy: with(func(p *Policy) { p.Muted = true }),
			want:    State{Status: Up, ChangedAt: at(1125), PassingSince: at(1000)},
			effects: []Effect{fx(EffectCloseIncident, 1000)},
		},
		{
			name: "unmuted while DOWN after a muted start: the held-back uptime.down goes out",
			from: State{Status: Down, ChangedAt: at(65), FailingSince: at(0)}, verdict: fail(120), now: at(125), policy: policy,
			want:    State{Status: Down, ChangedAt: at(65), FailingSince: at(0), LastAlertAt: at(125), DownAlerted: true},
			effects: []Effect{fx(EffectAlertDown, 125)},
		},
		{
			name: "recovery of an incident never alerted: no uptime.up",
			from: State{Status: Recovering, ChangedAt: at(1000), PassingSince: at(1000)}, verdict: pass(1120), now: at(1125), policy: policy,
			want:    State{Status: Up, ChangedAt: at(1125), PassingSince: at(1000)},
			effects: []Effect{fx(EffectCloseIncident, 1000)},
		},

		// Paused: verdicts ignored.
		{
			name: "paused: a failing verdict changes nothing",
			from: State{Status: Up, ChangedAt: at(0), PassingSince: at(0)}, verdict: fail(300), now: at(305),
			policy: with(func(p *Policy) { p.Paused = true }),
			want:   State{Status: Up, ChangedAt: at(0), PassingSince: at(0)},
		},
		{
			name: "paused: a passing verdict does not recover a DOWN check",
			from: down, verdict: pass(1000), now: at(1005), policy: with(func(p *Policy) { p.Paused = true; p.RecoveryPeriod = 0 }),
			want: down,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, effects := Step(tc.from, tc.verdict, tc.now, tc.policy)
			if got != tc.want {
				t.Errorf("state:\n got  %+v\n want %+v", got, tc.want)
			}
			if !reflect.DeepEqual(effects, tc.effects) {
				t.Errorf("effects:\n got  %v\n want %v", effects, tc.effects)
			}
		})
	}
}

// TestStepSequence drives one check through a whole outage, verdict by verdict, with an
// injected clock.
func TestStepSequence(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := base
	p := Policy{ConfirmationPeriod: 20 * time.Second, RecoveryPeriod: 20 * time.Second, ReminderInterval: time.Minute}
	s := State{Status: Pending}
	var kinds []EffectKind
	step := func(passing bool, want Status) {
		t.Helper()
		clock = clock.Add(10 * time.Second)
		var fx []Effect
		s, fx = Step(s, Verdict{Passing: passing, At: clock}, clock, p)
		for _, f := range fx {
			kinds = append(kinds, f.Kind)
		}
		if s.Status != want {
			t.Fatalf("at %s: state %s, want %s", clock.Sub(base), s.Status, want)
		}
	}
	step(true, Up)
	step(false, Verifying) // t=20, failing since 20
	step(false, Verifying) // t=30
	step(false, Down)      // t=40: failing for 20s
	for range 6 {          // t=50..100
		step(false, Down)
	}
	step(true, Recovering) // t=110
	step(false, Down)      // t=120
	step(true, Recovering) // t=130
	step(true, Recovering) // t=140
	step(true, Up)         // t=150: passing for 20s
	want := []EffectKind{EffectConfirm, EffectOpenIncident, EffectAlertDown, EffectAlertReminder, EffectCloseIncident, EffectAlertUp}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("effects %v, want %v", kinds, want)
	}
}
