package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/smtptest"
	"github.com/vantagehq/vantage/controlplane/internal/store"
)

func TestUsersListAndRemove(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	self := newAccessToken(t, h, "owner@example.com", auth.AllGrants(), nil, h.orgA)
	newAccessToken(t, h, "zoe@example.com", []string{}, nil, h.orgB) // another organization's member
	bob, err := h.st.EnsureUser(ctx, "bob@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.st.AddMembership(ctx, h.orgA, bob.ID, "STANDARD"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.st.Pool().Exec(ctx, `UPDATE users SET first_name = 'Bob', last_name = 'Builder' WHERE id = $1`, bob.ID); err != nil {
		t.Fatal(err)
	}

	r := h.spCall(t, http.MethodGet, "/v1/users", nil, http.StatusOK)
	golden(t, "users_list", r.Raw)
	if r.Body["result_info"].(map[string]any)["total_count"].(float64) != 2 {
		t.Fatalf("want 2 members of org A: %s", r.Raw)
	}
	for q, want := range map[string]int{"builder": 1, "BOB": 1, "example.com": 2, "zoe": 0} {
		r := h.spCall(t, http.MethodGet, "/v1/users?search="+url.QueryEscape(q), nil, http.StatusOK)
		if got := len(r.Items()); got != want {
			t.Errorf("search %q: %d users, want %d", q, got, want)
		}
	}
	if r := h.do(http.MethodGet, "/v1/users?per_page=1&page=2", h.tokenA, nil); len(r.Items()) != 1 || r.Items()[0]["email"] != "bob@example.com" {
		t.Errorf("second page: %s", r.Raw)
	}

	var ownerID uuid.UUID
	if err := h.st.Pool().QueryRow(ctx, `SELECT id FROM users WHERE email = 'owner@example.com'`).Scan(&ownerID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, token, id string
		status          int
		typ             string
	}{
		{"yourself", self, ownerID.String(), 400, "cannot_remove_yourself"},
		{"no permission", h.token(h.orgA, "PEOPLE:READ"), bob.ID.String(), 403, "forbidden"},
		{"not a member", h.tokenA, uuid.NewString(), 404, "not_found"},
		{"not an id", h.tokenA, "nobody", 404, "not_found"},
		{"member of another organization", h.tokenB, bob.ID.String(), 404, "not_found"},
		{"member", self, bob.ID.String(), 200, ""},
		{"removed already", self, bob.ID.String(), 404, "not_found"},
		{"by an API token, which is no user", h.tokenA, ownerID.String(), 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodDelete, "/v1/users/"+tc.id, tc.token, nil)
			expectStatus(t, r, tc.status)
			if tc.status == 200 {
				if r.Result()["id"] != tc.id {
					t.Errorf("result %s", r.Raw)
				}
				return
			}
			if errs := r.Body["errors"].([]any); errs[0].(map[string]any)["type"] != tc.typ {
				t.Errorf("error type: %s", r.Raw)
			}
		})
	}
	if n := h.auditCount(t, "user.removed"); n != 2 {
		t.Errorf("%d user.removed audit events, want 2", n)
	}
	// The removed user still exists (and keeps other memberships); only the membership went.
	var users int
	if err := h.st.Pool().QueryRow(ctx, `SELECT count(*) FROM users WHERE id = $1`, bob.ID).Scan(&users); err != nil || users != 1 {
		t.Errorf("user row: %d %v", users, err)
	}
}

