package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/api"
	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
)

// adminEnv is a fresh database and secret key, as VANTAGE_* variables.
type adminEnv struct {
	vars map[string]string
}

func newAdminEnv(t *testing.T) adminEnv {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return adminEnv{vars: map[string]string{
		"VANTAGE_DATABASE_URL": storetest.NewDatabase(t),
		"VANTAGE_SECRET_KEY":   base64.StdEncoding.EncodeToString(key),
	}}
}

// run runs the binary's run with args and returns its stdout, failing the test on error.
func (e adminEnv) run(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := e.try(args...)
	if err != nil {
		t.Fatalf("%s: %v\nstderr: %s", strings.Join(args, " "), err, errOut)
	}
	return out
}

func (e adminEnv) try(args ...string) (stdout, stderr string, err error) {
	var o, s bytes.Buffer
	err = run(context.Background(), args, func(k string) string { return e.vars[k] }, &o, &s)
	return o.String(), s.String(), err
}

// store opens the same database the commands use.
func (e adminEnv) store(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), e.vars["VANTAGE_DATABASE_URL"], storetest.NewKeyring(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

func TestAdminCreateOrgAndToken(t *testing.T) {
	t.Parallel()
	env := newAdminEnv(t)
	st := env.store(t)
	ctx := context.Background()

	orgID, err := uuid.Parse(strings.TrimSpace(env.run(t, "admin", "create-org", "--name", "Acme Inc", "--plan", "paid")))
	if err != nil {
		t.Fatalf("create-org must print the organization id: %v", err)
	}
	org, err := st.GetOrganization(ctx, orgID)
	if err != nil || org.Name != "Acme Inc" || org.Plan != "paid" {
		t.Fatalf("organization %+v, %v", org, err)
	}

	out, notes, err := env.try("admin", "create-token", "--org", orgID.String(), "--name", "ci",
		"--grants", "UPTIME_CHECKS:EDIT, PEOPLE:READ", "--expires", "720h")
	if err != nil {
		t.Fatal(err)
	}
	secret := strings.TrimSpace(out)
	if !strings.HasPrefix(secret, auth.SecretPrefix) || strings.Count(out, "\n") != 1 {
		t.Fatalf("create-token must print the secret alone: %q", out)
	}
	if strings.Contains(notes, secret) || !strings.Contains(notes, "shown only once") {
		t.Fatalf("stderr notes %q", notes)
	}
	cred, err := st.LookupCredential(ctx, auth.HashSecret(secret))
	if err != nil {
		t.Fatalf("the printed secret does not resolve: %v", err)
	}
	if cred.Kind != store.CredentialAPIToken || !reflect.DeepEqual(cred.OrgIDs, []uuid.UUID{orgID}) || cred.Display != "ci" ||
		!reflect.DeepEqual(cred.Grants, []string{"UPTIME_CHECKS:EDIT", "PEOPLE:READ"}) {
		t.Fatalf("credential %+v", cred)
	}
	if cred.ExpiresAt == nil || time.Until(*cred.ExpiresAt) < 719*time.Hour || time.Until(*cred.ExpiresAt) > 721*time.Hour {
		t.Fatalf("expires at %v, want in 720h", cred.ExpiresAt)
	}

	// Defaults: every grant, 365 days; "never" stores no expiry.
	all := strings.TrimSpace(env.run(t, "admin", "create-token", "--org", orgID.String(), "--name", "root"))
	cred, err = st.LookupCredential(ctx, auth.HashSecret(all))
	if err != nil || !reflect.DeepEqual(cred.Grants, auth.AllGrants()) || cred.ExpiresAt == nil ||
		time.Until(*cred.ExpiresAt) < 364*24*time.Hour {
		t.Fatalf("default token %+v, %v", cred, err)
	}
	forever := strings.TrimSpace(env.run(t, "admin", "create-token", "--org", orgID.String(), "--name", "forever", "--expires", "never"))
	if cred, err = st.LookupCredential(ctx, auth.HashSecret(forever)); err != nil || cred.ExpiresAt != nil {
		t.Fatalf("never-expiring token %+v, %v", cred, err)
	}

	// The printed secret works against the API, with exactly its grants.
	authn, err := auth.NewAuthenticator(auth.AuthenticatorConfig{}, auth.AuthenticatorDeps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	handler, err := api.New(api.Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Store: st,
		Auth: authn, Registry: prometheus.NewRegistry(), Now: time.Now, Ready: st.Ping})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, map[string]any) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		var body map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &body)
		return rec.Code, body
	}
	code, body := get("/v1/tokens/permissions")
	want := []any{"people (read)", "uptime_checks (edit)"}
	if code != http.StatusOK || !reflect.DeepEqual(body["result"], map[string]any{"permissions": want}) {
		t.Fatalf("permissions: %d %v", code, body)
	}
	if code, body = get("/v1/audit_logs"); code != http.StatusOK || len(body["result"].([]any)) != 3 {
		t.Fatalf("audit log (three token creations): %d %v", code, body)
	}
	if code, _ = get("/v1/tokens"); code != http.StatusForbidden {
		t.Fatalf("a token without API_TOKENS: %d", code)
	}
}

