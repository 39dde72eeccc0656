package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"

	"github.com/vantagehq/vantage/controlplane/internal/api"
	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/certwatch"
	"github.com/vantagehq/vantage/controlplane/internal/config"
	"github.com/vantagehq/vantage/controlplane/internal/console"
	"github.com/vantagehq/vantage/controlplane/internal/evaluator"
	"github.com/vantagehq/vantage/controlplane/internal/fleet"
	"github.com/vantagehq/vantage/controlplane/internal/heartbeat"
	"github.com/vantagehq/vantage/controlplane/internal/ingest"
	"github.com/vantagehq/vantage/controlplane/internal/invite"
	"github.com/vantagehq/vantage/controlplane/internal/jobguard"
	"github.com/vantagehq/vantage/controlplane/internal/jobqueue"
	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/probehealth"
	"github.com/vantagehq/vantage/controlplane/internal/ratelimit"
	"github.com/vantagehq/vantage/controlplane/internal/scheduler"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage/subscribe"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage/web"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/httpserve"
)

// serve runs the control plane until ctx ends: it connects to PostgreSQL and NATS, builds every
// component, and runs them (see controlPlane.run for the order of shutdown).
func serve(ctx context.Context, getenv func(string) string, stderr io.Writer) error {
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	st, err := prepareStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer st.Close()
	nc, closeNATS, err := connectNATS(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeNATS()
	cp, err := newControlPlane(cfg, log, st, nc)
	if err != nil {
		return err
	}
	return cp.run(ctx, cfg)
}

// prepareStore opens the database, migrates it and ensures the bootstrap token.
func prepareStore(ctx context.Context, cfg config.Config, log *slog.Logger) (*store.Store, error) {
	st, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, err
	}
	if err := checkSecretKey(ctx, st, cfg); err != nil {
		st.Close()
		return nil, err
	}
	if cfg.BootstrapToken != "" {
		orgID, tokenID, err := st.EnsureBootstrap(ctx, auth.HashSecret(cfg.BootstrapToken), auth.OperatorGrants())
		if err != nil {
			st.Close()
			return nil, err
		}
		log.Info("bootstrap token ready", "org_id", orgID.String(), "token_id", tokenID.String())
	}
	return st, nil
}

// connectNATS connects to NATS (or starts the embedded server) and ensures the job stream and
// its consumers.
func connectNATS(ctx context.Context, cfg config.Config, log *slog.Logger) (*nats.Conn, func(), error) {
	host, portText, _ := net.SplitHostPort(cfg.NATSEmbeddedAddr) // validated by config.Load
	port, _ := strconv.Atoi(portText)
	if port == 0 {
		port = -1 // a free port
	}
	nc, closeNATS, err := jobqueue.Connect(ctx, jobqueue.Config{URL: cfg.NATSURL, StoreDir: cfg.NATSStoreDir,
		EmbeddedHost: host, EmbeddedPort: port, EmbeddedUser: cfg.NATSEmbeddedUser, EmbeddedPassword: cfg.NATSEmbeddedPassword,
		Logger: log.With("component", "nats")})
	if err != nil {
		return nil, nil, fmt.Errorf("nats: %w", err)
	}
	js, err := jetstream.New(nc)
	if err == nil {
		err = jobqueue.EnsureStream(ctx, js, jobqueue.WithReplicas(cfg.StreamReplicas))
	}
	if err != nil {
		closeNATS()
		return nil, nil, fmt.Errorf("jetstream stream VANTAGE_JOBS: %w", err)
	}
	return nc, closeNATS, nil
}

// runner is a long-running part of the pipeline.
type runner interface {
	Run(ctx context.Context) error
}

// runFunc is a runner made of a function.
type runFunc func(ctx context.Context) error

func (f runFunc) Run(ctx context.Context) error { return f(ctx) }

// controlPlane is every component of one replica, built and ready to run.
type controlPlane struct {
	log      *slog.Logger
	pipeline []runner // scheduler, batcher, evaluator, maintainer, monitors, notifier
	http     *http.Server
	ping     *http.Server
	metrics  *http.Server
	limits   httpserve.Config // of every HTTP listener
	grpc     *grpc.Server
	ingest   *ingest.Server
}

