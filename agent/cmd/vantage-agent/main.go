// Command vantage-agent runs a Vantage probe agent: it pulls check jobs for its regions from
// NATS JetStream, probes their targets, streams the results to the control plane over one gRPC
// stream, and acks each job once the control plane has stored its results.
//
//	vantage-agent [run]           run the agent (default)
//	vantage-agent config          print every VANTAGE_* variable with its default
//	vantage-agent healthcheck     GET this agent's /healthz (the image's HEALTHCHECK)
//	vantage-agent browser-worker  run one browser check's script (started by the agent itself)
//	vantage-agent test FILE       run a browser check's script locally (see `vantage-agent test -h`)
//
// SIGINT or SIGTERM stops fetching, lets running jobs finish for VANTAGE_SHUTDOWN_TIMEOUT, and
// hands the rest back to JetStream for immediate redelivery to another agent of the region.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/vantagehq/vantage/agent/internal/browser"
	"github.com/vantagehq/vantage/agent/internal/browser/scriptworker"
	"github.com/vantagehq/vantage/agent/internal/canary"
	"github.com/vantagehq/vantage/agent/internal/config"
	"github.com/vantagehq/vantage/agent/internal/localrun"
	"github.com/vantagehq/vantage/agent/internal/probe"
	"github.com/vantagehq/vantage/agent/internal/prober"
	"github.com/vantagehq/vantage/agent/internal/sizing"
	"github.com/vantagehq/vantage/agent/internal/uplink"
	"github.com/vantagehq/vantage/agent/internal/worker"
	"github.com/vantagehq/vantage/pkg/envconfig"
	"github.com/vantagehq/vantage/pkg/httpserve"
	"github.com/vantagehq/vantage/pkg/tlsfiles"
	"github.com/vantagehq/vantage/pkg/wire"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

