// Command vantage-controlplane runs Vantage's control plane: the REST API, the scheduler, the
// agents' gRPC ingest and the evaluator (serve.go wires them).
//
//	vantage-controlplane [serve]   run the control plane (default)
//	vantage-controlplane migrate   apply database migrations and exit
//	vantage-controlplane admin ... manage organizations and tokens from the shell (see admin.go)
//	vantage-controlplane config    print every VANTAGE_* variable with its default
//	vantage-controlplane healthcheck  GET this replica's /healthz (the image's HEALTHCHECK)
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/vantagehq/vantage/controlplane/internal/config"
	"github.com/vantagehq/vantage/controlplane/internal/secrets"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/envconfig"
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
		return envconfig.WriteText(stdout, config.Vars())
	case "healthcheck":
		return healthcheck(ctx, getenv, stdout)
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, "usage: vantage-controlplane [serve|migrate|admin|config|healthcheck]")
		return nil
	}
	return fmt.Errorf("unknown command %q (want serve, migrate, admin, config or healthcheck)", cmd)
}

func openStore(ctx context.Context, cfg config.Config) (*store.Store, error) {
	keyring, err := secrets.NewKeyring(cfg.SecretKey, cfg.PreviousKeys...)
	if err != nil {
		return nil, fmt.Errorf("VANTAGE_SECRET_KEY: %w", err)
	}
	return store.Open(ctx, cfg.DatabaseURL, keyring)
}

// checkSecretKey refuses to go on when the configured key is not the database's (after
// Migrate): a replica with another key would fail to open every stored secret.
func checkSecretKey(ctx context.Context, st *store.Store, cfg config.Config) error {
	var previous []string
	for _, k := range cfg.PreviousKeys {
		previous = append(previous, secrets.Fingerprint(k))
	}
	return st.CheckSecretKey(ctx, secrets.Fingerprint(cfg.SecretKey), previous)
}
