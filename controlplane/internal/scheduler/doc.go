// Package scheduler decides when every active check runs and queues its jobs: the checks are
// divided into shards (package shard), each replica holds the leases of its share of them,
// keeps the checks of its shards in a min-heap by next due time, publishes one CheckJob per
// test region for each due run to JetStream (vantage.jobs.<region>), follows configuration
// changes through a NATS change feed backed by a periodic resync, and records how far it has
// handled the runs of its shards (their progress: one statement a second, not a write per run).
//
// # Ownership: a lease per shard on a PostgreSQL session
//
// A check belongs to shard.Of(id), one of shard.Count (256) shards. Each shard is scheduled by
// exactly one replica: the one whose lease session holds the shard's session-level advisory
// lock (ShardLockClass<<32 | shard). Every replica opens one dedicated lease session, outside
// the pool, named vantage-scheduler-lease in pg_stat_activity, and holds all its shards' locks
// on it. Every LeasePing (1s) it proves the session alive with one query that lists the
// shard locks of the database (its own must be exactly those it believes it holds), counts the
// live replicas (the lease sessions in pg_stat_activity) and rebalances (shard.Rebalance):
// above its share, ceil(256 / replicas), it gives up its excess; below it, it tries to lock
// free shards up to it. Replicas thus converge on every shard owned and none above its share,
// using only PostgreSQL's locks and session list — no membership protocol of their own:
//
//	replica A (owns 0-255)             PostgreSQL                     replica B (joins)
//	──────────────────────             ──────────                     ─────────────────
//	                                                     ◀──────────  open lease session
//	look: 2 replicas, share 128  ───▶  locks, sessions
//	stop publishing 128-255, wait
//	for their jobs' acks, record
//	their progress, unlock them  ───▶  128-255 free
//	                                                     ◀──────────  look: 128-255 free
//	                                   locks granted to B ─────────▶  read their progress, load
//	                                                                  their checks, publish
//	ping (locks held?) every 1s ────▶  resets A's idle timer
//	publish only while the last
//	good ping is < TTL/2 (5s) old
//	     ╳ A dies / is partitioned / freezes
//	                                   A's session ends:
//	                                    · at once when A's socket closes (crash, exit)
//	                                    · after idle_session_timeout = TTL (10s) of silence
//	                                      (partition, frozen process; TCP keepalives alike)
//	                                   A's locks released
//	                                                     ◀──────────  look: 1 replica, share 256
//	                                   locks granted to B ─────────▶  load, catch up, publish
//
// The safety of each shard's lease is the single lease's of before, per lock: it rests on two
// clocks that need no synchronisation, both measuring durations from A's last successful ping,
// which proves every lock A holds at once. A stops publishing all its shards TTL/2 after it
// (and at once when a ping fails or shows a lock missing), while PostgreSQL keeps A's session,
// and so each of its locks, for at least TTL after it. A replica that cannot prove its leases
// therefore stops before anyone else can hold any of them. A shard given up on purpose is
// unlocked only after A's loop has dropped its checks (nothing of it is published after that
// point), the jobs A already published are acknowledged by JetStream, and its progress is
// recorded: its next owner, which can lock it only then, starts exactly where A stopped. (Acks
// slower than a LeasePing leave the progress of a second or two before, and the next owner
// publishes those runs again under the same ids.) The others take a stopped or crashed replica's shards within about
// LeasePing (1s) of its session ending; after a partition, within TTL + LeasePing.
// (A session killed from the server side — pg_terminate_backend, a database restart — ends
// the leases at once; A learns it at its next ping, so for up to a second or two both may
// publish a shard: the same runs under the same job ids, which the next paragraph makes
// harmless.)
//
// Should two replicas ever publish the same run (a take-over just after the old owner queued
// a run it had not yet recorded in its shard's progress), the run's job id is deterministic —
// a UUIDv7 made of the due time and a hash of check id and due time — so both publish the
// same Nats-Msg-Id (wire.JobMsgID) and JetStream's duplicate window drops the second copy.
//
// Others may act on a shard's ownership too (Deps.Shards, the finals router that has the
// owner judge its checks): its ShardListener hears ShardsTaken once the shard is locked, and
// ShardsGiven before it is unlocked — when given up, and for every shard held when the session
// ends, lost or closed — so that the next owner of a shard given up starts after the last is
// done with it (a lease lost may overlap, as above).
//
// A hand-over costs each check of the shard at most one run interval of delay, never a lost
// run: the shard is unowned for at most one look of the others (LeasePing) plus the load of
// its checks, and its new owner publishes at once, late, each check's newest run due since the
// shard's progress (the catch-up below) — one run, since a hand-over lasts less than any
// interval.
//
// # When checks run
//
// A check runs on a grid: every test_interval at a phase within it, hash(check id) mod
// interval, so checks sharing an interval spread evenly over it and keep their rhythm across
// restarts and hand-overs. The schedule is thus a function of the check and the owner's
// clock; nothing is written per run. Each replica records once a second how far it has
// handled the runs of its shards (scheduler_shard_progress.handled_through, one row per shard,
// one statement for all of a replica's: every run of the shard due by then was published or
// skipped), and last_queued in the API is derived from the check's shard's row
// (rungrid.LastDue). A new check first runs at its next grid point. A replica taking a shard
// over — from a replica that gave it up, stopped or died, or after downtime of any length —
// publishes at once, late, the newest grid point of each of the shard's checks that passed
// unhandled since the shard's recorded progress: one catch-up run per check, not a burst of
// every missed run and not none. Its deadline counts from when it was taken up. Until those
// catch-up runs are published, the shard keeps its recorded progress (it is "joining"); then
// it moves with the replica's other shards. A changed interval moves the check to its new
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
// # Shedding
//
// Every BacklogSample (1s) a replica reads each region's job consumer (jobqueue.RegionBacklog:
// pending jobs, deliveries) and judges the region behind while its pending jobs exceed both
// ShedMinPending (1,000) and what its agents took in ShedAfter (2s), until they are down to
// half that (isBehind). A behind region's ordinary runs are shed in rotation: a check's run
// there is not published unless its previous run there was shed, so no check loses two in a
// row; the run after a shed one is published as a catch-up job, so that the agents, which
// shed late jobs in their own rotation and know nothing of the scheduler's, do not shed it
// either. A shed run is recorded skipped (SHED) with the next progress write, in one statement,
// and counted in vantage_scheduler_runs_shed_total{region}: it costs nothing downstream.
// Catch-up and confirmation runs are never shed, nor browser jobs (their consumer is not
// sampled; the agents shed those).
//
// # Changes
//
// Writers call Notify (or the func ChangeNotifier returns) after committing a change to a
// check — the API for configuration, the evaluator for state changes; the owner of the
// check's shard reloads the check within a second (deleted or paused: unscheduled), the other
// replicas ignore it. Every ResyncInterval each replica reloads every check of its shards,
// which repairs lost notifications and refreshes resolved variable values; it reads pages of
// 1,000 checks in id order, resting between pages as long as each took, and the loop folds
// them in between due runs, so a resync of 100,000 checks does not make runs late. A shard
// taken over is loaded the same way, at once and without resting. Loads carry sequence numbers so that an older load finishing late never
// overwrites a newer one, nor brings back a check a newer load found deleted.
//
// # Throughput
//
// In each replica one goroutine owns the heap and publishes; JetStream publishes are
// asynchronous with at most MaxInFlight awaiting their ack, which a collector goroutine takes
// in order to count jobs and observe lateness (ack time − due time). The progress written
// each second is the one reached a second before, when those acks are in: a successor
// republishes at most the last second or two of runs, which JetStream drops as duplicates
// within its window. BenchmarkScheduler (bench_test.go) drives 100,000 checks at 30s in 3
// regions — 10,000 jobs/s — through one replica, the real database and an in-process
// JetStream; replicas divide that work by their number, since each loads, plans and publishes
// only its shards' checks.
package scheduler
