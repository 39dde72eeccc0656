package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"strings"
	"testing"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

func TestString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"none", nil, "a b", "a b"},
		{"raw, every occurrence", []string{"tok-123456"}, "tok-123456 x tok-123456", "[REDACTED] x [REDACTED]"},
		{"inside a word when long", []string{"tok-123456"}, "xtok-123456y", "x[REDACTED]y"},
		{"short: whole tokens only", []string{"iv"}, "private iv, (iv) iv_x xiv iv", "private [REDACTED], ([REDACTED]) iv_x xiv [REDACTED]"},
		{"short: beside non-ASCII letters", []string{"ab"}, "éabé ab", "éabé [REDACTED]"},
		{"seven characters are short", []string{"1234567"}, "x1234567 1234567", "x1234567 [REDACTED]"},
		{"eight are not", []string{"12345678"}, "x12345678", "x[REDACTED]"},
		{"overlapping secrets are one", []string{"abcdefgh12", "gh12345678"}, "abcdefgh12345678!", "[REDACTED]!"},
		{"a secret inside another", []string{"abcdefghij", "cdefghij"}, "abcdefghij", "[REDACTED]"},
		{"astral characters", []string{"k🔑y-secret"}, `"k\ud83d\udd11y-secret"`, `"[REDACTED]"`},
		{"upper-case JSON escapes", []string{"clé-secrète"}, `cl\u00E9-secr\u00E8te`, `[REDACTED]`},
		{"HTML-escaped, then quoted by the agent", []string{`a"b<c>d&e`}, `got "a&#34;b&lt;c&gt;d&amp;e"`, `got "[REDACTED]"`},
		{"JSON-escaped, then quoted by the agent", []string{`a"b\c-0123`}, `got "a\\\"b\\\\c-0123"`, `got "[REDACTED]"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := New(tt.secrets).String(tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	var nilRedactor *Redactor
	if got := nilRedactor.String("x"); got != "x" {
		t.Errorf("nil redactor: %q", got)
	}
}

// TestEveryEncoding: secrets with characters each encoding changes (", \, <, &, é, and a
// short one) are redacted in every form the package doc lists.
func TestEveryEncoding(t *testing.T) {
	t.Parallel()
	for _, secret := range []string{`p"q\r<s>&t'é-0123`, `a"b`, `x\y`, `<é>`, `&z`, "mot de passe"} {
		jsonNoHTML := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&")
		goJSON, _ := json.Marshal(secret)
		forms := map[string]string{
			"raw":         secret,
			"Go JSON":     string(goJSON),
			"JSON":        jsonNoHTML.Replace(string(goJSON)),
			"ASCII JSON":  strings.ReplaceAll(jsonNoHTML.Replace(string(goJSON)), "é", `\u00e9`),
			"%q":          fmt.Sprintf("%q", secret),
			"%+q":         fmt.Sprintf("%+q", secret),
			"HTML":        html.EscapeString(secret),
			"HTML quot":   strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(secret),
			"DOM text":    strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(secret),
			"query value": "?q=" + url.QueryEscape(secret),
			"path":        "/" + url.PathEscape(secret),
		}
		r := New([]string{secret})
		for name, form := range forms {
			got := r.String("[ " + form + " ]")
			if !strings.Contains(got, Marker) {
				t.Errorf("secret %q, %s form %q: not redacted: %q", secret, name, form, got)
			}
		}
	}
}

func TestForJobBasicAuth(t *testing.T) {
	t.Parallel()
	user, pass := "svc", "pw"
	padded := base64.StdEncoding.EncodeToString([]byte("svc:pw"))
	for _, job := range []*vantagev1.CheckJob{
		{Spec: &vantagev1.CheckJob_Http{Http: &vantagev1.HTTPSpec{AuthUsername: &user, AuthPassword: &pass}}},
		{Spec: &vantagev1.CheckJob_Browser{Browser: &vantagev1.BrowserSpec{AuthUsername: &user, AuthPassword: &pass}}},
	} {
		got := ForJob(job).String(`{"authorization":"Basic ` + padded + `"}`)
		if got != `{"authorization":"Basic [REDACTED]"}` {
			t.Errorf("%T: %s", job.Spec, got)
		}
	}
	if got := ForJob(&vantagev1.CheckJob{}).String(padded); got != padded {
		t.Errorf("a job without credentials redacted %q", got)
	}
}
