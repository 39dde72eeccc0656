package main

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vantagehq/vantage/controlplane/internal/auth"
	"github.com/vantagehq/vantage/controlplane/internal/console"
	"github.com/vantagehq/vantage/controlplane/internal/ratelimit"
)

// TestAdminConsoleLink makes the link make run prints and follows it: it signs in once.
func TestAdminConsoleLink(t *testing.T) {
	t.Parallel()
	env := newAdminEnv(t)
	org := strings.TrimSpace(env.run(t, "admin", "create-org", "--name", "Org"))
	token := strings.TrimSpace(env.run(t, "admin", "create-token", "--org", org, "--name", "local", "--grants", "all"))

	for name, tc := range map[string]struct {
		vars map[string]string
		args []string
		want string
	}{
		"no token":      {nil, nil, "VANTAGE_CONSOLE_TOKEN is empty"},
		"unknown token": {map[string]string{"VANTAGE_CONSOLE_TOKEN": "vtg_nope"}, nil, "is not a token of this deployment"},
		"bad base":      {map[string]string{"VANTAGE_CONSOLE_TOKEN": token}, []string{"--base", "ftp://x"}, "--base must be an http(s) URL"},
	} {
		t.Run(name, func(t *testing.T) {
			e := adminEnv{vars: map[string]string{}}
			for k, v := range env.vars {
				e.vars[k] = v
			}
			for k, v := range tc.vars {
				e.vars[k] = v
			}
			_, _, err := e.try(append([]string{"admin", "console-link"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}

	env.vars["VANTAGE_CONSOLE_TOKEN"] = token
	out := strings.TrimSpace(env.run(t, "admin", "console-link", "--base", "http://127.0.0.1:8080/"))
	link, err := url.Parse(out)
	if err != nil || link.Host != "127.0.0.1:8080" || link.Path != "/console/signin" || link.Query().Get("code") == "" {
		t.Fatalf("console-link printed %q, want http://127.0.0.1:8080/console/signin?code=…", out)
	}
	if strings.Contains(out, token) {
		t.Fatal("the link carries the token itself")
	}

	st := env.store(t)
	authn, err := auth.NewAuthenticator(auth.AuthenticatorConfig{}, auth.AuthenticatorDeps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	lim, err := ratelimit.New(ratelimit.Config{}, ratelimit.Deps{Store: st, Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := console.New(console.Config{}, console.Deps{Store: st, Auth: authn, Limiter: lim})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	sessions.Routes(mux)
	for i, want := range []int{http.StatusSeeOther, http.StatusNotFound} { // once only
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", link.RequestURI(), nil))
		if rec.Code != want {
			t.Fatalf("use %d of the link: %d, want %d", i+1, rec.Code, want)
		}
		if want == http.StatusSeeOther && !strings.Contains(strings.Join(rec.Result().Header.Values("Set-Cookie"), ";"), console.SessionCookie+"=") {
			t.Fatal("the link set no session cookie")
		}
	}
}
