// Package linkpage renders the small pages behind the links Vantage e-mails (subscription
// confirm and unsubscribe, invitation accept): self-contained, accessible HTML with one message
// and at most one button. The links carry a secret token, so responses are never cached, send
// no Referer, are not indexed and may not be framed.
package linkpage

import (
	"html/template"
	"net/http"
)

// Page is what one rendered page shows.
type Page struct {
	Title   string
	Context string // after the title in <title>: the status page or organization
	Message string
	Button  string // the label of the page's one POST button; "" shows no form
	Token   string // posted back by the form
}

var tmpl = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{{.Title}}{{with .Context}} · {{.}}{{end}}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.5;color:#1a1a1a;background:#fff;margin:0}
main{max-width:36rem;margin:4rem auto;padding:0 1.25rem}
h1{font-size:1.5rem;margin:0 0 1rem}
button{font:inherit;padding:.6rem 1.2rem;border:2px solid #1a1a1a;border-radius:.4rem;background:#1a1a1a;color:#fff;cursor:pointer}
button:focus-visible{outline:3px solid #1f6feb;outline-offset:2px}
@media (prefers-color-scheme:dark){body{background:#111;color:#eee}button{background:#eee;color:#111;border-color:#eee}}
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
<p role="status">{{.Message}}</p>
{{if .Button}}<form method="post">
<input type="hidden" name="token" value="{{.Token}}">
<button type="submit">{{.Button}}</button>
</form>{{end}}
</main>
</body>
</html>
`))

// Render writes p with status.
func Render(w http.ResponseWriter, status int, p Page) {
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Robots-Tag", "noindex")
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_ = tmpl.Execute(w, p)
}

// Token reads the link's token from the query, or from a POSTed form (at most 4 KiB).
func Token(w http.ResponseWriter, r *http.Request) string {
	if t := r.URL.Query().Get("token"); t != "" {
		return t
	}
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		return r.PostFormValue("token")
	}
	return ""
}
