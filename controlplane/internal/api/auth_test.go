package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// newAccessToken makes the user with this e-mail a member of orgs and gives them an OAuth-style
// access token with scopes ("AREA:LEVEL"), returning its secret.
func newAccessToken(t testing.TB, h *harness, email string, scopes []string, expiresAt *time.Time, orgs ...uuid.UUID) string {
	t.Helper()
	ctx := context.Background()
	u, err := h.st.EnsureUser(ctx, email)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range orgs {
		if err := h.st.AddMembership(ctx, o, u.ID, "ADMIN"); err != nil {
			t.Fatal(err)
		}
	}
	secret, hash := auth.NewSecret()
	if _, err := h.st.CreateAccessToken(ctx, u.ID, scopes, expiresAt, hash); err != nil {
		t.Fatal(err)
	}
	return secret
}

// countingCredentials is a CredentialStore that counts the lookups reaching the real store.
type countingCredentials struct {
	next    auth.CredentialStore
	lookups atomic.Int64
}

var _ auth.CredentialStore = (*countingCredentials)(nil)

func (c *countingCredentials) LookupCredential(ctx context.Context, secretHash []byte) (store.Credential, error) {
	c.lookups.Add(1)
	return c.next.LookupCredential(ctx, secretHash)
}

// testClock is a clock that tests step by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

// useAuthenticator rebuilds the harness's API around a.
func useAuthenticator(t testing.TB, h *harness, a *auth.Authenticator) {
	t.Helper()
	handler, err := New(Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Store: h.st, Auth: a,
		Registry: prometheus.NewRegistry(), Now: time.Now, Ready: h.st.Ping})
	if err != nil {
		t.Fatal(err)
	}
	h.api, h.handler, h.auth = handler, validated(t, handler), a
}

// auditActors lists "actor_type actor_display_name audit_action" of an organization's audit log.
func auditActors(t testing.TB, h *harness, token string, headers ...string) []string {
	t.Helper()
	r := h.do(http.MethodGet, "/v1/audit_logs?per_page=100", token, nil, headers...)
	expectStatus(t, r, http.StatusOK)
	var out []string
	for _, e := range r.Items() {
		name, _ := e["actor_display_name"].(string)
		out = append(out, e["actor_type"].(string)+" "+name+" "+e["audit_action"].(string))
	}
	return out
}

func TestAuthAccessTokenSelectsOrganization(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	orgC, err := h.st.CreateOrganization(context.Background(), "Org C", "free")
	if err != nil {
		t.Fatal(err)
	}
	both := newAccessToken(t, h, "both@example.com", auth.AllGrants(), nil, h.orgA, h.orgB)
	onlyB := newAccessToken(t, h, "b@example.com", auth.AllGrants(), nil, h.orgB)
	inA := "X-Service-Organisation: " + h.orgA.String()

	t.Run("several organizations need the header", func(t *testing.T) {
		r := h.do(http.MethodGet, "/v1/tokens", both, nil)
		expectStatus(t, r, http.StatusBadRequest)
		if !strings.Contains(r.FirstError(), "X-Service-Organisation is required") {
			t.Fatalf("message %q", r.FirstError())
		}
	})
	t.Run("the header selects the organization", func(t *testing.T) {
		r := h.do(http.MethodPost, "/v1/tokens", both, tokenBody("made by a user in A", "WEBHOOKS:READ"), inA)
		expectStatus(t, r, http.StatusCreated)
		id := r.Result()["id"].(string)
		// The token and its audit event are A's, recorded as the user's doing.
		expectStatus(t, h.do(http.MethodGet, "/v1/tokens/"+id, h.tokenA, nil), http.StatusOK)
		expectStatus(t, h.do(http.MethodGet, "/v1/tokens/"+id, h.tokenB, nil), http.StatusNotFound)
		expectStatus(t, h.do(http.MethodGet, "/v1/tokens/"+id, both, nil, inA), http.StatusOK)
		expectStatus(t, h.do(http.MethodGet, "/v1/tokens/"+id, both, nil, "X-Service-Organisation: "+h.orgB.String()), http.StatusNotFound)
		want := "User both@example.com api_token.created"
		if got := auditActors(t, h, both, inA); len(got) == 0 || got[0] != want {
			t.Fatalf("A's audit log %v does not start with %q", got, want)
		}
		for _, e := range auditActors(t, h, h.tokenB) {
			if strings.HasPrefix(e, "User") {
				t.Fatalf("B's audit log holds A's event: %v", e)
			}
		}
	})
	t.Run("an organization the grant does not cover", func(t *testing.T) {
		for _, org := range []string{orgC.ID.String(), uuid.NewString(), "not-an-org"} {
			r := h.do(http.MethodGet, "/v1/tokens", both, nil, "X-Service-Organisation: "+org)
			expectStatus(t, r, http.StatusForbidden)
			if !strings.Contains(r.FirstError(), "does not cover") {
				t.Fatalf("message %q", r.FirstError())
			}
		}
	})
	t.Run("one organization needs no header", func(t *testing.T) {
		r := h.do(http.MethodGet, "/v1/audit_logs", onlyB, nil)
		expectStatus(t, r, http.StatusOK)
		expectStatus(t, h.do(http.MethodGet, "/v1/audit_logs", onlyB, nil, inA), http.StatusForbidden)
	})
	t.Run("an API token with its own organization in the header", func(t *testing.T) {
		expectStatus(t, h.do(http.MethodGet, "/v1/tokens", h.tokenA, nil, inA), http.StatusOK)
		expectStatus(t, h.do(http.MethodGet, "/v1/tokens", h.tokenB, nil, inA), http.StatusForbidden)
	})
	t.Run("scopes limit an access token", func(t *testing.T) {
		reader := newAccessToken(t, h, "reader@example.com", []string{"API_TOKENS:READ"}, nil, h.orgA)
		expectStatus(t, h.do(http.MethodGet, "/v1/tokens", reader, nil), http.StatusOK)
		expectStatus(t, h.do(http.MethodPost, "/v1/tokens", reader, tokenBody("x", "API_TOKENS:READ")), http.StatusForbidden)
		expectStatus(t, h.do(http.MethodGet, "/v1/audit_logs", reader, nil), http.StatusForbidden)
	})
}

