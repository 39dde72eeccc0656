package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"

	"github.com/vantagehq/vantage/controlplane/internal/api"
	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/config"
	"github.com/vantagehq/vantage/controlplane/internal/evaluator"
	"github.com/vantagehq/vantage/controlplane/internal/heartbeat"
	"github.com/vantagehq/vantage/controlplane/internal/ingest"
	"github.com/vantagehq/vantage/controlplane/internal/invite"
	"github.com/vantagehq/vantage/controlplane/internal/jobqueue"
	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/scheduler"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage/subscribe"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage/web"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// serve runs every component of the control plane until ctx ends, then stops them in order:
// the HTTP, ping and gRPC servers first (no new work), then the pipeline — the batcher (which
// writes what it still holds), the evaluator, the scheduler, the partition maintainer, the
// heartbeat monitor, the status-page lifecycle and the notifier.
func serve(ctx context.Context, getenv func(string) string, stderr io.Writer) error {
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	if cfg.AgentToken == "" {
		return errors.New("invalid configuration:\n  VANTAGE_AGENT_TOKEN: is required by serve: agents authenticate with it (16+ characters)")
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return err
	}
	if cfg.BootstrapToken != "" {
		orgID, tokenID, err := st.EnsureBootstrap(ctx, auth.HashSecret(cfg.BootstrapToken), auth.AllGrants())
		if err != nil {
			return err
		}
		log.Info("bootstrap token ready", "org_id", orgID.String(), "token_id", tokenID.String())
	}

	nc, closeNATS, err := jobqueue.Connect(ctx, jobqueue.Config{URL: cfg.NATSURL, StoreDir: cfg.NATSStoreDir,
		Logger: log.With("component", "nats")})
	if err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	defer closeNATS()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	if err := jobqueue.EnsureStream(ctx, js); err != nil {
		return fmt.Errorf("jetstream stream %s: %w", "VANTAGE_JOBS", err)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	announce := scheduler.ChangeNotifier(nc, log.With("component", "scheduler"))

	sched, err := scheduler.New(scheduler.Config{}, scheduler.Deps{Store: st, NATS: nc,
		Logger: log.With("component", "scheduler"), Registerer: reg, Now: time.Now})
	if err != nil {
		return err
	}
	ev, err := evaluator.New(log, time.Now, reg, st, evaluator.Options{
		// VERIFYING and RECOVERING checks run sooner: tell the scheduler about every change.
		OnStateChange: func(id uuid.UUID, _ string) { announce(id) },
	})
	if err != nil {
		return err
	}
	batcher, err := ingest.NewBatcher(log, reg, ev, ingest.BatcherOptions{})
	if err != nil {
		return err
	}
	ingestSrv, err := ingest.NewServer(log, time.Now, reg, batcher,
		ingest.ServerOptions{AgentToken: cfg.AgentToken})
	if err != nil {
		return err
	}
	maintainer, err := ingest.NewMaintainer(log, time.Now, reg, st,
		ingest.MaintainerOptions{RetentionDays: cfg.RetentionDays})
	if err != nil {
		return err
	}
	notify, err := notifier.New(log, time.Now, reg, st, notifier.Options{SMTPURL: cfg.SMTPURL,
		MailFrom: cfg.MailFrom, PublicURL: cfg.PublicURL, RenderCheck: api.RenderCheckForWebhook,
		DenyPrivateTargets: !cfg.AllowPrivate})
	if err != nil {
		return err
	}
	heartbeats := heartbeat.NewMonitor(st, log, heartbeat.MonitorOptions{})
	pages := statuspage.NewRunner(st, statuspage.WithLogger(log.With("component", "statuspage")))
	pingSrv := &http.Server{Addr: cfg.PingAddr, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 60 * time.Second,
		Handler:  heartbeat.NewPingHandler(st, log, heartbeat.PingOptions{Registerer: reg}),
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	grpcSrv := grpc.NewServer(ingest.GRPCServerOptions()...)
	ingestSrv.Register(grpcSrv)

	cookieKey, err := web.DeriveCookieKey(cfg.SecretKey)
	if err != nil {
		return err
	}
	apiHost := ""
	if u, err := url.Parse(cfg.PublicURL); err == nil {
		apiHost = u.Hostname()
	}
	public := web.NewHandler(st, web.Options{StatusDomain: cfg.StatusDomain, APIHost: apiHost,
		CookieKey: cookieKey, ClientIP: api.ClientIP, Logger: log.With("component", "statuspage"),
		Extra: subscribe.NewHandler(st, subscribe.Options{Logger: log.With("component", "statuspage")})})

	handler, err := api.New(api.Deps{
		Logger:         log.With("component", "api"),
		Store:          st,
		Auth:           auth.NewAuthenticator(st, time.Now),
		Registry:       reg,
		Now:            time.Now,
		Ready:          ready(st, nc),
		TrustedProxies: cfg.TrustedProxies,
		CheckChanged:   announce,
		Public:         public,
		Invitations:    invite.NewHandler(st, invite.Options{Logger: log}),
	})
	if err != nil {
		return err
	}
	httpSrv := &http.Server{Addr: cfg.HTTPAddr, Handler: handler, ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout: 120 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	grpcLis, err := net.Listen("tcp", cfg.GRPCAddr)
	if err != nil {
		return fmt.Errorf("grpc listen on %s: %w", cfg.GRPCAddr, err)
	}
	httpLis, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("http listen on %s: %w", cfg.HTTPAddr, err)
	}
	pingLis, err := net.Listen("tcp", cfg.PingAddr)
	if err != nil {
		return fmt.Errorf("ping listen on %s: %w", cfg.PingAddr, err)
	}

	// The pipeline outlives the servers: it stops only after they stopped taking work.
	pipeCtx, stopPipeline := context.WithCancel(context.WithoutCancel(ctx))
	defer stopPipeline()
	pipe, pipeCtx := errgroup.WithContext(pipeCtx)
	pipe.Go(func() error { return batcher.Run(pipeCtx) })
	pipe.Go(func() error { return ev.Run(pipeCtx) })
	pipe.Go(func() error { return sched.Run(pipeCtx) })
	pipe.Go(func() error { return maintainer.Run(pipeCtx) })
	pipe.Go(func() error { return heartbeats.Run(pipeCtx) })
	pipe.Go(func() error { return pages.Run(pipeCtx) })
	pipe.Go(func() error { return notify.Run(pipeCtx) })

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		log.Info("http listening", "addr", httpLis.Addr().String())
		if err := httpSrv.Serve(httpLis); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("http server: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		log.Info("ping listening", "addr", pingLis.Addr().String())
		if err := pingSrv.Serve(pingLis); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("ping server: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		log.Info("grpc listening", "addr", grpcLis.Addr().String())
		return grpcSrv.Serve(grpcLis)
	})
	g.Go(func() error {
		select {
		case <-gctx.Done():
		case <-pipeCtx.Done(): // a pipeline component failed
		}
		log.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
		defer cancel()
		// Agent streams never end on their own: end them (their pending acks sent) so that
		// GracefulStop does not wait for them until the timeout forces it.
		ingestSrv.Drain()
		stopped := make(chan struct{})
		go func() { grpcSrv.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-sctx.Done():
			grpcSrv.Stop()
		}
		return errors.Join(httpSrv.Shutdown(sctx), pingSrv.Shutdown(sctx))
	})
	err = g.Wait()
	stopPipeline()
	if perr := pipe.Wait(); perr != nil && !errors.Is(perr, context.Canceled) && err == nil {
		err = perr
	}
	return err
}

// ready reports whether PostgreSQL answers and NATS is connected.
func ready(st *store.Store, nc *nats.Conn) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if err := st.Ping(ctx); err != nil {
			return fmt.Errorf("postgresql: %w", err)
		}
		if s := nc.Status(); s != nats.CONNECTED {
			return fmt.Errorf("nats: %s", s)
		}
		return nil
	}
}