// newControlPlane builds the components and wires them to each other.
func newControlPlane(cfg config.Config, log *slog.Logger, st *store.Store, nc *nats.Conn) (*controlPlane, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	// vantage_region_jobs_pending{region}, what agent autoscaling is driven by.
	if _, err := jobqueue.NewPendingCollector(jobqueue.PendingConfig{}, jobqueue.PendingDeps{JetStream: js, Registerer: reg}); err != nil {
		return nil, err
	}
	// Committed check changes, and evaluator state changes (VERIFYING and RECOVERING checks run
	// sooner), reach the scheduler through NATS.
	announce := scheduler.ChangeNotifier(nc, log.With("component", "scheduler"))
	cp := &controlPlane{log: log, limits: httpLimits(cfg)}

	// Jobs are signed and their secrets sealed per region with keys derived from the secret
	// key; ingest accepts only results of signed jobs of the stream's regions.
	guard, err := jobguard.New(cfg.SecretKey, cfg.PreviousKeys...)
	if err != nil {
		return nil, err
	}
	// Runs that did not run count in one metric, whoever skipped them (agents, the scheduler).
	runsSkipped := ingest.NewRunsSkipped()
	if err := reg.Register(runsSkipped); err != nil {
		return nil, err
	}
	certs, err := certwatch.New(certwatch.Deps{Logger: log, Now: time.Now, Registerer: reg})
	if err != nil {
		return nil, err
	}
	ev, err := evaluator.New(evaluator.Config{}, evaluator.Deps{Store: st, Logger: log, Now: time.Now, Registerer: reg,
		OnStateChange: func(id uuid.UUID, _ string) { announce(id) }, Watch: certs.Judge})
	if err != nil {
		return nil, err
	}
	judging, err := newJudging(cfg, log, reg, st, nc, ev)
	if err != nil {
		return nil, err
	}
	sched, err := scheduler.New(scheduler.Config{}, scheduler.Deps{Store: st, NATS: nc,
		Logger: log.With("component", "scheduler"), Registerer: reg, Now: time.Now, Guard: guard, RunsSkipped: runsSkipped,
		Shards: judging.shards})
	if err != nil {
		return nil, err
	}
	batcher, err := ingest.NewBatcher(ingest.BatcherConfig{},
		ingest.BatcherDeps{Sink: judging.sink, Logger: log, Registerer: reg, RunsSkipped: runsSkipped})
	if err != nil {
		return nil, err
	}
	// The agents' canary rounds reach the probe-health rule through the stream they came on.
	probes, err := probehealth.New(log, st, time.Now, reg, probehealth.Thresholds{Window: cfg.ProbeHealthWindow,
		MinChecks: cfg.ProbeHealthMinChecks, MinOrgs: cfg.ProbeHealthMinOrgs}, 0)
	if err != nil {
		return nil, err
	}
	if cp.ingest, err = ingest.NewServer(ingest.ServerConfig{AgentToken: cfg.AgentToken, CanaryURL: cfg.CanaryURL},
		ingest.ServerDeps{Batcher: batcher, Tokens: st, Guard: guard, Logger: log, Now: time.Now, Registerer: reg,
			Canaries: probes}); err != nil {
		return nil, err
	}
	agents, err := fleet.New(fleet.Config{ReplicaName: cfg.ReplicaName, UnservedGrace: cfg.UnservedGrace},
		fleet.Deps{Store: st, Local: localAgents(cp.ingest.Registry()), Logger: log.With("component", "fleet"), Registerer: reg})
	if err != nil {
		return nil, err
	}
	maintainer, err := ingest.NewMaintainer(ingest.MaintainerConfig{RetentionDays: cfg.RetentionDays},
		ingest.MaintainerDeps{Store: st, Logger: log, Now: time.Now, Registerer: reg})
	if err != nil {
		return nil, err
	}
	notify, err := notifier.New(notifier.Config{SMTPURL: cfg.SMTPURL, MailFrom: cfg.MailFrom,
		PublicURL: cfg.PublicURL, DenyPrivateTargets: !cfg.AllowPrivate},
		notifier.Deps{Store: st, Logger: log, Now: time.Now, Registerer: reg, RenderCheck: api.RenderCheckForWebhook})
	if err != nil {
		return nil, err
	}
	pages, err := statuspage.New(statuspage.Config{DomainRecheck: cfg.CustomDomainRecheck, DomainGrace: cfg.CustomDomainGrace},
		statuspage.Deps{Store: st, Now: time.Now, Logger: log})
	if err != nil {
		return nil, err
	}
	// Revocations reach every replica's authentication cache through PostgreSQL notifications,
	// and end the streams of revoked agent tokens.
	authn, err := auth.NewAuthenticator(auth.AuthenticatorConfig{}, auth.AuthenticatorDeps{Store: st, Now: time.Now,
		Logger: log.With("component", "auth")})
	if err != nil {
		return nil, err
	}
	authn.AddChangeListener(cp.ingest)
	// NATS may lose the job stream later (a wiped volume, a new server): the keeper puts it back.
	keeper, err := jobqueue.NewKeeper(jobqueue.KeeperConfig{Replicas: cfg.StreamReplicas}, jobqueue.KeeperDeps{JetStream: js,
		Logger: log.With("component", "jobqueue")})
	if err != nil {
		return nil, err
	}
	monitor, err := heartbeat.NewMonitor(heartbeat.MonitorConfig{}, heartbeat.MonitorDeps{Store: st, Logger: log, Now: time.Now})
	if err != nil {
		return nil, err
	}
	// Every rate limit of the replica (API, pings, status-page forms) decides on buckets in
	// PostgreSQL, which hold across replicas.
	limiter, err := ratelimit.New(ratelimit.Config{}, ratelimit.Deps{Store: st, Logger: log, Now: time.Now, Registerer: reg})
	if err != nil {
		return nil, err
	}
	cp.pipeline = append(judging.runners, keeper, batcher, sched, maintainer, notify,
		runFunc(func(ctx context.Context) error { return authn.Run(ctx, st) }),
		monitor, pages, runFunc(pages.RunDomainRechecks), agents, runFunc(cp.ingest.WatchRevocations), probes, limiter)

	grpcOpts, err := grpcTransport(cfg, log)
	if err != nil {
		return nil, err
	}
	cp.grpc = grpc.NewServer(append(ingest.GRPCServerOptions(cfg.GRPCMaxAge), grpcOpts...)...)
	cp.ingest.Register(cp.grpc)
	ping, err := heartbeat.NewPingHandler(heartbeat.PingConfig{}, heartbeat.PingDeps{Store: st, Limiter: limiter, Logger: log, Now: time.Now,
		Registerer: reg})
	if err != nil {
		return nil, err
	}
	cp.ping = httpserve.NewServer(cp.limits, ping, log)
	cp.metrics = httpserve.NewServer(cp.limits, metricsHandler(reg, cfg.Profiling), log)

	public, err := publicPages(cfg, log, st, pages, limiter)
	if err != nil {
		return nil, err
	}
	invitations, err := invite.NewHandler(invite.Deps{Store: st, Logger: log})
	if err != nil {
		return nil, err
	}
	sessions, err := console.New(console.Config{SessionTTL: cfg.ConsoleSessionTTL, CodeTTL: cfg.ConsoleLinkTTL, PublicURL: cfg.PublicURL,
		OIDC: console.OIDCConfig{Issuer: cfg.OIDCIssuer, ClientID: cfg.OIDCClientID, ClientSecret: cfg.OIDCClientSecret}},
		console.Deps{Store: st, Auth: authn, Limiter: limiter, Mailer: notify, ClientIP: api.ClientIP, Secure: api.RequestSecure,
			Now: time.Now, Logger: log})
	if err != nil {
		return nil, err
	}
	assets, err := console.NewAssets()
	if err != nil {
		return nil, err
	}
	consoleMux := http.NewServeMux()
	sessions.Routes(consoleMux)
	assets.Routes(consoleMux)
	handler, err := api.New(api.Deps{
		Logger:         log.With("component", "api"),
		Store:          st,
		Auth:           authn,
		Registry:       reg,
		Now:            time.Now,
		Ready:          ready(st, nc, keeper),
		RequestTimeout: cfg.RequestTimeout,
		TrustedProxies: cfg.TrustedProxies,
		CheckChanged:   announce,
		Public:         public,
		Invitations:    invitations,
		BadgeURL:       cfg.PublicURL,
		Sessions:       sessions,
		Console:        consoleMux,
		Agents:         agents,
		Integrations:   notify,
		Limiter:        limiter,
	})
	if err != nil {
		return nil, err
	}
	cp.http = httpserve.NewServer(cp.limits, handler, log)
	return cp, nil
}