func TestAuthExpiredTokens(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	past := time.Now().Add(-time.Second)
	secret, hash := auth.NewSecret()
	if _, err := h.st.CreateAPIToken(context.Background(), store.SystemActor, store.NewAPIToken{OrgID: h.orgA, Name: "expired",
		Grants: auth.AllGrants(), ExpiresAt: &past, SecretHash: hash}); err != nil {
		t.Fatal(err)
	}
	access := newAccessToken(t, h, "gone@example.com", auth.AllGrants(), &past, h.orgA)
	for name, token := range map[string]string{"api token": secret, "access token": access} {
		t.Run(name, func(t *testing.T) {
			for _, path := range []string{"/v1/tokens", "/v1/audit_logs"} {
				r := h.do(http.MethodGet, path, token, nil)
				expectStatus(t, r, http.StatusUnauthorized)
				if r.FirstError() != "invalid or expired token" {
					t.Fatalf("message %q", r.FirstError())
				}
			}
			r := h.do(http.MethodGet, "/v1/tokens/verify", token, nil)
			expectStatus(t, r, http.StatusOK)
			if r.Body["success"] != false {
				t.Fatalf("verify of an expired token: %s", r.Raw)
			}
		})
	}

	// A token that expires while cached is refused from that moment: expiry is checked on every
	// request, not when the cache entry is filled.
	clock := &testClock{now: time.Now()}
	soon := clock.Now().Add(time.Second)
	secret, hash = auth.NewSecret()
	if _, err := h.st.CreateAPIToken(context.Background(), store.SystemActor, store.NewAPIToken{OrgID: h.orgA, Name: "soon",
		Grants: auth.AllGrants(), ExpiresAt: &soon, SecretHash: hash}); err != nil {
		t.Fatal(err)
	}
	useAuthenticator(t, h, newAuthenticator(t, h.st, clock.Now))
	expectStatus(t, h.do(http.MethodGet, "/v1/tokens", secret, nil), http.StatusOK)
	clock.Advance(time.Second)
	expectStatus(t, h.do(http.MethodGet, "/v1/tokens", secret, nil), http.StatusUnauthorized)
}

func TestAuthEditImpliesReadOverHTTP(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	edit := h.token(h.orgA, "API_TOKENS:EDIT", "PEOPLE:EDIT")
	read := h.token(h.orgA, "API_TOKENS:READ")
	cases := []struct {
		name, method, path, token string
		body                      any
		want                      int
	}{
		{"EDIT lists", http.MethodGet, "/v1/tokens", edit, nil, http.StatusOK},
		{"EDIT creates", http.MethodPost, "/v1/tokens", edit, tokenBody("e", "API_TOKENS:READ"), http.StatusCreated},
		{"PEOPLE:EDIT reads the audit log", http.MethodGet, "/v1/audit_logs", edit, nil, http.StatusOK},
		{"READ lists", http.MethodGet, "/v1/tokens", read, nil, http.StatusOK},
		{"READ cannot create", http.MethodPost, "/v1/tokens", read, tokenBody("r", "API_TOKENS:READ"), http.StatusForbidden},
		{"READ cannot delete", http.MethodDelete, "/v1/tokens/" + uuid.NewString(), read, nil, http.StatusForbidden},
		{"no PEOPLE grant", http.MethodGet, "/v1/audit_logs", read, nil, http.StatusForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			expectStatus(t, h.do(tc.method, tc.path, tc.token, tc.body), tc.want)
		})
	}
}

