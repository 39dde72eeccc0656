package store_test

import (
	"context"
	"crypto/rand"
	"testing"

	"github.com/vantagehq/vantage/controlplane/internal/secrets"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
)

// TestBadgeTokenResealed: a badge's token is found by its hash, and read back (sealed) after
// admin reencrypt-secrets moved it to a new key, which the old key alone then cannot open.
func TestBadgeTokenResealed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDatabase(t)
	keyA, keyB := make([]byte, 32), make([]byte, 32)
	_, _ = rand.Read(keyA)
	_, _ = rand.Read(keyB)
	open := func(key []byte, previous ...[]byte) *store.Store {
		t.Helper()
		kr, err := secrets.NewKeyring(key, previous...)
		if err != nil {
			t.Fatal(err)
		}
		st, err := store.Open(ctx, db, kr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		return st
	}
	stA := open(keyA)
	org, err := stA.CreateOrganization(ctx, "o", "paid")
	if err != nil {
		t.Fatal(err)
	}
	id := schedInsertCheck(t, stA, org.ID, nil, "UPTIME", false, "", nil, nil)
	token, err := stA.EnableCheckBadge(ctx, store.SystemActor, org.ID, id)
	if err != nil || len(token) != store.BadgeTokenLen {
		t.Fatalf("enable: %q %v", token, err)
	}
	if o, c, err := stA.BadgeOwner(ctx, token); err != nil || o != org.ID || c != id {
		t.Fatalf("BadgeOwner = %s %s %v, want %s %s", o, c, err, org.ID, id)
	}

	if n, err := open(keyB, keyA).ReencryptSecrets(ctx); err != nil || n < 1 {
		t.Fatalf("reencrypt-secrets: %d %v", n, err)
	}
	if got, err := open(keyB).CheckBadge(ctx, org.ID, id); err != nil || got != token {
		t.Errorf("after re-sealing, the new key reads %q (%v), want %q", got, err, token)
	}
	if _, err := stA.CheckBadge(ctx, org.ID, id); err == nil {
		t.Error("the old key alone still opens the re-sealed token")
	}
}
