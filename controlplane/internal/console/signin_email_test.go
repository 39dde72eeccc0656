package console_test

import (
	"context"
	"io"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/store/storetest"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// mailbox is a real SMTP server (go-smtp) that keeps every message it accepts.
type mailbox struct {
	addr string
	mu   sync.Mutex
	msgs []mailMsg
}

type mailMsg struct {
	To   []string
	Data string
}

type mailSession struct {
	box *mailbox
	cur mailMsg
}

func (s *mailSession) Reset()                               { s.cur = mailMsg{} }
func (s *mailSession) Logout() error                        { return nil }
func (s *mailSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.cur.To = append(s.cur.To, to)
	return nil
}
func (s *mailSession) Data(r io.Reader) error {
	b, err := io.ReadAll(quotedprintable.NewReader(r))
	if err != nil {
		return err
	}
	s.cur.Data = string(b)
	s.box.mu.Lock()
	s.box.msgs = append(s.box.msgs, s.cur)
	s.box.mu.Unlock()
	return nil
}

func newMailbox(t *testing.T) *mailbox {
	box := &mailbox{}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &mailSession{box: box}, nil }))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	box.addr = l.Addr().String()
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return box
}

func (b *mailbox) messages() []mailMsg {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.msgs)
}

var signInLink = regexp.MustCompile(`http://console\.test(/console/signin/link\?token=[A-Za-z0-9_%-]+)`)

// TestEmailSignIn walks the e-mailed link: the request through the real notifier to a local
// SMTP server, the link's page, its button, the user's session and its sign-out.
func TestEmailSignIn(t *testing.T) {
	box := newMailbox(t)
	mailer, err := notifier.New(notifier.Config{SMTPURL: "smtp://" + box.addr, MailFrom: "Vantage <vantage@console.test>",
		PublicURL: "http://console.test"}, notifier.Deps{Store: storetest.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessOptions{mailer: mailer})
	ctx := context.Background()
	u, err := h.st.EnsureUser(ctx, "ops@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.st.AddMembership(ctx, h.orgA, u.ID, "STANDARD"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.st.EnsureUser(ctx, "nomember@example.com"); err != nil { // a user of no organization
		t.Fatal(err)
	}

	if o := h.browser().do("GET", "/console/signin/options", "", "").result(); o["email"] != true {
		t.Fatalf("sign-in options with SMTP = %v, want e-mail links offered", o)
	}
	b := h.browser()
	for _, email := range []string{"nobody@example.com", "nomember@example.com", "OPS@example.com"} {
		a := b.do("POST", "/console/signin/email", "", `{"email":"`+email+`"}`)
		if a.Status != http.StatusAccepted || a.Body["success"] != true {
			t.Fatalf("request a link for %s: %d %s, want 202 whoever asks", email, a.Status, a.Raw)
		}
	}
	if a := b.do("POST", "/console/signin/email", "", `{"email":"not an address"}`); a.Status != http.StatusBadRequest || !strings.HasPrefix(a.errorText(), "email:") {
		t.Fatalf("a malformed address: %d %s, want 400 naming email", a.Status, a.Raw)
	}
	testwait.Eventually(t, 10*time.Second, testwait.Holds("the sign-in e-mail arrives", func() bool { return len(box.messages()) > 0 }))
	time.Sleep(300 * time.Millisecond) // time for any e-mail that must not come
	msgs := box.messages()
	if len(msgs) != 1 || len(msgs[0].To) != 1 || msgs[0].To[0] != "ops@example.com" {
		t.Fatalf("e-mails = %+v, want exactly one, to the member ops@example.com", msgs)
	}
	m := signInLink.FindStringSubmatch(msgs[0].Data)
	if m == nil {
		t.Fatalf("no sign-in link in the e-mail:\n%s", msgs[0].Data)
	}
	path := m[1]

	// GET shows a button and signs nobody in: mail scanners fetch links.
	if a := b.do("GET", path, "", ""); a.Status != http.StatusOK || !strings.Contains(a.Raw, "Sign in") || b.cookie("vantage_session") != "" {
		t.Fatalf("GET the link: %d, cookie %q", a.Status, b.cookie("vantage_session"))
	}
	token, _ := url.ParseQuery(strings.SplitN(path, "?", 2)[1])
	a := b.do("POST", "/console/signin/link", "application/x-www-form-urlencoded", "token="+url.QueryEscape(token.Get("token")),
		"Origin: "+h.srv.URL)
	if a.Status != http.StatusSeeOther || a.Header.Get("Location") != "/console/" {
		t.Fatalf("the link's button: %d %s", a.Status, a.Raw)
	}
	s := b.do("GET", "/console/session", "", "").result()
	perms, _ := s["permissions"].([]any)
	if s["kind"] != "user" || s["display"] != "ops@example.com" || s["organization_id"] != h.orgA.String() ||
		!slices.Contains(perms, any("UPTIME_CHECKS:EDIT")) || !slices.Contains(perms, any("PEOPLE:READ")) || slices.Contains(perms, any("PEOPLE:EDIT")) {
		t.Fatalf("the user's session = %v, want a STANDARD member's: checks EDIT, people READ only", s)
	}
	if a := b.do("GET", "/v1/checks", "", ""); a.Status != http.StatusOK {
		t.Fatalf("GET /v1/checks as the user: %d %s", a.Status, a.Raw)
	}
	if a := h.browser().do("POST", "/console/signin/link", "application/x-www-form-urlencoded", "token="+url.QueryEscape(token.Get("token"))); a.Status != http.StatusNotFound {
		t.Fatalf("the link used twice: %d, want 404", a.Status)
	}

	// The access token minted for the session goes with it.
	if a := b.do("DELETE", "/console/session", "", "", b.csrf()); a.Status != http.StatusOK {
		t.Fatalf("sign out: %d %s", a.Status, a.Raw)
	}
	var n int
	if err := h.st.Pool().QueryRow(ctx, "SELECT count(*) FROM access_tokens").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d access tokens left after the user signed out (%v)", n, err)
	}
}
