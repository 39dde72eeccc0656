package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/console"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// adminConsoleLink prints a one-time link that signs a browser in to the console with an
// existing API or access token. The token's secret comes from an environment variable, never
// from the command line, where other users of the machine could read it.
func adminConsoleLink(args []string, getenv func(string) string, stdout, stderr io.Writer) (adminExec, error) {
	fs := flag.NewFlagSet("console-link", flag.ContinueOnError)
	tokenEnv := fs.String("token-env", "VANTAGE_CONSOLE_TOKEN", "the environment variable holding the token's secret")
	base := fs.String("base", "", "the control plane's address as the browser reaches it (default VANTAGE_PUBLIC_URL)")
	expires := fs.Duration("expires", 15*time.Minute, "how long the link stays valid; it works once")
	if err := adminFlags(fs, args, stdout); err != nil {
		return nil, helpIsDone(err)
	}
	var errs []string
	secret := getenv(*tokenEnv)
	if secret == "" {
		errs = append(errs, fmt.Sprintf("--token-env: %s is empty; set it to the secret of the token to sign in with", *tokenEnv))
	}
	if *base == "" {
		*base = getenv("VANTAGE_PUBLIC_URL")
	}
	if *base == "" {
		*base = "http://localhost:8080"
	}
	if u, err := url.Parse(*base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Sprintf("--base must be an http(s) URL such as http://127.0.0.1:8080, got %q", *base))
	}
	if *expires <= 0 {
		errs = append(errs, "--expires must be positive")
	}
	if err := flagErrors(fs, errs); err != nil {
		return nil, err
	}
	return func(ctx context.Context, st *store.Store) error {
		hash := auth.HashSecret(secret)
		cred, err := st.LookupCredential(ctx, hash)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("admin console-link: the token in %s is not a token of this deployment", *tokenEnv)
		}
		if err != nil {
			return fmt.Errorf("look the token up: %w", err)
		}
		link, err := console.TokenLink(ctx, st, strings.TrimRight(*base, "/"), hash, time.Now().Add(*expires))
		if err != nil {
			return fmt.Errorf("create the sign-in link: %w", err)
		}
		fmt.Fprintf(stderr, "a one-time console sign-in link for %q, valid once within %s:\n", cred.Display, *expires)
		fmt.Fprintln(stdout, link)
		return nil
	}, nil
}
