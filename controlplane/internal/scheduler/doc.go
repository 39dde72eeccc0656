// Package scheduler decides when every active check runs and queues its jobs: it holds the
// leader lease, keeps each check in a min-heap by next due time, publishes one CheckJob per
// test region for each due run to JetStream (vantage.jobs.<region>), follows configuration
// changes through a NATS change feed backed by a periodic resync, and records how far it has
// handled runs (the scheduler's progress: one row, not a write per run).
//
// # Leadership: a lease on a PostgreSQL session
//
// Exactly one control-plane replica schedules. Leadership is a session-level advisory lock
// (LeaseLockKey) held on a dedicated connection opened outside the pool, treated as a lease:
//
//	replica A (leader)                 PostgreSQL                     replica B (standby)
//	──────────────────                 ──────────                     ───────────────────
//	pg_try_advisory_lock ───────────▶  granted to A's session
//	                                                     ◀──────────  pg_try_advisory_lock  (every 2s)
//	                                   false ──────────────────────▶  stand by
//	ping (lock held?) every 1s ─────▶  resets A's idle timer
//	publish only while the last
//	good ping is < TTL/2 (5s) old
//	     ╳ A dies / is partitioned / freezes
//	                                   A's session ends:
//	                                    · at once when A's socket closes (crash, exit, unlock)
//	                                    · after idle_session_timeout = TTL (10s) of silence
//	                                      (partition, frozen process; TCP keepalives alike)
//	                                   lock released
//	                                                     ◀──────────  pg_try_advisory_lock
//	                                   granted to B's session ─────▶  lead: load checks, publish
//
// The lease's safety rests on two clocks that need no synchronisation, both measuring
// durations from A's last successful ping: A stops publishing TTL/2 after it (and at once when
// a ping fails), while PostgreSQL keeps A's session, and so the lock, for at least TTL after
// it. A leader that cannot prove its lease therefore stops before anyone else can hold it. A
// standby takes over within about LeaderRetry after a clean exit or crash, and within TTL +
// LeaderRetry after a partition.
// (A session killed from the server side — pg_terminate_backend, a database restart — ends
// the lease at once; A learns it at its next ping, so for up to a second or two both may
// publish: the same runs under the same job ids, which the next paragraph makes harmless.)
//
// Should two schedulers ever publish the same run (a take-over just after the old leader
// queued a run it had not yet recorded in its progress), the run's job id is deterministic —
// a UUIDv7 made of the due time and a hash of check id and due time — so both publish the
// same Nats-Msg-Id (wire.JobMsgID) and JetStream's duplicate window drops the second copy.
//
// # When checks run
//
// A check runs on a grid: every test_interval at a phase within it, hash(check id) mod
// interval, so checks sharing an interval spread evenly over it and keep their rhythm across
// restarts and fail-overs. The schedule is thus a function of the check and the leader's
// clock; nothing is written per run. The leader records once a second how far it has handled
// runs (scheduler_progress.handled_through: every run due by then was published or skipped),
// and last_queued in the API is derived from it (rungrid.LastDue). A new check first runs at
// its next grid point. A leader taking over — after a fail-over or downtime of any length —
// publishes at once, late, the newest grid point of each check that passed unhandled since the
// recorded progress: one catch-up run per check, not a burst of every missed run and not none.
// Its deadline counts from when it was taken up. A changed interval moves the check to its new
// grid from now on; other changes keep the next due time.
//
// While a check is VERIFYING or RECOVERING its status machine waits for failures (or passes)
// to persist for confirmation_period_seconds (or recovery_period_seconds). Confirmation runs
// then replace the normal rhythm: every
//
//	cadence = min(test_interval, max(period / 3, MinConfirmationCadence))
//
// on a grid anchored at the state change (state_changed_at), so the third confirmation run
// falls just after the period has elapsed since the first failing run was evaluated — the
// confirmation takes about the period, not whole intervals. MinConfirmationCadence (10s)
// keeps confirmation runs from overlapping attempts still running at the default 10s timeout.
// Leaving the state returns the check to its grid.
//
// # Jobs
//
// Each run publishes one job per test region, sharing the run's job id. scheduled_at is the
// due time; the deadline is due + min(spacing to the next run, max_attempts × timeout + 10s),
// past which a job is stale and the agent skips it (the scheduler, too, skips a run it could
// not queue before its deadline). max_attempts is 2 for HTTP, DNS and TCP (one retry absorbs a
// transient failure) and 1 for browser checks (expensive; confirmation runs already
// double-check). {{NAME}} references are resolved in the check's variable scope when the check
// is loaded; secret values used go in CheckJob.redact.
//
// # Changes
//
// Writers call Notify (or the func ChangeNotifier returns) after committing a change to a
// check — the API for configuration, the evaluator for state changes; the leader reloads the
// check within a second (deleted or paused: unscheduled). Every ResyncInterval the leader
// reloads everything, which repairs lost notifications and refreshes resolved variable
// values; it reads pages of 1,000 checks in id order, resting between pages as long as each
// took, and the loop folds them in between due runs, so a resync of 100,000 checks does not
// make runs late. Loads carry sequence numbers so that an older load finishing late never
// overwrites a newer one, nor brings back a check a newer load found deleted.
//
// # Throughput
//
// One goroutine owns the heap and publishes; JetStream publishes are asynchronous with at
// most MaxInFlight awaiting their ack, which a collector goroutine takes in order to count
// jobs and observe lateness (ack time − due time). The progress written each second is the
// one reached a second before, when those acks are in: a successor republishes at most the
// last second or two of runs, which JetStream drops as duplicates within its window. BenchmarkScheduler (bench_test.go) drives 100,000 checks at 30s in 3
// regions — 10,000 jobs/s — through the real database and an in-process JetStream.
package scheduler