var (
	_ worker.Uplink = (*uplink.Client)(nil)
	_ worker.Runner = (*probe.Runner)(nil)
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == scriptworker.Command {
		os.Exit(scriptworker.Main(os.Stdin, os.Stdout, os.Stderr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if len(os.Args) > 1 && os.Args[1] == localrun.Command {
		code := localrun.Main(ctx, os.Args[2:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "vantage-agent:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "run"
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "run":
		cfg, err := config.Load(getenv)
		if err != nil {
			return err
		}
		return serve(ctx, cfg, stderr)
	case "config":
		return envconfig.WriteText(stdout, config.Vars())
	case "healthcheck":
		return healthcheck(ctx, getenv, stdout)
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, "usage: vantage-agent [run|config|healthcheck|test|browser-worker]")
		return nil
	}
	return fmt.Errorf("unknown command %q (want run, config or healthcheck)", cmd)
}

// serve runs the agent until ctx ends or a part fails for good.
func serve(ctx context.Context, cfg config.Config, stderr io.Writer) error {
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	version := buildVersion()
	hostname, _ := os.Hostname()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	machine, err := sizing.Probe()
	if err != nil {
		return err
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = sizing.Concurrency(machine)
	}
	logger.Info("probe concurrency", "component", "agent", "concurrency", cfg.Concurrency,
		"rlimit_nofile", machine.NoFile, "memory_bytes", machine.Memory)

	nc, natsHealth, err := connectNATS(cfg, logger)
	if err != nil {
		return fmt.Errorf("connect to NATS: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if cfg.NATSAPIPrefix != "" { // a region account sees the job stream's API under a prefix
		js, err = jetstream.NewWithAPIPrefix(nc, cfg.NATSAPIPrefix)
	}
	if err != nil {
		return fmt.Errorf("JetStream: %w", err)
	}

	br, err := startBrowser(ctx, cfg, logger, reg)
	if err != nil {
		return err
	}
	var (
		capabilities       []string
		browserConcurrency int
	)
	if br != nil {
		capabilities = []string{wire.CapabilityBrowser}
		browserConcurrency = br.Concurrency()
	}
	// Ping checks need ICMP sockets: unprivileged ones where net.ipv4.ping_group_range admits
	// the agent's group, raw ones with CAP_NET_RAW. Which one is told once, here.
	icmpMode := prober.DetectICMPMode()
	icmpModeGauge := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "vantage_agent_icmp_mode",
		Help: "1 for the ICMP socket mode ping checks run with: unprivileged, raw, or unavailable (ping checks fail NOT_SUPPORTED).",
	}, []string{"mode"})
	icmpModeGauge.WithLabelValues(icmpMode).Set(1)
	reg.MustRegister(icmpModeGauge)
	if icmpMode == prober.ICMPUnavailable {
		logger.Warn("ping checks cannot run: no ICMP socket can be opened; set net.ipv4.ping_group_range or grant CAP_NET_RAW",
			"component", "agent", "icmp_mode", icmpMode)
	} else {
		logger.Info("ICMP sockets for ping checks", "component", "agent", "icmp_mode", icmpMode)
	}
	// The run path: a job's secrets open with the keys each registration brings, the prober of
	// its kind runs it, and its result carries the job's signature.
	probeOpts := []prober.Option{prober.WithPrivateTargets(cfg.AllowPrivateTargets), prober.WithVersion(version),
		prober.WithICMPMode(icmpMode)}
	if br != nil { // a nil *browser.Browser in the interface would not read as "no browser"
		probeOpts = append(probeOpts, prober.WithBrowser(br))
	}
	runner, err := probe.New(probe.Deps{Prober: prober.New(probeOpts...), Logger: logger})
	if err != nil {
		return err
	}
	creds, err := transportCredentials(cfg, logger)
	if err != nil {
		return err
	}
	// Canaries go through the checks' own prober and outbound policy, on their own
	// concurrency; the uplink, built after, sends their rounds.
	var up *uplink.Client
	canaries, err := canary.New(canary.Config{Targets: cfg.CanaryTargets, Interval: cfg.CanaryInterval,
		MaxClockSkew: cfg.MaxClockSkew, ClockSkew: cfg.TestClockSkew},
		canary.Deps{Prober: prober.New(prober.WithPrivateTargets(cfg.AllowPrivateTargets), prober.WithVersion(version)),
			Send: func(r *vantagev1.CanaryReport) bool { return up.SendCanary(r) }, Logger: logger, Registerer: reg})
	if err != nil {
		return err
	}
	up, err = uplink.New(uplink.Config{
		Addr: cfg.ControlPlaneAddr, Token: cfg.AgentToken,
		AgentID: cfg.AgentID, Hostname: hostname, Version: version, Regions: cfg.Regions, Capacity: cfg.Concurrency,
		Capabilities: capabilities,
	}, uplink.Deps{Logger: logger, Registerer: reg, TransportCredentials: creds,
		OnRegistered: func(r *vantagev1.Registered) {
			runner.Registered(r)
			canaries.Registered(r)
		},
		OnServerTime: canaries.ServerTime})
	if err != nil {
		return err
	}
	w, err := worker.New(worker.Config{
		AgentID: cfg.AgentID, Regions: cfg.Regions, Concurrency: cfg.Concurrency, DrainTimeout: cfg.ShutdownTimeout,
		BrowserConcurrency: browserConcurrency,
	}, worker.Deps{JetStream: js, Runner: runner, Uplink: up, Logger: logger, Registerer: reg})
	if err != nil {
		return err
	}

	// Probes reach /healthz and /readyz on VANTAGE_HTTP_ADDR; /metrics has its own listener
	// (VANTAGE_METRICS_ADDR, loopback by default). Both have httpserve's default limits.
	lis, err := httpserve.Listen(cfg.HTTPAddr, httpserve.Config{})
	if err != nil {
		return fmt.Errorf("VANTAGE_HTTP_ADDR: %w", err)
	}
	metricsLis, err := httpserve.Listen(cfg.MetricsAddr, httpserve.Config{})
	if err != nil {
		lis.Close()
		return fmt.Errorf("VANTAGE_METRICS_ADDR: %w", err)
	}
	srv := httpserve.NewServer(httpserve.Config{}, opsHandler(nc, natsHealth, up, w, br), logger)
	metricsSrv := httpserve.NewServer(httpserve.Config{}, metricsHandler(reg, cfg.Profiling), logger)

	logger.Info("vantage agent starting", "component", "agent", "agent_id", cfg.AgentID, "version", version,
		"regions", cfg.Regions, "concurrency", cfg.Concurrency, "controlplane_addr", cfg.ControlPlaneAddr,
		"controlplane_tls", cfg.ControlPlaneTLS, "client_certificate", cfg.TLSCert != "",
		"http_addr", lis.Addr().String(), "metrics_addr", metricsLis.Addr().String(), "allow_private_targets", cfg.AllowPrivateTargets,
		"browser", br != nil, "browser_concurrency", browserConcurrency, "canary_targets", len(cfg.CanaryTargets),
		"canary_interval", cfg.CanaryInterval, "test_clock_skew", cfg.TestClockSkew)

	g, gctx := errgroup.WithContext(ctx)
	// The uplink outlives the worker: jobs finishing during the drain still need their acks.
	upCtx, stopUplink := context.WithCancel(context.WithoutCancel(ctx))
	defer stopUplink()
	g.Go(func() error {
		defer stopUplink()
		return w.Run(gctx)
	})
	g.Go(func() error { return up.Run(upCtx) })
	g.Go(func() error { return canaries.Run(gctx) })
	if br != nil {
		// Like the uplink, the browser serves the jobs that finish during the drain.
		g.Go(func() error { return br.Run(upCtx) })
	}
	g.Go(func() error {
		if err := srv.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("ops HTTP server: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		if err := metricsSrv.Serve(metricsLis); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("metrics HTTP server: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		<-upCtx.Done() // probes and metrics stay up until the drain is over
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return errors.Join(srv.Shutdown(sctx), metricsSrv.Shutdown(sctx))
	})
	err = g.Wait()
	logger.Info("vantage agent stopped", "component", "agent", "agent_id", cfg.AgentID)
	return err
}

// transportCredentials secures the gRPC stream as configured: TLS verifying the control
// plane's certificate (with a client certificate for mutual TLS), or plaintext. Rotated
// certificate and CA files are read again on the next connection.
func transportCredentials(cfg config.Config, logger *slog.Logger) (credentials.TransportCredentials, error) {
	if !cfg.ControlPlaneTLS {
		return insecure.NewCredentials(), nil
	}
	log := logger.With("component", "uplink")
	c, err := tlsfiles.ClientConfig(cfg.ControlPlaneCA, cfg.TLSCert, cfg.TLSKey, cfg.ControlPlaneServerName, tlsfiles.Options{
		OnReload: func(what string, err error) {
			if err != nil {
				log.Error("TLS file changed but cannot be loaded; keeping the previous one", "file", what, "err", err)
				return
			}
			log.Info("TLS file reloaded", "file", what)
		}})
	if err != nil {
		return nil, fmt.Errorf("control plane TLS: %w", err)
	}
	return credentials.NewTLS(c), nil
}

// startBrowser launches the agent's Chromium for browser checks. It returns nil (and the agent
// takes no browser jobs) when the configuration says "none", when no Chromium is installed, or
// when it does not start; a VANTAGE_BROWSER_PATH that does not start is an error.
func startBrowser(ctx context.Context, cfg config.Config, logger *slog.Logger, reg prometheus.Registerer) (*browser.Browser, error) {
	if cfg.BrowserPath == config.NoBrowser {
		logger.Info("browser checks disabled (VANTAGE_BROWSER_PATH=none): this agent takes no browser jobs", "component", "browser")
		return nil, nil
	}
	br, err := browser.New(browser.Config{
		Path: cfg.BrowserPath, Concurrency: cfg.BrowserConcurrency, BlockPrivateTargets: !cfg.AllowPrivateTargets, Sandbox: cfg.BrowserSandbox,
		WorkerMemory: cfg.BrowserWorkerMemory,
	}, browser.Deps{Logger: logger, Registerer: reg})
	if err == nil {
		err = br.Start(ctx)
	}
	switch {
	case err == nil:
		return br, nil
	case cfg.BrowserPath != "":
		return nil, fmt.Errorf("VANTAGE_BROWSER_PATH: %w", err)
	}
	logger.Warn("no browser: this agent takes no browser jobs (they go to agents with one)", "component", "browser", "err", err)
	return nil, nil
}

// opsHandler serves /healthz (the process runs) and /readyz (NATS connected, consumers set up,
// the control plane stream registered, and the browser up on an agent with one).
func opsHandler(nc *nats.Conn, natsHealth *natsHealth, up *uplink.Client, w *worker.Worker, br *browser.Browser) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(rw http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(rw, "ok")
	})
	mux.HandleFunc("GET /readyz", func(rw http.ResponseWriter, _ *http.Request) {
		var notReady []string
		if !nc.IsConnected() {
			why := "NATS not connected"
			if r := natsHealth.reason(); r != "" {
				why += ": " + r
			}
			notReady = append(notReady, why)
		}
		if !w.Ready() {
			notReady = append(notReady, "job consumers not set up")
		}
		if !up.Ready() {
			notReady = append(notReady, "not registered with the control plane")
		}
		if br != nil && !br.Ready() {
			notReady = append(notReady, "the browser is restarting")
		}
		if len(notReady) > 0 {
			http.Error(rw, strings.Join(notReady, "; "), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(rw, "ready")
	})
	return mux
}

// metricsHandler serves the registry at /metrics.
func metricsHandler(reg *prometheus.Registry, profiling bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	if profiling {
		httpserve.Profiling(mux)
	}
	return mux
}

// buildVersion is the module version, or the VCS revision of a development build.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "devel-" + rev
}
