package api

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/invite"
	"github.com/vantagehq/vantage/controlplane/internal/smtptest"
)

// withInvitations is the API on the harness's database and authenticator with Deps.Invitations
// set to inv, as serve.go wires it.
func (h *harness) withInvitations(t *testing.T, inv http.Handler) http.Handler {
	t.Helper()
	handler, err := New(Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Store: h.st, Auth: h.auth,
		Registry: prometheus.NewRegistry(), Now: time.Now, Ready: h.st.Ping, Invitations: inv})
	if err != nil {
		t.Fatal(err)
	}
	return validated(t, handler)
}

// newInvitations is the invitation link's handler over st, as serve.go wires it.
func newInvitations(t testing.TB, st invite.Store) http.Handler {
	t.Helper()
	h, err := invite.NewHandler(invite.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestInvitationAcceptLink follows an invitation e-mail's link through the API's router:
// GET shows the invitation and accepts nothing, POST makes the invited address a member, the
// spent link answers 404; without Deps.Invitations the path is the API's JSON 404.
func TestInvitationAcceptLink(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sink := smtptest.New(t)
	runNotifier(t, h.st, sink)
	api := h.withInvitations(t, newInvitations(t, h.st))
	without := h.withInvitations(t, nil)

	h.spCall(t, http.MethodPost, "/v1/invitations", map[string]any{"email": "joiner@example.com", "role": "ADMIN"}, http.StatusCreated)
	h.settle(t)
	link := sink.WaitTo(t, "joiner@example.com", 1)[0].Link(t, "/invitations/accept?token=")

	if code, body := visit(t, without, http.MethodGet, link, ""); code != http.StatusNotFound || !strings.Contains(body, `"success":false`) {
		t.Fatalf("without Deps.Invitations: %d %s", code, body)
	}
	code, body := visit(t, api, http.MethodGet, link, "")
	if code != http.StatusOK || !strings.Contains(body, "<h1>Join Org A</h1>") || !strings.Contains(body, "Accept the invitation</button>") {
		t.Fatalf("GET: %d %s", code, body)
	}
	if r := h.spCall(t, http.MethodGet, "/v1/invitations", nil, http.StatusOK); len(r.Items()) != 1 {
		t.Fatalf("GET accepted the invitation: %s", r.Raw)
	}
	if r := h.spCall(t, http.MethodGet, "/v1/users?search=joiner", nil, http.StatusOK); len(r.Items()) != 0 {
		t.Fatalf("GET made a member: %s", r.Raw)
	}

	code, body = visit(t, api, http.MethodPost, link, "")
	if code != http.StatusOK || !strings.Contains(body, "joiner@example.com is now a member of the organization Org A on Vantage, as Admin.") {
		t.Fatalf("POST: %d %s", code, body)
	}
	if r := h.spCall(t, http.MethodGet, "/v1/users?search=joiner", nil, http.StatusOK); len(r.Items()) != 1 || r.Items()[0]["role"] != "ADMIN" {
		t.Fatalf("member after POST: %s", r.Raw)
	}
	if r := h.spCall(t, http.MethodGet, "/v1/invitations", nil, http.StatusOK); len(r.Items()) != 0 {
		t.Fatalf("invitation still pending after POST: %s", r.Raw)
	}
	if code, body := visit(t, api, http.MethodPost, link, ""); code != http.StatusNotFound || !strings.Contains(body, "Invitation link not valid") {
		t.Fatalf("second POST: %d %s", code, body)
	}
	if n := h.auditCount(t, "invitation.accepted"); n != 1 {
		t.Errorf("%d invitation.accepted audit events, want 1", n)
	}
	if code, _ := visit(t, api, http.MethodDelete, link, ""); code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE: %d, want 405", code)
	}
}
