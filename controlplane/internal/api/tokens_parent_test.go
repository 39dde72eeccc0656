package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

// TestChildTokenNeverOutlivesItsParent: a token made by an expiring credential expires no
// later than it: the default lifetime is cut to the creator's expiry, and an explicit later
// expiry, or none, is refused with 403. Grants stay within the creator's.
func TestChildTokenNeverOutlivesItsParent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	parentExpiry := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Millisecond)
	secret, hash := auth.NewSecret()
	if _, err := h.st.CreateAPIToken(context.Background(), store.SystemActor, store.NewAPIToken{OrgID: h.orgA, Name: "parent",
		Grants: []string{"API_TOKENS:EDIT", "WEBHOOKS:READ"}, ExpiresAt: &parentExpiry, SecretHash: hash}); err != nil {
		t.Fatal(err)
	}
	grants := []map[string]string{{"scope": "WEBHOOKS", "permission": "READ"}}
	earlier := parentExpiry.Add(-time.Hour)
	stamp := func(t time.Time) string { return t.Format("2006-01-02T15:04:05.000Z07:00") }
	cases := []struct {
		name       string
		body       map[string]any
		status     int
		expires    *time.Time // the child's expiresAfter on success
		errMention string
	}{
		{"default lifetime cut to the parent's expiry", map[string]any{"name": "c1", "grants": grants}, http.StatusCreated, &parentExpiry, ""},
		{"earlier expiry kept", map[string]any{"name": "c2", "grants": grants, "expiresAt": stamp(parentExpiry.Add(-time.Hour))},
			http.StatusCreated, &earlier, ""},
		{"the parent's own expiry", map[string]any{"name": "c3", "grants": grants, "expiresAt": stamp(parentExpiry)},
			http.StatusCreated, &parentExpiry, ""},
		{"never expiring", map[string]any{"name": "c4", "grants": grants, "expiresAt": nil}, http.StatusForbidden, nil, "cannot outlive"},
		{"later expiry", map[string]any{"name": "c5", "grants": grants, "expiresAt": stamp(parentExpiry.Add(time.Minute))},
			http.StatusForbidden, nil, "cannot outlive"},
		{"more permission", map[string]any{"name": "c6", "grants": []map[string]string{{"scope": "WEBHOOKS", "permission": "EDIT"}}},
			http.StatusForbidden, nil, "WEBHOOKS:EDIT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodPost, "/v1/tokens", secret, tc.body)
			expectStatus(t, r, tc.status)
			if tc.status != http.StatusCreated {
				if !strings.Contains(r.FirstError(), tc.errMention) {
					t.Fatalf("message %q does not mention %q", r.FirstError(), tc.errMention)
				}
				return
			}
			got, _ := r.Result()["expiresAfter"].(string)
			at, err := time.Parse(time.RFC3339Nano, got)
			if err != nil || !at.Equal(*tc.expires) {
				t.Fatalf("expiresAfter %q, want %s", got, tc.expires.Format(time.RFC3339Nano))
			}
			// And the stored token really stops working then.
			child := h.do(http.MethodGet, "/v1/tokens/"+r.Result()["id"].(string), h.tokenA, nil)
			expectStatus(t, child, http.StatusOK)
			if child.Result()["expiresAfter"] != got {
				t.Fatalf("stored expiresAfter %v, answered %s", child.Result()["expiresAfter"], got)
			}
		})
	}

	// A creator that never expires may still make never-expiring tokens (the contract's null).
	r := h.do(http.MethodPost, "/v1/tokens", h.tokenA, map[string]any{"name": "forever", "grants": grants, "expiresAt": nil})
	expectStatus(t, r, http.StatusCreated)
	if r.Result()["expiresAfter"] != nil {
		t.Fatalf("a never-expiring creator's null expiry: %s", r.Raw)
	}
}