func TestInvitations(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	newAccessToken(t, h, "member@example.com", []string{}, nil, h.orgA)
	const path = "/v1/invitations"

	for _, tc := range []struct {
		name   string
		body   any
		status int
		want   string
	}{
		{"email required", map[string]any{"role": "ADMIN"}, 400, "email: is required"},
		{"email format", map[string]any{"email": "not-an-address"}, 400, "email: must be an e-mail address"},
		{"email type", map[string]any{"email": 5}, 400, "email:"},
		{"role enum", map[string]any{"email": "x@example.com", "role": "OWNER"}, 400, "role: must be one of ADMIN, STANDARD"},
		{"unknown field", map[string]any{"email": "x@example.com", "name": "X"}, 400, "name: unknown property"},
		{"already a member", map[string]any{"email": "Member@Example.com"}, 400, "already"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.spCall(t, http.MethodPost, path, tc.body, tc.status)
			if !strings.Contains(r.ErrorText(), tc.want) {
				t.Errorf("errors %q lack %q", r.ErrorText(), tc.want)
			}
		})
	}

	r := h.spCall(t, http.MethodPost, path, map[string]any{"email": "new@example.com"}, http.StatusCreated)
	golden(t, "invitation_create", r.Raw)
	if r.Result()["role"] != "STANDARD" {
		t.Errorf("default role: %s", r.Raw)
	}
	r = h.spCall(t, http.MethodPost, path, map[string]any{"email": "NEW@example.com", "role": "ADMIN"}, http.StatusBadRequest)
	if typ := r.Body["errors"].([]any)[0].(map[string]any)["type"]; typ != "already_invited" {
		t.Errorf("re-invite: %s", r.Raw)
	}
	h.spCall(t, http.MethodPost, path, map[string]any{"email": "admin@example.com", "role": "ADMIN"}, http.StatusCreated)

	list := h.spCall(t, http.MethodGet, path, nil, http.StatusOK)
	golden(t, "invitations_list", list.Raw)
	if n := len(list.Items()); n != 2 {
		t.Fatalf("%d pending invitations, want 2", n)
	}
	if r := h.spCall(t, http.MethodGet, path+"?search=admin", nil, http.StatusOK); len(r.Items()) != 1 {
		t.Errorf("search: %s", r.Raw)
	}
	if r := h.do(http.MethodGet, path, h.tokenB, nil); len(r.Items()) != 0 {
		t.Errorf("another organization sees: %s", r.Raw)
	}
	if r := h.do(http.MethodPost, path, h.token(h.orgA, "PEOPLE:READ"), map[string]any{"email": "y@example.com"}); r.Status != http.StatusForbidden {
		t.Errorf("PEOPLE:READ may not invite: %d", r.Status)
	}
	if r := h.do(http.MethodGet, path, h.token(h.orgA, "STATUS_PAGES:EDIT"), nil); r.Status != http.StatusForbidden {
		t.Errorf("without PEOPLE: %d", r.Status)
	}
	if n := h.auditCount(t, "invitation.created"); n != 2 {
		t.Errorf("%d invitation.created audit events, want 2", n)
	}

	// The invitation's e-mail is queued with it, in the same transaction.
	var tokenCount int
	if err := h.st.Pool().QueryRow(ctx, `SELECT count(*) FROM outbox WHERE event_type = 'invitation.created'
		AND payload::text LIKE '%new@example.com%'`).Scan(&tokenCount); err != nil || tokenCount != 1 {
		t.Fatalf("invitation.created events for new@: %d %v", tokenCount, err)
	}
}

func TestInvitationSeatLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t) // org B is on the free plan: 5 seats
	newAccessToken(t, h, "first@example.com", []string{}, nil, h.orgB)
	limit, _ := seatLimit("free")
	for i := 1; i < limit; i++ {
		r := h.do(http.MethodPost, "/v1/invitations", h.tokenB, map[string]any{"email": "p" + strconv.Itoa(i) + "@example.com"})
		expectStatus(t, r, http.StatusCreated)
	}
	r := h.do(http.MethodPost, "/v1/invitations", h.tokenB, map[string]any{"email": "one-too-many@example.com"})
	expectStatus(t, r, http.StatusForbidden)
	if typ := r.Body["errors"].([]any)[0].(map[string]any)["type"]; typ != "seat_limit_reached" {
		t.Errorf("error: %s", r.Raw)
	}
	// The paid org A has no limit.
	for i := 0; i <= limit; i++ {
		expectStatus(t, h.do(http.MethodPost, "/v1/invitations", h.tokenA, map[string]any{"email": "a" + strconv.Itoa(i) + "@example.com"}), http.StatusCreated)
	}
}

