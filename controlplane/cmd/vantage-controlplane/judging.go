package main

import (
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/config"
	"github.com/vantagehq/vantage/controlplane/internal/evaluator"
	"github.com/vantagehq/vantage/controlplane/internal/finals"
	"github.com/vantagehq/vantage/controlplane/internal/ingest"
	"github.com/vantagehq/vantage/controlplane/internal/scheduler"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// judging is where verdicts are made (VANTAGE_JUDGE): the sink ingest hands its batches to,
// what hears of the scheduler's shards, and what runs beside them.
type judging struct {
	sink    ingest.Sink
	shards  scheduler.ShardListener // nil: the scheduler's shards do not concern judging
	runners []runner
}

// newJudging wires one of the two modes:
//
//   - owner (the default): each replica stores its batches unjudged and publishes their final
//     attempts on their shard's subject; the scheduler's shard owner receives them
//     (finals.Router) and judges its shards in memory (evaluator.Owner), sweeping its own
//     pending runs. The evaluator's check_runs sweep does not run in this mode: the runs it
//     would find are the owners' checkpoints, which only they may judge;
//   - ingest: each replica judges the batches it stores, in their transaction with the checks
//     locked, and sweeps runs past their deadline from check_runs.
func newJudging(cfg config.Config, log *slog.Logger, reg prometheus.Registerer, st *store.Store, nc *nats.Conn,
	ev *evaluator.Evaluator) (judging, error) {
	if cfg.Judge == config.JudgeIngest {
		return judging{sink: ev, runners: []runner{ev}}, nil
	}
	pub, err := finals.NewPublisher(finals.PublisherConfig{}, finals.PublisherDeps{NATS: nc, Registerer: reg})
	if err != nil {
		return judging{}, err
	}
	owner := evaluator.NewOwner(ev, evaluator.OwnerConfig{})
	router, err := finals.NewRouter(finals.RouterConfig{}, finals.RouterDeps{NATS: nc, Judge: owner,
		Logger: log, Registerer: reg})
	if err != nil {
		return judging{}, err
	}
	log.Info("verdicts are judged by each shard's owner", "judge", cfg.Judge)
	return judging{sink: finals.NewSink(st, pub), shards: router, runners: []runner{owner, router}}, nil
}
