// Package heartbeat runs heartbeats (api/openapi/heartbeats.yaml): push monitors that the monitored job
// pings. It has three parts:
//
//   - schedule.go: when the next ping is due (a period in seconds, or a cron expression in a
//     time zone) and whether a heartbeat is healthy at a given time;
//   - ping.go: the public ping endpoint, an http.Handler for GET|POST /{id}, /{id}/start and
//     /{id}/fail on its own listener (VANTAGE_PING_ADDR), rate-limited per id;
//   - monitor.go: Monitor.Run, which sweeps the heartbeats on an injected clock and drives the
//     status machine PENDING → UP → DOWN → UP, writing heartbeat.down / heartbeat.up (and
//     reminders) to the outbox in the transaction that changes the state.
//
// Division of labour between ping and monitor: a ping is recorded with one UPDATE and no read
// (last_seen, last_success_at, run_started_at, failed_at, last run duration); the only
// transition a ping makes itself is PENDING → UP on a success ping, which alerts nobody. Every
// transition with an alert is the monitor's, which locks the rows it judges, so a ping and a
// sweep never race: a DOWN heartbeat that is pinged turns UP (and heartbeat.up is written) on
// the next sweep, within MonitorConfig.Interval.
package heartbeat
