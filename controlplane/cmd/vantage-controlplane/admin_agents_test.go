package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// revocationHeard records the agent token revocations a replica's feed delivers.
type revocationHeard struct{ ids chan uuid.UUID }

func (r revocationHeard) CredentialChanged(kind string, id uuid.UUID) {
	if kind == store.AuthChangeAgentToken {
		r.ids <- id
	}
}
func (revocationHeard) ChangesMissed() {}

func TestAdminAgentTokens(t *testing.T) {
	t.Parallel()
	env := newAdminEnv(t)
	st := env.store(t)
	ctx := context.Background()

	out, notes, err := env.try("admin", "create-agent-token", "--regions", "cloud:eu-west-2, cloud:us-east-1", "--name", "eu and us")
	if err != nil {
		t.Fatal(err)
	}
	secret := strings.TrimSpace(out)
	if !strings.HasPrefix(secret, auth.AgentSecretPrefix) || strings.Count(out, "\n") != 1 || strings.Contains(notes, secret) {
		t.Fatalf("create-agent-token must print the secret alone: %q (notes %q)", out, notes)
	}
	tok, err := st.AgentTokenBySecret(ctx, auth.HashSecret(secret))
	if err != nil || tok.Name != "eu and us" || !slices.Equal(tok.Regions, []string{"cloud:eu-west-2", "cloud:us-east-1"}) {
		t.Fatalf("stored token %+v, %v", tok, err)
	}
	all := strings.TrimSpace(env.run(t, "admin", "create-agent-token", "--regions", "all"))
	if tok, err := st.AgentTokenBySecret(ctx, auth.HashSecret(all)); err != nil || len(tok.Regions) != 8 || tok.Name != "agents of "+strings.Join(tok.Regions, ",") {
		t.Fatalf("token for all regions %+v, %v", tok, err)
	}
	list := env.run(t, "admin", "list-agent-tokens")
	if !strings.Contains(list, tok.ID.String()) || !strings.Contains(list, "cloud:eu-west-2,cloud:us-east-1") || strings.Contains(list, secret) {
		t.Fatalf("list-agent-tokens:\n%s", list)
	}

	// A running replica hears the revocation and acknowledges it.
	heard := revocationHeard{ids: make(chan uuid.UUID, 4)}
	replica, err := auth.NewAuthenticator(auth.AuthenticatorConfig{}, auth.AuthenticatorDeps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	replica.AddChangeListener(heard)
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = replica.Run(rctx, st) }()
	t.Cleanup(func() { stop(); <-done })
	for !replica.Listening() {
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	out, notes, err = env.try("admin", "revoke-agent-token", tok.ID.String())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "revoked agent token "+tok.ID.String()) || !strings.Contains(notes, "every running control plane") {
		t.Fatalf("revoke: %q / %q", out, notes)
	}
	if d := time.Since(start); d > revokeWait {
		t.Errorf("revoke took %s: it did not hear the acknowledgements", d)
	}
	select {
	case id := <-heard.ids:
		if id != tok.ID {
			t.Errorf("the replica heard %s revoked", id)
		}
	default:
		t.Error("the replica did not hear the revocation before the command returned")
	}
	if _, err := st.AgentTokenBySecret(ctx, auth.HashSecret(secret)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a revoked token still resolves: %v", err)
	}
	if list := env.run(t, "admin", "list-agent-tokens"); !strings.Contains(list, time.Now().UTC().Format("2006-01-02")) {
		t.Errorf("list-agent-tokens does not show the revocation:\n%s", list)
	}

	noDB := adminEnv{vars: map[string]string{}}
	for _, tc := range []struct {
		env  adminEnv
		args []string
		want string
	}{
		{noDB, []string{"create-agent-token"}, "--regions is required"},
		{noDB, []string{"create-agent-token", "--regions", "cloud:mars-1"}, `"cloud:mars-1" is not a region`},
		{noDB, []string{"revoke-agent-token"}, "one token id is required"},
		{noDB, []string{"revoke-agent-token", "abc"}, `"abc" is not a token id`},
		{env, []string{"revoke-agent-token", uuid.NewString()}, "does not exist"},
	} {
		if _, _, err := tc.env.try(append([]string{"admin"}, tc.args...)...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestAdminNATSConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secrets := filepath.Join(dir, "nats-passwords")
	noDB := adminEnv{vars: map[string]string{}} // needs no database
	conf, _, err := noDB.try("admin", "nats-config", "--regions", "cloud:eu-west-2", "--secrets", secrets)
	if err != nil {
		t.Fatal(err)
	}
	first, err := readPasswords(secrets)
	if err != nil || len(first) != 2 || first["agents-eu-west-2"] == "" {
		t.Fatalf("passwords %v, %v", first, err)
	}
	if fi, err := os.Stat(secrets); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the passwords file: %v, %v", fi, err)
	}
	for _, pw := range first {
		if strings.Contains(conf, pw) {
			t.Error("the configuration carries a password in clear")
		}
	}
	conf, _, err = noDB.try("admin", "nats-config", "--regions", "cloud:eu-west-2,cloud:us-east-1", "--secrets", secrets,
		"--leafnodes", "127.0.0.1:7422")
	if err != nil {
		t.Fatal(err)
	}
	second, err := readPasswords(secrets)
	if err != nil || len(second) != 3 || second["agents-eu-west-2"] != first["agents-eu-west-2"] ||
		second["vantage-controlplane"] != first["vantage-controlplane"] {
		t.Fatalf("a new region changed the passwords given out: %v -> %v (%v)", first, second, err)
	}
	// nats-server takes it as an operator includes it.
	if err := os.WriteFile(filepath.Join(dir, "vantage.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	mainConf := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(mainConf, []byte("jetstream {store_dir: \""+filepath.Join(dir, "js")+"\"}\ninclude ./vantage.conf\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(mainConf)
	if err != nil {
		t.Fatalf("nats-server refuses the configuration: %v\n%s", err, conf)
	}
	if len(opts.Accounts) < 3 || len(opts.Users) != 3 || opts.LeafNode.Port != 7422 {
		t.Errorf("%d accounts, %d users, leaf node port %d", len(opts.Accounts), len(opts.Users), opts.LeafNode.Port)
	}
	if _, _, err := noDB.try("admin", "nats-config", "--regions", "cloud:eu-west-2"); err == nil || !strings.Contains(err.Error(), "--secrets is required") {
		t.Errorf("without --secrets: %v", err)
	}
}
