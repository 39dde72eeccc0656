package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/natsauth"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/check"
)

// The operator commands of the agents' credentials: agent tokens (stored hashed, bound to
// regions) and the NATS accounts of the regions.

func adminCreateAgentToken(args []string, stdout, stderr io.Writer) (adminExec, error) {
	fs := flag.NewFlagSet("create-agent-token", flag.ContinueOnError)
	regionsFlag := fs.String("regions", "", `comma-separated regions the token's agents may serve (cloud:eu-west-2,...), or "all" (required)`)
	name := fs.String("name", "", `a name for operators, 1..255 characters (default "agents of <regions>")`)
	if err := adminFlags(fs, args, stdout); err != nil {
		return nil, helpIsDone(err)
	}
	var errs []string
	regions, err := parseRegionList(*regionsFlag)
	if err != nil {
		errs = append(errs, "--regions "+err.Error())
	}
	if *name == "" {
		*name = "agents of " + strings.Join(regions, ",")
	}
	if msg := checkName(*name); msg != "" {
		errs = append(errs, "--name "+msg)
	}
	if err := flagErrors(fs, errs); err != nil {
		return nil, err
	}
	return func(ctx context.Context, st *store.Store) error {
		secret, hash := auth.NewAgentSecret()
		t, err := st.CreateAgentToken(ctx, *name, regions, hash)
		if err != nil {
			return fmt.Errorf("create agent token: %w", err)
		}
		fmt.Fprintf(stderr, "created agent token %s (%s) for %s; agents present it as VANTAGE_AGENT_TOKEN; "+
			"the secret below is shown only once\n", t.ID, t.Name, strings.Join(t.Regions, ", "))
		fmt.Fprintln(stdout, secret)
		return nil
	}, nil
}