func TestInvitationMail(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sink := smtptest.New(t)
	runNotifier(t, h.st, sink)
	inviter := newAccessToken(t, h, "boss@example.com", auth.AllGrants(), nil, h.orgA)
	expectStatus(t, h.do(http.MethodPost, "/v1/invitations", inviter, map[string]any{"email": "Joiner@example.com", "role": "ADMIN"}), http.StatusCreated)
	h.settle(t)
	got := sink.WaitTo(t, "Joiner@example.com", 1)
	if len(got) != 1 || len(sink.Messages()) != 1 {
		t.Fatalf("want one invitation e-mail, got %d", len(sink.Messages()))
	}
	m := got[0]
	if s := m.Header.Get("Subject"); s != "You are invited to join Org A on Vantage" {
		t.Errorf("subject %q", s)
	}
	if !strings.Contains(m.Body, "boss@example.com has invited you to join the organization Org A on Vantage as Admin.") {
		t.Errorf("body:\n%s", m.Body)
	}
	link, err := url.Parse(m.Link(t, "/invitations/accept?token="))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.st.AcceptInvitation(context.Background(), "forged"); err != store.ErrLinkInvalid {
		t.Errorf("forged token: %v", err)
	}
	acc, err := h.st.AcceptInvitation(context.Background(), link.Query().Get("token"))
	if err != nil {
		t.Fatal(err)
	}
	if acc.OrgID != h.orgA || acc.Role != "ADMIN" {
		t.Errorf("accepted: %+v", acc)
	}
	if _, err := h.st.AcceptInvitation(context.Background(), link.Query().Get("token")); err != store.ErrLinkInvalid {
		t.Errorf("second acceptance: %v", err)
	}
	if r := h.spCall(t, http.MethodGet, "/v1/invitations", nil, http.StatusOK); len(r.Items()) != 0 {
		t.Errorf("accepted invitation still pending: %s", r.Raw)
	}
	r := h.spCall(t, http.MethodGet, "/v1/users?search=joiner", nil, http.StatusOK)
	if len(r.Items()) != 1 || r.Items()[0]["role"] != "ADMIN" {
		t.Errorf("new member: %s", r.Raw)
	}
	// Inviting a member now is refused.
	r = h.spCall(t, http.MethodPost, "/v1/invitations", map[string]any{"email": "joiner@example.com"}, http.StatusBadRequest)
	if typ := r.Body["errors"].([]any)[0].(map[string]any)["type"]; typ != "already_member" {
		t.Errorf("error: %s", r.Raw)
	}
}

// TestOpenAPIDescribesPeopleResponses checks the people routes' answers against the document.
func TestOpenAPIDescribesPeopleResponses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	self := newAccessToken(t, h, "self@example.com", auth.AllGrants(), nil, h.orgA)
	var selfID string
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT id::text FROM users WHERE email = 'self@example.com'`).Scan(&selfID); err != nil {
		t.Fatal(err)
	}
	newAccessToken(t, h, "other@example.com", []string{}, nil, h.orgA)
	var otherID string
	if err := h.st.Pool().QueryRow(context.Background(), `SELECT id::text FROM users WHERE email = 'other@example.com'`).Scan(&otherID); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, method, route, path, token string
		body                             any
		status                           int
	}{
		{"list users", "get", "/v1/users", "/v1/users", h.tokenA, nil, 200},
		{"bad page", "get", "/v1/users", "/v1/users?page=x", h.tokenA, nil, 400},
		{"remove yourself", "delete", "/v1/users/{user_id}", "/v1/users/" + selfID, self, nil, 400},
		{"remove user", "delete", "/v1/users/{user_id}", "/v1/users/" + otherID, self, nil, 200},
		{"remove non-member", "delete", "/v1/users/{user_id}", "/v1/users/" + otherID, self, nil, 404},
		{"invite", "post", "/v1/invitations", "/v1/invitations", h.tokenA, map[string]any{"email": "i@example.com"}, 201},
		{"invite again", "post", "/v1/invitations", "/v1/invitations", h.tokenA, map[string]any{"email": "i@example.com"}, 400},
		{"list invitations", "get", "/v1/invitations", "/v1/invitations", h.tokenA, nil, 200},
		{"no credentials", "get", "/v1/invitations", "/v1/invitations", "", nil, 401},
		{"no permission", "post", "/v1/invitations", "/v1/invitations", h.token(h.orgA), map[string]any{"email": "j@example.com"}, 403},
	}
	for _, tc := range cases {
		r := h.do(strings.ToUpper(tc.method), tc.path, tc.token, tc.body)
		expectStatus(t, r, tc.status)
	}
}
