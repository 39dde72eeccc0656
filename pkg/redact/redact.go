// Package redact hides a job's secret values in everything the agent reports about the job,
// in every form in which the agent, or the target it probes, can echo them:
//
//   - raw;
//   - JSON-escaped: as Go writes it (<, >, & as \u003c…), without HTML escaping (most
//     encoders), each also ASCII-only (\u00e9, in lower- and upper-case hex, as Python and
//     Java write it), and as PHP writes it (/ as \/, ASCII-only);
//   - Go-quoted, as %q and %+q write it (assertion messages, summaries);
//   - HTML-escaped: &, < and > always, " as &#34;, &quot; or left (a browser serializing
//     text leaves it), ' as &#39;, &#x27; or left;
//   - URL-encoded, as a query value and as a path segment;
//   - the base64 of the job's Basic-auth user:password, which servers echo in the
//     Authorization header;
//
// and each of those forms once more Go-quoted or JSON-escaped, as the agent quotes the text
// it judged in assertion messages and summaries (pkg/assert quotes values with %q, lists of
// values as JSON), so that a secret the target echoed in one form and the agent then quoted is
// hidden too.
//
// A secret of fewer than MinSubstring characters is redacted only as a whole token — where
// neither the character before nor the one after it is a letter, a digit or '_' — so that a
// two-character secret does not turn "private" into "priv[REDACTED]e". Longer secrets are
// redacted wherever they occur. Where matches overlap, their union is redacted as one.
package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// Marker replaces a secret value.
const Marker = "[REDACTED]"

// MinSubstring is the length, in characters, from which a secret is redacted inside words
// too; a shorter one is redacted only as a whole token.
const MinSubstring = 8

// Redactor replaces secret values, in all their encodings, with Marker. The zero value and
// nil redact nothing. It is safe for concurrent use.
type Redactor struct {
	needles []needle
}

// needle is one encoding of one secret.
type needle struct {
	text  string
	whole bool // only as a whole token
}

// New returns a redactor of secrets (empty ones are ignored).
func New(secrets []string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		r.add(s)
	}
	return r
}

// ForJob returns the redactor of job's secrets: its redact list and, when it has Basic-auth
// credentials, their Authorization header value.
func ForJob(job *vantagev1.CheckJob) *Redactor {
	r := New(job.GetRedact())
	if user, pass, ok := basicAuth(job); ok {
		// Padded, and unpadded as some clients send it.
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
			b64 := enc.EncodeToString([]byte(user + ":" + pass))
			r.addEncoding(b64, len(b64) < MinSubstring)
		}
	}
	return r
}

// basicAuth returns job's Basic-auth credentials, if it has any.
func basicAuth(job *vantagev1.CheckJob) (user, pass string, ok bool) {
	if h := job.GetHttp(); h != nil && (h.AuthUsername != nil || h.AuthPassword != nil) {
		return h.GetAuthUsername(), h.GetAuthPassword(), true
	}
	if b := job.GetBrowser(); b != nil && (b.AuthUsername != nil || b.AuthPassword != nil) {
		return b.GetAuthUsername(), b.GetAuthPassword(), true
	}
	return "", "", false
}

// add adds secret in every encoding of the package doc.
func (r *Redactor) add(secret string) {
	if secret == "" {
		return
	}
	whole := utf8.RuneCountInString(secret) < MinSubstring
	for _, enc := range encodings(secret) {
		for _, quoted := range quotings(enc) {
			r.addEncoding(quoted, whole)
		}
	}
}

// quotings are s and s quoted as the agent quotes text: Go-quoted and as a JSON string.
func quotings(s string) []string {
	return append([]string{s, unquote(strconv.Quote(s))}, jsonBodies(s)...)
}

func (r *Redactor) addEncoding(text string, whole bool) {
	for i, n := range r.needles {
		if n.text == text {
			r.needles[i].whole = n.whole && whole // a longer secret's form wins
			return
		}
	}
	r.needles = append(r.needles, needle{text: text, whole: whole})
}

// encodings returns the forms of s the package doc lists.
func encodings(s string) []string {
	forms := []string{s, unquote(strconv.Quote(s)), unquote(strconv.QuoteToASCII(s)), url.QueryEscape(s), url.PathEscape(s)}
	forms = append(forms, jsonForms(s)...)
	return append(forms, htmlForms(s)...)
}

// jsonForms are s as the body of a JSON string, the ways encoders write it.
func jsonForms(s string) []string {
	bodies := jsonBodies(s)
	forms := []string{asciiJSON(strings.ReplaceAll(bodies[1], "/", `\/`), "\\u%04x")} // PHP
	for _, j := range bodies {
		forms = append(forms, j, asciiJSON(j, "\\u%04x"), asciiJSON(j, "\\u%04X"))
	}
	return forms
}

// jsonBodies are s as the body of a JSON string as Go writes it: HTML-escaped (json.Marshal),
// and not.
func jsonBodies(s string) []string {
	goJSON, _ := json.Marshal(s) // a string always encodes
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return []string{unquote(string(goJSON)), unquote(strings.TrimSuffix(plain.String(), "\n"))}
}

// htmlForms are s HTML-escaped, the ways escapers and browsers write it.
func htmlForms(s string) []string {
	var forms []string
	for _, quot := range []string{"&#34;", "&quot;", `"`} {
		for _, apos := range []string{"&#39;", "&#x27;", "'"} {
			forms = append(forms, strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, quot, "'", apos).Replace(s))
		}
	}
	return forms
}

// unquote drops the first and last characters of a quoted string.
func unquote(q string) string { return q[1 : len(q)-1] }

// asciiJSON writes the non-ASCII characters of the JSON string body j as \u escapes in
// format (UTF-16 surrogate pairs beyond the BMP).
func asciiJSON(j, format string) string {
	var b strings.Builder
	for _, c := range j {
		switch {
		case c < utf8.RuneSelf:
			b.WriteRune(c)
		case c > 0xFFFF:
			c -= 0x10000
			fmt.Fprintf(&b, format+format, 0xD800+(c>>10), 0xDC00+(c&0x3FF))
		default:
			fmt.Fprintf(&b, format, c)
		}
	}
	return b.String()
}

// String returns s with every occurrence of a secret, in any of its encodings, replaced.
func (r *Redactor) String(s string) string {
	if r == nil || len(r.needles) == 0 || s == "" {
		return s
	}
	var spans [][2]int
	for _, n := range r.needles {
		for off := 0; off < len(s); {
			i := strings.Index(s[off:], n.text)
			if i < 0 {
				break
			}
			start, end := off+i, off+i+len(n.text)
			if !n.whole || token(s, start, end) {
				spans = append(spans, [2]int{start, end})
			}
			off = start + 1
		}
	}
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	var b strings.Builder
	pos := 0
	for i := 0; i < len(spans); {
		start, end := spans[i][0], spans[i][1]
		for i++; i < len(spans) && spans[i][0] < end; i++ {
			end = max(end, spans[i][1])
		}
		b.WriteString(s[pos:start])
		b.WriteString(Marker)
		pos = end
	}
	b.WriteString(s[pos:])
	return b.String()
}

// token reports whether s[start:end] stands alone: neither the character before it nor the
// one after it is part of a word.
func token(s string, start, end int) bool {
	before, _ := utf8.DecodeLastRuneInString(s[:start])
	after, _ := utf8.DecodeRuneInString(s[end:])
	return !word(before) && !word(after)
}

func word(c rune) bool {
	return c != utf8.RuneError && (unicode.IsLetter(c) || unicode.IsDigit(c) || c == '_')
}
