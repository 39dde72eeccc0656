package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/secrets"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

func newKey(t *testing.T) ([]byte, string) {
	t.Helper()
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k, base64.StdEncoding.EncodeToString(k)
}

// TestWrongSecretKeyRefusesToStartAndRotation starts a replica with another key than the
// database's (refused, with a message naming both fingerprints and the way to rotate), then
// rotates the key: the new key with the old one as previous is accepted, reencrypt-secrets
// re-seals the stored values, and from then on the old key alone is refused.
func TestWrongSecretKeyRefusesToStartAndRotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := newAdminEnv(t)
	keyA, a := newKey(t)
	keyB, b := newKey(t)
	env.vars["VANTAGE_SECRET_KEY"] = a
	orgID := uuid.MustParse(strings.TrimSpace(env.run(t, "admin", "create-org", "--name", "Acme", "--plan", "paid")))

	// A value sealed with key A.
	ringA, _ := secrets.NewKeyring(keyA)
	stA, err := store.Open(ctx, env.vars["VANTAGE_DATABASE_URL"], ringA)
	if err != nil {
		t.Fatal(err)
	}
	v, err := stA.CreateEnvVar(ctx, store.SystemActor, orgID, store.NewEnvVar{Name: "API_HOST", Type: "config", Value: "api.example.com"})
	stA.Close()
	if err != nil {
		t.Fatal(err)
	}

	// A replica with key B refuses to start, clearly.
	serveEnv := testServeEnv(t, map[string]string{"VANTAGE_DATABASE_URL": env.vars["VANTAGE_DATABASE_URL"], "VANTAGE_SECRET_KEY": b})
	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	logs := &syncBuffer{}
	err = serve(sctx, func(k string) string { return serveEnv[k] }, logs)
	if err == nil || !strings.Contains(err.Error(), secrets.Fingerprint(keyA)) || !strings.Contains(err.Error(), secrets.Fingerprint(keyB)) ||
		!strings.Contains(err.Error(), "VANTAGE_SECRET_KEY_PREVIOUS") {
		t.Fatalf("serve with the wrong key: %v, want a refusal naming both fingerprints", err)
	}
	if _, _, err := env.withKey(b, "").try("admin", "list-orgs"); err == nil {
		t.Fatal("admin with the wrong key was not refused")
	}

	// Rotation: B with A as previous is accepted; reencrypt-secrets re-seals under B.
	rot := env.withKey(b, a)
	rot.run(t, "admin", "list-orgs")
	if _, notes, err := rot.try("admin", "reencrypt-secrets"); err != nil || !strings.Contains(notes, "re-sealed 1 secrets") {
		t.Fatalf("reencrypt-secrets: %v %q", err, notes)
	}
	ringB, _ := secrets.NewKeyring(keyB)
	stB, err := store.Open(ctx, env.vars["VANTAGE_DATABASE_URL"], ringB)
	if err != nil {
		t.Fatal(err)
	}
	defer stB.Close()
	got, err := stB.GetEnvVar(ctx, orgID, v.ID)
	if err != nil || got.Value == nil || *got.Value != "api.example.com" {
		t.Fatalf("after rotation, key B alone reads %+v, %v", got, err)
	}
	if _, _, err := env.withKey(a, "").try("admin", "list-orgs"); err == nil {
		t.Fatal("after rotation, the old key alone was not refused")
	}
	env.withKey(b, "").run(t, "admin", "list-orgs")
}

// withKey is the environment with another VANTAGE_SECRET_KEY (and previous keys).
func (e adminEnv) withKey(current, previous string) adminEnv {
	vars := map[string]string{}
	for k, v := range e.vars {
		vars[k] = v
	}
	vars["VANTAGE_SECRET_KEY"] = current
	vars["VANTAGE_SECRET_KEY_PREVIOUS"] = previous
	return adminEnv{vars: vars}
}
