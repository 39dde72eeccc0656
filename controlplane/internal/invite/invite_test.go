package invite_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/invite"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
)

// invited creates a pending invitation of email into org and returns its accept token, as the
// invitation e-mail carries it.
func invited(t *testing.T, st *store.Store, org uuid.UUID, email, role string) string {
	t.Helper()
	ctx := context.Background()
	inv, err := st.CreateInvitation(ctx, store.Actor{Type: "User", DisplayName: "boss@example.com"}, org, email, role, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.InvitationMail(ctx, org, inv.ID)
	if err != nil {
		t.Fatal(err)
	}
	return m.Token
}

func do(t *testing.T, h http.Handler, method, target, form string) *httptest.ResponseRecorder {
	t.Helper()
	var req *http.Request
	if form != "" {
		req = httptest.NewRequest(method, target, strings.NewReader(form))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequest(method, target, nil)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// membership reads the role of the user with this address (any case) in org; "" when the
// user is no member, and the number of users with the address.
func membership(t *testing.T, st *store.Store, org uuid.UUID, email string) (role string, users int) {
	t.Helper()
	ctx := context.Background()
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM users WHERE lower(email) = lower($1)`, email).Scan(&users); err != nil {
		t.Fatal(err)
	}
	if err := st.Pool().QueryRow(ctx, `SELECT coalesce(max(m.role), '') FROM memberships m JOIN users u ON u.id = m.user_id
		WHERE m.org_id = $1 AND lower(u.email) = lower($2)`, org, email).Scan(&role); err != nil {
		t.Fatal(err)
	}
	return role, users
}

func pending(t *testing.T, st *store.Store, org uuid.UUID) int {
	t.Helper()
	var n int
	if err := st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM invitations WHERE org_id = $1 AND accepted_at IS NULL`,
		org).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAcceptInvitationLink(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	org, err := st.CreateOrganization(ctx, `Acme & Co <script>alert(1)</script>`, "paid")
	if err != nil {
		t.Fatal(err)
	}
	tok := invited(t, st, org.ID, "new@example.com", "ADMIN")
	h, err := invite.NewHandler(invite.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	link := invite.Path + "?token=" + url.QueryEscape(tok)

	check := func(name string, rec *httptest.ResponseRecorder, status int, contains ...string) {
		t.Helper()
		body := rec.Body.String()
		if rec.Code != status {
			t.Fatalf("%s: %d, want %d: %s", name, rec.Code, status, body)
		}
		for _, c := range contains {
			if !strings.Contains(body, c) {
				t.Fatalf("%s: page lacks %q: %s", name, c, body)
			}
		}
		if strings.Contains(body, "<script>") {
			t.Fatalf("%s: organization name not escaped: %s", name, body)
		}
		for k, v := range map[string]string{"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store",
			"Referrer-Policy": "no-referrer", "X-Robots-Tag": "noindex"} {
			if got := rec.Header().Get(k); got != v {
				t.Errorf("%s: %s %q, want %q", name, k, got, v)
			}
		}
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("%s: Content-Security-Policy %q", name, csp)
		}
	}

	check("no token", do(t, h, "GET", invite.Path, ""), 400, "Invitation link not valid")
	check("made-up token", do(t, h, "GET", invite.Path+"?token=forged", ""), 404, "Invitation link not valid")
	check("made-up token, POST", do(t, h, "POST", invite.Path, "token=forged"), 404, "Invitation link not valid")

	// GET (twice, as a mail scanner and then the person would) only shows the invitation.
	for i := 0; i < 2; i++ {
		check("GET", do(t, h, "GET", link, ""), 200, `<html lang="en">`, "<h1>Join Acme &amp; Co &lt;script&gt;",
			"new@example.com is invited to join the organization Acme &amp; Co", "as Admin.",
			`<form method="post">`, `<input type="hidden" name="token" value="`+tok+`">`, `<button type="submit">Accept the invitation</button>`)
	}
	if role, users := membership(t, st, org.ID, "new@example.com"); role != "" || users != 0 || pending(t, st, org.ID) != 1 {
		t.Fatalf("after GET: role %q, %d users, %d pending invitations; GET must not accept", role, users, pending(t, st, org.ID))
	}

	// POST (the form's answer, the token in the form) accepts: the user is created and joins.
	check("POST", do(t, h, "POST", invite.Path, "token="+url.QueryEscape(tok)), 200, "<h1>Invitation accepted</h1>",
		"new@example.com is now a member of the organization Acme &amp; Co &lt;script&gt;alert(1)&lt;/script&gt; on Vantage, as Admin.")
	if role, users := membership(t, st, org.ID, "new@example.com"); role != "ADMIN" || users != 1 || pending(t, st, org.ID) != 0 {
		t.Fatalf("after POST: role %q, %d users, %d pending invitations", role, users, pending(t, st, org.ID))
	}

	// The link is spent: a second POST (token in the query, as the form posts it) and a GET get 404.
	check("second POST", do(t, h, "POST", link, "token="+url.QueryEscape(tok)), 404, "Invitation link not valid")
	check("GET after accepting", do(t, h, "GET", link, ""), 404, "Invitation link not valid")
	if role, users := membership(t, st, org.ID, "new@example.com"); role != "ADMIN" || users != 1 {
		t.Fatalf("after the second POST: role %q, %d users", role, users)
	}

	if rec := do(t, h, "DELETE", link, ""); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE: %d, want 405", rec.Code)
	}
	if rec := do(t, h, "GET", "/invitations/other?token="+url.QueryEscape(tok), ""); rec.Code != http.StatusNotFound {
		t.Errorf("other path: %d, want 404", rec.Code)
	}
}

// TestAcceptInvitationExistingUser: an invited address that is a user already (in another
// case) joins as that user; no second user is created.
func TestAcceptInvitationExistingUser(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	org, err := st.CreateOrganization(ctx, "Beta", "free")
	if err != nil {
		t.Fatal(err)
	}
	existing := uuid.New()
	if _, err := st.Pool().Exec(ctx, `INSERT INTO users (id, email) VALUES ($1, 'Kim@Example.com')`, existing); err != nil {
		t.Fatal(err)
	}
	tok := invited(t, st, org.ID, "kim@example.com", "STANDARD")
	h, err := invite.NewHandler(invite.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	link := invite.Path + "?token=" + url.QueryEscape(tok)

	if rec := do(t, h, "GET", link, ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), "kim@example.com is invited to join the organization Beta on Vantage as Standard.") {
		t.Fatalf("GET: %d %s", rec.Code, rec.Body)
	}
	// The button posts to the link itself; the token travels in the query and the form.
	rec := do(t, h, "POST", link, "token="+url.QueryEscape(tok))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "kim@example.com is now a member of the organization Beta on Vantage, as Standard.") {
		t.Fatalf("POST: %d %s", rec.Code, rec.Body)
	}
	var member uuid.UUID
	if err := st.Pool().QueryRow(ctx, `SELECT user_id FROM memberships WHERE org_id = $1`, org.ID).Scan(&member); err != nil {
		t.Fatal(err)
	}
	if role, users := membership(t, st, org.ID, "kim@example.com"); member != existing || role != "STANDARD" || users != 1 {
		t.Fatalf("member %s (want the existing user %s), role %q, %d users with the address", member, existing, role, users)
	}
}