func TestAdminCreateUserTokenAndListOrgs(t *testing.T) {
	t.Parallel()
	env := newAdminEnv(t)
	st := env.store(t)
	ctx := context.Background()
	a := strings.TrimSpace(env.run(t, "admin", "create-org", "--name", "Alpha"))
	b := strings.TrimSpace(env.run(t, "admin", "create-org", "--name", "Beta", "--plan", "paid"))

	secret := strings.TrimSpace(env.run(t, "admin", "create-user-token", "--email", "ops@example.com", "--org", a+","+b,
		"--role", "ADMIN", "--scopes", "UPTIME_CHECKS:READ"))
	cred, err := st.LookupCredential(ctx, auth.HashSecret(secret))
	if err != nil {
		t.Fatal(err)
	}
	wantOrgs := []uuid.UUID{uuid.MustParse(a), uuid.MustParse(b)}
	if wantOrgs[1].String() < wantOrgs[0].String() {
		wantOrgs[0], wantOrgs[1] = wantOrgs[1], wantOrgs[0]
	}
	if cred.Kind != store.CredentialAccessToken || cred.Display != "ops@example.com" ||
		!reflect.DeepEqual(cred.OrgIDs, wantOrgs) || !reflect.DeepEqual(cred.Grants, []string{"UPTIME_CHECKS:READ"}) {
		t.Fatalf("credential %+v", cred)
	}
	// Running it again for the same user adds a token, not a second user.
	again := strings.TrimSpace(env.run(t, "admin", "create-user-token", "--email", "ops@example.com", "--org", a))
	cred2, err := st.LookupCredential(ctx, auth.HashSecret(again))
	if err != nil || cred2.UserID != cred.UserID || !reflect.DeepEqual(cred2.Grants, auth.AllGrants()) {
		t.Fatalf("second token %+v, %v", cred2, err)
	}

	out := env.run(t, "admin", "list-orgs")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") ||
		!strings.HasPrefix(lines[1], a) || !strings.HasSuffix(lines[1], "Alpha") || !strings.Contains(lines[1], "free") ||
		!strings.HasPrefix(lines[2], b) || !strings.HasSuffix(lines[2], "Beta") || !strings.Contains(lines[2], "paid") {
		t.Fatalf("list-orgs:\n%s", out)
	}
}

func TestAdminErrors(t *testing.T) {
	t.Parallel()
	env := newAdminEnv(t)
	org := strings.TrimSpace(env.run(t, "admin", "create-org", "--name", "Org"))
	noDB := adminEnv{vars: map[string]string{}}
	cases := []struct {
		name string
		env  adminEnv
		args []string
		want string
	}{
		{"no command", noDB, nil, "a command is required"},
		{"unknown command", noDB, []string{"drop-everything"}, `unknown command "drop-everything"`},
		{"org without name", noDB, []string{"create-org"}, "--name is required"},
		{"bad plan", noDB, []string{"create-org", "--name", "x", "--plan", "gold"}, "--plan must be free or paid"},
		{"unknown flag", noDB, []string{"create-org", "--colour", "red"}, "flag provided but not defined: -colour"},
		{"stray argument", noDB, []string{"create-org", "--name", "x", "extra"}, `unexpected argument "extra"`},
		{"token: every problem at once", noDB, []string{"create-token", "--org", "nope", "--grants", "PEOPLE:WRITE", "--expires", "-1h"},
			"--org must be an organization id"},
		{"token: bad grant", noDB, []string{"create-token", "--org", org, "--name", "x", "--grants", "PEOPLE:WRITE"}, `invalid grant "PEOPLE:WRITE"`},
		{"token: repeated area", noDB, []string{"create-token", "--org", org, "--name", "x", "--grants", "PEOPLE:READ,PEOPLE:EDIT"}, "names PEOPLE more than once"},
		{"token: bad expiry", noDB, []string{"create-token", "--org", org, "--name", "x", "--expires", "tomorrow"}, "--expires must be a positive duration"},
		{"token: unknown org", env, []string{"create-token", "--org", uuid.NewString(), "--name", "x"}, "does not exist"},
		{"user: bad e-mail", noDB, []string{"create-user-token", "--email", "Ops <ops@example.com>", "--org", org}, "--email must be a plain e-mail address"},
		{"user: bad org list", noDB, []string{"create-user-token", "--email", "a@b.c", "--org", org + ",x"}, "--org must be comma-separated organization ids"},
		{"user: bad role", noDB, []string{"create-user-token", "--email", "a@b.c", "--org", org, "--role", "OWNER"}, "--role must be ADMIN or STANDARD"},
		{"user: unknown org", env, []string{"create-user-token", "--email", "a@b.c", "--org", org + "," + uuid.NewString()}, "does not exist"},
		{"valid flags, no configuration", noDB, []string{"list-orgs"}, "VANTAGE_DATABASE_URL: is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := tc.env.try(append([]string{"admin"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}

	// Help goes to stdout and succeeds without any configuration.
	for _, args := range [][]string{{"admin", "help"}, {"admin", "create-token", "-h"}} {
		out, _, err := noDB.try(args...)
		if err != nil || !strings.Contains(out, "usage: vantage-controlplane admin") {
			t.Fatalf("%v: %q, %v", args, out, err)
		}
	}
	// Organizations are checked before anything is written: no user was created.
	var users int
	if err := env.store(t).Pool().QueryRow(context.Background(), `SELECT count(*) FROM users`).Scan(&users); err != nil || users != 0 {
		t.Fatalf("%d users, %v", users, err)
	}
}
