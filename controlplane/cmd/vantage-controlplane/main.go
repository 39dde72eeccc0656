// Command vantage-controlplane runs Vantage's control plane: the REST API and, as later parts
// land, the scheduler, the agents' gRPC ingest, the evaluator and the notifier.
//
//	vantage-controlplane [serve]   run the control plane (default)
//	vantage-controlplane migrate   apply database migrations and exit
//	vantage-controlplane admin ... manage organizations and tokens from the shell (see admin.go)
//	vantage-controlplane config    print every VANTAGE_* variable with its default
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
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/sync/errgroup"

	"github.com/vantagehq/vantage/controlplane/internal/api"
	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/config"
	"github.com/vantagehq/vantage/controlplane/internal/secrets"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "vantage-controlplane:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, getenv, stderr)
	case "migrate":
		cfg, err := config.Load(getenv)
		if err != nil {
			return err
		}
		st, err := openStore(ctx, cfg)
		if err != nil {
			return err
		}
		defer st.Close()
		return st.Migrate(ctx)
	case "admin":
		return admin(ctx, args, getenv, stdout, stderr)
	case "config":
		for _, v := range config.Vars {
			fmt.Fprintf(stdout, "%-26s %-12s %s\n", v.Name, v.Default, v.Meaning)
		}
		return nil
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, "usage: vantage-controlplane [serve|migrate|admin|config]")
		return nil
	}
	return fmt.Errorf("unknown command %q (want serve, migrate, admin or config)", cmd)
}

func openStore(ctx context.Context, cfg config.Config) (*store.Store, error) {
	keyring, err := secrets.NewKeyring(cfg.SecretKey)
	if err != nil {
		return nil, fmt.Errorf("VANTAGE_SECRET_KEY: %w", err)
	}
	return store.Open(ctx, cfg.DatabaseURL, keyring)
}

func serve(ctx context.Context, getenv func(string) string, stderr io.Writer) error {
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
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

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	handler, err := api.New(api.Deps{
		Logger:         log.With("component", "api"),
		Store:          st,
		Auth:           auth.NewAuthenticator(st, time.Now),
		Registry:       reg,
		Now:            time.Now,
		Ready:          st.Ping,
		TrustedProxies: cfg.TrustedProxies,
	})
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: cfg.HTTPAddr, Handler: handler, ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout: 120 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		log.Info("http listening", "addr", cfg.HTTPAddr)
		if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("http server on %s: %w", cfg.HTTPAddr, err)
		}
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		log.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
		defer cancel()
		return srv.Shutdown(sctx)
	})
	return g.Wait()
}
