package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
)

// replica is one API instance: its own store (pool), authenticator and router, over a
// database it shares with the other replicas of a test.
type replica struct {
	st      *store.Store
	auth    *auth.Authenticator
	lookups *countingCredentials
	handler http.Handler
}

// newReplica starts an API instance on dbURL whose authenticator listens for revocations
// until the test ends, and waits until it listens.
func newReplica(t *testing.T, dbURL string) *replica {
	t.Helper()
	st, err := store.Open(context.Background(), dbURL, storetest.NewKeyring(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	r := &replica{st: st, lookups: &countingCredentials{next: st}}
	r.auth = newAuthenticator(t, r.lookups, time.Now)
	runAuthenticator(t, r.auth, st)
	if r.handler, err = New(Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Store: st, Auth: r.auth,
		Registry: prometheus.NewRegistry(), Now: time.Now, Ready: st.Ping}); err != nil {
		t.Fatal(err)
	}
	return r
}

// runAuthenticator runs a's revocation listener on feed until the test ends, and waits until
// it listens.
func runAuthenticator(t testing.TB, a *auth.Authenticator, feed auth.RevocationFeed) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = a.Run(ctx, feed) }()
	t.Cleanup(func() { cancel(); <-done })
	waitListening(t, a, true)
}

// newAuthenticator is an authenticator with the default cache over cs, at the clock now.
func newAuthenticator(t testing.TB, cs auth.CredentialStore, now func() time.Time) *auth.Authenticator {
	t.Helper()
	a, err := auth.NewAuthenticator(auth.AuthenticatorConfig{}, auth.AuthenticatorDeps{Store: cs, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func waitListening(t testing.TB, a *auth.Authenticator, want bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for a.Listening() != want {
		if time.Now().After(deadline) {
			t.Fatalf("authenticator listening = %v after 10s, want %v", !want, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *replica) waitListening(t *testing.T, want bool) { t.Helper(); waitListening(t, r.auth, want) }

// status sends one request and returns its status.
func (r *replica) status(method, path, token string) int {
	req := httptest.NewRequest(method, path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	r.handler.ServeHTTP(rec, req)
	return rec.Code
}

// TestRevocationReachesEveryReplicaAtOnce: two API instances on one database; a token deleted
// (or a member removed) through A is refused by B on its very next request, although B had it
// cached.
func TestRevocationReachesEveryReplicaAtOnce(t *testing.T) {
	t.Parallel()
	dbURL := storetest.NewDatabase(t)
	a, b := newReplica(t, dbURL), newReplica(t, dbURL)
	ctx := context.Background()
	org, err := a.st.CreateOrganization(ctx, "Org", "paid")
	if err != nil {
		t.Fatal(err)
	}
	newToken := func() (string, uuid.UUID) {
		secret, hash := auth.NewSecret()
		tok, err := a.st.CreateAPIToken(ctx, store.SystemActor, store.NewAPIToken{OrgID: org.ID, Name: "t",
			Grants: auth.AllGrants(), SecretHash: hash})
		if err != nil {
			t.Fatal(err)
		}
		return secret, tok.ID
	}
	admin, _ := newToken()

	t.Run("deleted token", func(t *testing.T) {
		secret, id := newToken()
		// B has the token cached: the second request does not reach the database.
		for range 2 {
			if code := b.status(http.MethodGet, "/v1/tokens", secret); code != http.StatusOK {
				t.Fatalf("B before the delete: %d", code)
			}
		}
		before := b.lookups.lookups.Load()
		if b.status(http.MethodGet, "/v1/tokens/verify", secret); b.lookups.lookups.Load() != before {
			t.Fatal("B does not answer a known token from its cache: the test would prove nothing")
		}

		if code := a.status(http.MethodDelete, "/v1/tokens/"+id.String(), admin); code != http.StatusOK {
			t.Fatalf("delete through A: %d", code)
		}
		if code := b.status(http.MethodGet, "/v1/tokens", secret); code != http.StatusUnauthorized {
			t.Fatalf("B's next request with the deleted token: %d, want 401", code)
		}
	})

	t.Run("removed member", func(t *testing.T) {
		u, err := a.st.EnsureUser(ctx, "leaver@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if err := a.st.AddMembership(ctx, org.ID, u.ID, "ADMIN"); err != nil {
			t.Fatal(err)
		}
		secret, hash := auth.NewSecret()
		if _, err := a.st.CreateAccessToken(ctx, u.ID, auth.AllGrants(), nil, hash); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if code := b.status(http.MethodGet, "/v1/tokens", secret); code != http.StatusOK {
				t.Fatalf("B before the removal: %d", code)
			}
		}
		if code := a.status(http.MethodDelete, "/v1/users/"+u.ID.String(), admin); code != http.StatusOK {
			t.Fatalf("removal through A: %d", code)
		}
		// The user now belongs to no organization: the access token reaches none.
		if code := b.status(http.MethodGet, "/v1/tokens", secret); code != http.StatusForbidden {
			t.Fatalf("B's next request with the removed user's token: %d, want 403", code)
		}
	})
}

// TestRevocationFeedLostFailsSafe: while an authenticator cannot hear revocations (its
// listening session was killed), it trusts no cached token — a token deleted without any
// notification is refused at once — and once it listens again it caches anew.
func TestRevocationFeedLostFailsSafe(t *testing.T) {
	t.Parallel()
	dbURL := storetest.NewDatabase(t)
	r := newReplica(t, dbURL)
	ctx := context.Background()
	org, err := r.st.CreateOrganization(ctx, "Org", "paid")
	if err != nil {
		t.Fatal(err)
	}
	secret, hash := auth.NewSecret()
	tok, err := r.st.CreateAPIToken(ctx, store.SystemActor, store.NewAPIToken{OrgID: org.ID, Name: "t", Grants: auth.AllGrants(), SecretHash: hash})
	if err != nil {
		t.Fatal(err)
	}
	if code := r.status(http.MethodGet, "/v1/tokens", secret); code != http.StatusOK {
		t.Fatalf("before: %d", code)
	}

	// Kill the listening session, as a network cut or a database restart would.
	var killed int
	if err := r.st.Pool().QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND datname = current_database()`, store.AuthListenerName).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminated %d listening sessions (%v), want 1", killed, err)
	}
	r.waitListening(t, false)
	// Deleted behind the API's back: no notification. The cache must not answer.
	if _, err := r.st.Pool().Exec(ctx, `DELETE FROM api_tokens WHERE id = $1`, tok.ID); err != nil {
		t.Fatal(err)
	}
	if code := r.status(http.MethodGet, "/v1/tokens", secret); code != http.StatusUnauthorized {
		t.Fatalf("a cached token deleted while the feed was down: %d, want 401", code)
	}

	// The authenticator listens again by itself and caches again.
	r.waitListening(t, true)
	other, hash2 := auth.NewSecret()
	if _, err := r.st.CreateAPIToken(ctx, store.SystemActor, store.NewAPIToken{OrgID: org.ID, Name: "u", Grants: auth.AllGrants(), SecretHash: hash2}); err != nil {
		t.Fatal(err)
	}
	r.status(http.MethodGet, "/v1/tokens", other)
	before := r.lookups.lookups.Load()
	if code := r.status(http.MethodGet, "/v1/tokens", other); code != http.StatusOK || r.lookups.lookups.Load() != before {
		t.Fatalf("after listening again: %d, %d lookups, want 200 from the cache", code, r.lookups.lookups.Load()-before)
	}
}