// parseRegionList reads "all" or comma-separated known regions, each once, in order.
func parseRegionList(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("is required: comma-separated regions (%s) or \"all\"", strings.Join(check.Regions, ", "))
	}
	if s == "all" {
		return slices.Clone(check.Regions), nil
	}
	var out []string
	for _, r := range strings.Split(s, ",") {
		r = strings.TrimSpace(r)
		if !check.IsRegion(r) {
			return nil, fmt.Errorf("%q is not a region; known: %s", r, strings.Join(check.Regions, ", "))
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out, nil
}

func adminListAgentTokens(args []string, stdout, stderr io.Writer) (adminExec, error) {
	fs := flag.NewFlagSet("list-agent-tokens", flag.ContinueOnError)
	if err := adminFlags(fs, args, stdout); err != nil {
		return nil, helpIsDone(err)
	}
	return func(ctx context.Context, st *store.Store) error {
		tokens, err := st.ListAgentTokens(ctx)
		if err != nil {
			return fmt.Errorf("list agent tokens: %w", err)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tREGIONS\tCREATED\tREVOKED\tNAME")
		for _, t := range tokens {
			revoked := "-"
			if t.RevokedAt != nil {
				revoked = t.RevokedAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, strings.Join(t.Regions, ","), t.CreatedAt.UTC().Format(time.RFC3339), revoked, t.Name)
		}
		return tw.Flush()
	}, nil
}

// revokeWait bounds how long revoke-agent-token waits for the replicas' acknowledgements.
const revokeWait = 10 * time.Second

func adminRevokeAgentToken(args []string, stdout, stderr io.Writer) (adminExec, error) {
	fs := flag.NewFlagSet("revoke-agent-token", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(stdout, "usage: vantage-controlplane admin revoke-agent-token <token-id>")
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("admin revoke-agent-token: %w", err)
	case fs.NArg() != 1:
		return nil, errors.New("admin revoke-agent-token: one token id is required (see admin list-agent-tokens)")
	}
	id, err := uuid.Parse(fs.Arg(0))
	if err != nil {
		return nil, fmt.Errorf("admin revoke-agent-token: %q is not a token id (see admin list-agent-tokens)", fs.Arg(0))
	}
	return func(ctx context.Context, st *store.Store) error {
		// Hear the replicas acknowledge the revocation the way an API token's deletion does:
		// each ends the token's streams before it acknowledges.
		authn, err := auth.NewAuthenticator(auth.AuthenticatorConfig{}, auth.AuthenticatorDeps{Store: st})
		if err != nil {
			return err
		}
		lctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = authn.Run(lctx, st) }()
		defer func() { stop(); <-done }()
		for deadline := time.Now().Add(5 * time.Second); !authn.Listening() && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		revoked := authn.Expect(store.AuthChangeAgentToken + id.String())
		t, err := st.RevokeAgentToken(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			revoked.Cancel()
			return fmt.Errorf("agent token %s does not exist (see admin list-agent-tokens)", id)
		}
		if err != nil {
			revoked.Cancel()
			return fmt.Errorf("revoke agent token %s: %w", id, err)
		}
		wctx, cancel := context.WithTimeout(ctx, revokeWait)
		defer cancel()
		revoked.Wait(wctx)
		fmt.Fprintf(stdout, "revoked agent token %s (%s, %s)\n", t.ID, t.Name, strings.Join(t.Regions, ", "))
		if wctx.Err() != nil || !authn.Listening() {
			fmt.Fprintf(stderr, "not every control plane acknowledged within %s: the others end the token's streams within %s\n",
				revokeWait, 30*time.Second)
			return nil
		}
		fmt.Fprintln(stderr, "every running control plane has ended the token's streams")
		return nil
	}, nil
}

// adminNATSConfig prints the nats-server accounts of a deployment's regions (natsauth). It
// needs no database: it reads and completes the file of passwords, so that running it again
// (for a new region) keeps the passwords already given out.
func adminNATSConfig(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("nats-config", flag.ContinueOnError)
	regionsFlag := fs.String("regions", "", `comma-separated regions that get an account, or "all" (required)`)
	leafnodes := fs.String("leafnodes", "", "also listen for leaf nodes of remote regions on this address (host:port, e.g. "+
		"0.0.0.0:7422); they log in as their region's user")
	secrets := fs.String("secrets", "", "file of the users' passwords, one \"user password\" per line: read, completed with new "+
		"users and written back (mode 0600); keep it with your secrets (required)")
	if err := adminFlags(fs, args, stdout); err != nil {
		return helpIsDone(err)
	}
	var errs []string
	regions, err := parseRegionList(*regionsFlag)
	if err != nil {
		errs = append(errs, "--regions "+err.Error())
	}
	if *secrets == "" {
		errs = append(errs, "--secrets is required")
	}
	if *leafnodes != "" {
		if _, _, err := net.SplitHostPort(*leafnodes); err != nil {
			errs = append(errs, fmt.Sprintf("--leafnodes must be host:port, got %q", *leafnodes))
		}
	}
	if err := flagErrors(fs, errs); err != nil {
		return err
	}
	passwords, err := readPasswords(*secrets)
	if err != nil {
		return err
	}
	users := []string{natsauth.ControlPlaneUser}
	for _, r := range regions {
		users = append(users, natsauth.AgentUser(r))
	}
	added := false
	for _, u := range users {
		if passwords[u] == "" {
			passwords[u], added = randomPassword(), true
		}
	}
	if added {
		if err := writePasswords(*secrets, passwords); err != nil {
			return err
		}
	}
	conf, err := natsauth.Config(regions, passwords, fmt.Sprintf(
		"Vantage NATS accounts for %s, made by vantage-controlplane admin nats-config.\n"+
			"Include it in nats-server.conf beside jetstream {...}; the passwords are in %s.", strings.Join(regions, ", "), *secrets))
	if err != nil {
		return err
	}
	if *leafnodes != "" {
		conf += fmt.Sprintf("# Leaf nodes of remote regions log in as their region's user (agents-<region>).\nleafnodes {\n  listen: %q\n}\n", *leafnodes)
	}
	fmt.Fprint(stdout, conf)
	fmt.Fprintf(stderr, "control plane: VANTAGE_NATS_URL=nats://%s:<password>@<nats>:4222; agents of a region: "+
		"VANTAGE_NATS_URL=nats://agents-<region>:<password>@<nats or leaf node>:4222 and VANTAGE_NATS_API_PREFIX=%s\n",
		natsauth.ControlPlaneUser, natsauth.APIPrefix)
	return nil
}

func readPasswords(file string) (map[string]string, error) {
	out := map[string]string{}
	f, err := os.Open(file) //nolint:gosec // G304: the operator's own file, named on the command line
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--secrets: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		user, pw, ok := strings.Cut(line, " ")
		if !ok || strings.TrimSpace(pw) == "" {
			return nil, fmt.Errorf("--secrets %s line %d: want \"user password\"", file, n)
		}
		out[user] = strings.TrimSpace(pw)
	}
	return out, sc.Err()
}

func writePasswords(file string, passwords map[string]string) error {
	var b strings.Builder
	b.WriteString("# NATS users of Vantage and their passwords (vantage-controlplane admin nats-config)\n")
	for _, u := range slices.Sorted(maps.Keys(passwords)) {
		fmt.Fprintf(&b, "%s %s\n", u, passwords[u])
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("--secrets: %w", err)
	}
	if err := os.Rename(tmp, file); err != nil {
		return fmt.Errorf("--secrets: %w", err)
	}
	return nil
}

func randomPassword() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b)
}