// httpLimits are the timeouts and bounds of every HTTP listener. Connections of trusted
// reverse proxies are not bounded per address: each carries many clients.
func httpLimits(cfg config.Config) httpserve.Config {
	var proxies []netip.Prefix
	for _, p := range cfg.TrustedProxies {
		if pfx, err := netip.ParsePrefix(p); err == nil {
			proxies = append(proxies, pfx)
		} else if a, err := netip.ParseAddr(p); err == nil {
			proxies = append(proxies, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		}
	}
	maxConns := cfg.MaxConnsPerClient
	if maxConns == 0 {
		maxConns = -1 // configured as "no bound"
	}
	return httpserve.Config{ReadTimeout: cfg.HTTPReadTimeout, WriteTimeout: cfg.HTTPWriteTimeout,
		IdleTimeout: cfg.HTTPIdleTimeout, MaxConnsPerClient: maxConns,
		Unbounded: func(a netip.Addr) bool {
			for _, p := range proxies {
				if p.Contains(a) {
					return true
				}
			}
			return false
		}}
}

// metricsHandler serves the registry at /metrics; it runs on its own listener
// (VANTAGE_METRICS_ADDR, loopback by default), never on the public API's.
func metricsHandler(reg *prometheus.Registry, profiling bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	if profiling {
		httpserve.Profiling(mux)
	}
	return mux
}

// publicPages is the public status-page site with its confirm and unsubscribe links.
func publicPages(cfg config.Config, log *slog.Logger, st *store.Store, pages *statuspage.Service,
	limiter ratelimit.Limiter) (http.Handler, error) {
	cookieKey, err := web.DeriveCookieKey(cfg.SecretKey)
	if err != nil {
		return nil, err
	}
	apiHost := ""
	if u, err := url.Parse(cfg.PublicURL); err == nil {
		apiHost = u.Hostname()
	}
	log = log.With("component", "statuspage")
	links, err := subscribe.NewHandler(subscribe.Deps{Store: st, Logger: log})
	if err != nil {
		return nil, err
	}
	h, err := web.NewHandler(web.Config{StatusDomain: cfg.StatusDomain, APIHost: apiHost, CookieKey: cookieKey},
		web.Deps{Store: pages, Limiter: limiter, Logger: log, ClientIP: api.ClientIP, Extra: links})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// run listens, runs the pipeline, and on ctx's end (or a failing component) stops in order: the
// HTTP, ping and gRPC servers first, so no new work arrives — agent streams are drained, their
// pending acks sent — then the pipeline, whose batcher writes what it still holds. Every HTTP
// listener has cp.limits: read, write and idle timeouts, size caps, connections per client.
func (cp *controlPlane) run(ctx context.Context, cfg config.Config) error {
	listeners := map[string]net.Listener{}
	for name, addr := range map[string]string{"http": cfg.HTTPAddr, "ping": cfg.PingAddr, "metrics": cfg.MetricsAddr, "grpc": cfg.GRPCAddr} {
		listen := func(addr string) (net.Listener, error) { return httpserve.Listen(addr, cp.limits) }
		if name == "grpc" {
			listen = func(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }
		}
		lis, err := listen(addr)
		if err != nil {
			for _, l := range listeners {
				l.Close()
			}
			return fmt.Errorf("%s listen on %s: %w", name, addr, err)
		}
		listeners[name] = lis
	}

	pipeCtx, stopPipeline := context.WithCancel(context.WithoutCancel(ctx))
	defer stopPipeline()
	pipe, pipeCtx := errgroup.WithContext(pipeCtx)
	for _, r := range cp.pipeline {
		pipe.Go(func() error { return r.Run(pipeCtx) })
	}

	g, gctx := errgroup.WithContext(ctx)
	for name, srv := range map[string]*http.Server{"http": cp.http, "ping": cp.ping, "metrics": cp.metrics} {
		g.Go(func() error {
			cp.log.Info(name+" listening", "addr", listeners[name].Addr().String())
			if err := srv.Serve(listeners[name]); !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("%s server: %w", name, err)
			}
			return nil
		})
	}
	g.Go(func() error {
		cp.log.Info("grpc listening", "addr", listeners["grpc"].Addr().String())
		return cp.grpc.Serve(listeners["grpc"])
	})
	g.Go(func() error {
		select {
		case <-gctx.Done():
		case <-pipeCtx.Done(): // a pipeline component failed
		}
		cp.log.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
		defer cancel()
		// Agent streams never end on their own: end them (their pending acks sent) so that
		// GracefulStop does not wait for them until the timeout forces it.
		cp.ingest.Drain()
		stopped := make(chan struct{})
		go func() { cp.grpc.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-sctx.Done():
			cp.grpc.Stop()
		}
		return errors.Join(cp.http.Shutdown(sctx), cp.ping.Shutdown(sctx), cp.metrics.Shutdown(sctx))
	})
	err := g.Wait()
	stopPipeline()
	if perr := pipe.Wait(); perr != nil && !errors.Is(perr, context.Canceled) && err == nil {
		err = perr
	}
	return err
}

// ready reports whether PostgreSQL answers, NATS is connected and the job stream and its
// consumers exist there (the keeper re-creates them when NATS lost them).
func ready(st *store.Store, nc *nats.Conn, keeper *jobqueue.Keeper) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if err := st.Ping(ctx); err != nil {
			return fmt.Errorf("postgresql: %w", err)
		}
		if s := nc.Status(); s != nats.CONNECTED {
			return fmt.Errorf("nats: %s", s)
		}
		if err := keeper.Check(ctx); err != nil {
			return fmt.Errorf("nats: %w", err)
		}
		return nil
	}
}