func TestAuthCacheSparesTheDatabase(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	counting := &countingCredentials{next: h.st}
	clock := &testClock{now: time.Now()}
	const ttl = time.Minute
	a, err := auth.NewAuthenticator(auth.AuthenticatorConfig{PositiveTTL: ttl}, auth.AuthenticatorDeps{Store: counting, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	runAuthenticator(t, a, h.st) // positives are cached only while revocations are heard
	useAuthenticator(t, h, a)

	expectStatus(t, h.do(http.MethodGet, "/v1/tokens", h.tokenA, nil), http.StatusOK)
	if n := counting.lookups.Load(); n != 1 {
		t.Fatalf("first request: %d lookups, want 1", n)
	}
	expectStatus(t, h.do(http.MethodGet, "/v1/audit_logs", h.tokenA, nil), http.StatusOK)
	expectStatus(t, h.do(http.MethodGet, "/v1/tokens/verify", h.tokenA, nil), http.StatusOK)
	if n := counting.lookups.Load(); n != 1 {
		t.Fatalf("cached token: %d lookups, want still 1", n)
	}

	// Unknown secrets are cached too (briefly), so a flood of bad tokens does not reach the database.
	expectStatus(t, h.do(http.MethodGet, "/v1/tokens", "vtg_unknown", nil), http.StatusUnauthorized)
	expectStatus(t, h.do(http.MethodGet, "/v1/tokens", "vtg_unknown", nil), http.StatusUnauthorized)
	if n := counting.lookups.Load(); n != 2 {
		t.Fatalf("unknown token twice: %d lookups, want 2", n)
	}

	// Past the positive TTL the token is looked up again.
	clock.Advance(ttl + time.Second)
	expectStatus(t, h.do(http.MethodGet, "/v1/tokens", h.tokenA, nil), http.StatusOK)
	if n := counting.lookups.Load(); n != 3 {
		t.Fatalf("after the TTL: %d lookups, want 3", n)
	}

	// An authenticator that hears no revocations trusts no cached token: every request is
	// looked up.
	deaf := &countingCredentials{next: h.st}
	useAuthenticator(t, h, newAuthenticator(t, deaf, clock.Now))
	for range 3 {
		expectStatus(t, h.do(http.MethodGet, "/v1/tokens", h.tokenA, nil), http.StatusOK)
	}
	if n := deaf.lookups.Load(); n != 3 {
		t.Fatalf("without revocation feed: %d lookups for 3 requests, want 3", n)
	}
}

func TestAuthDeletedTokenIsRefusedAtOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	counting := &countingCredentials{next: h.st}
	clock := &testClock{now: time.Now()}
	mine := newAuthenticator(t, counting, clock.Now)
	runAuthenticator(t, mine, h.st)
	useAuthenticator(t, h, mine)
	// Another replica's authenticator, over the same database.
	other := newAuthenticator(t, h.st, clock.Now)
	runAuthenticator(t, other, h.st)

	r := h.do(http.MethodPost, "/v1/tokens", h.tokenA, tokenBody("short-lived", "API_TOKENS:READ"))
	expectStatus(t, r, http.StatusCreated)
	secret, id := r.Result()["token"].(string), r.Result()["id"].(string)
	expectStatus(t, h.do(http.MethodGet, "/v1/tokens", secret, nil), http.StatusOK) // now cached here
	if _, err := other.Authenticate(context.Background(), secret); err != nil {     // and there
		t.Fatal(err)
	}

	expectStatus(t, h.do(http.MethodDelete, "/v1/tokens/"+id, h.tokenA, nil), http.StatusOK)
	before := counting.lookups.Load()
	r = h.do(http.MethodGet, "/v1/tokens", secret, nil)
	expectStatus(t, r, http.StatusUnauthorized)
	if counting.lookups.Load() != before+1 {
		t.Fatal("the deleted token was answered from the cache instead of the database")
	}
	r = h.do(http.MethodGet, "/v1/tokens/verify", secret, nil)
	if r.Status != http.StatusOK || r.Body["success"] != false {
		t.Fatalf("verify of a deleted token: %d %s", r.Status, r.Raw)
	}

	// The other replica heard of it before the delete was answered: it refuses the token too,
	// well within its cache entry's TTL.
	if _, err := other.Authenticate(context.Background(), secret); err != auth.ErrInvalidToken {
		t.Fatalf("other replica after the delete: %v, want ErrInvalidToken", err)
	}
}
