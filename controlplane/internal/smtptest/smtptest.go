// Package smtptest is a real SMTP server for tests: it listens on 127.0.0.1, keeps every
// message it accepts, and lets a test wait for the messages it expects. Tests of every package
// that sends e-mail use it, so that what they assert is what a mail client would receive.
package smtptest

import (
	"fmt"
	"io"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// WaitTimeout is how long Wait and WaitTo wait: far above a delivery's normal time, so that
// only a lost message fails a test on a loaded machine.
const WaitTimeout = 15 * time.Second

// Server is an SMTP server on 127.0.0.1 that accepts every message. Its zero value is not
// usable; start one with New.
type Server struct {
	addr string

	mu      sync.Mutex
	msgs    []Message
	refuse  int           // the next refuse messages are answered with a temporary error
	arrived chan struct{} // closed and replaced when a message is kept
}

// Message is one accepted message.
type Message struct {
	From string   // the envelope sender (MAIL FROM)
	To   []string // the envelope recipients (RCPT TO)
	Raw  string   // the message as it was sent: headers and encoded body
	// Header is the parsed header, and Body the body decoded from quoted-printable when the
	// message says so, with LF line ends: what a mail client shows.
	Header mail.Header
	Body   string
}

// New starts a server for the test; it stops when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{arrived: make(chan struct{})}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &session{srv: s}, nil }))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtptest: listen: %v", err)
	}
	s.addr = l.Addr().String()
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.addr }

// URL is the server's address as the notifier's SMTP URL (smtp://host:port).
func (s *Server) URL() string { return "smtp://" + s.addr }

// RefuseNext answers the next n messages with a temporary failure (451), as a server that is
// busy for a while does; they are not kept.
func (s *Server) RefuseNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = n
}

// Messages returns every message accepted so far, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.msgs)
}

// To returns the messages accepted so far with rcpt among their envelope recipients.
func (s *Server) To(rcpt string) []Message {
	var out []Message
	for _, m := range s.Messages() {
		if slices.Contains(m.To, rcpt) {
			out = append(out, m)
		}
	}
	return out
}

// Wait waits until at least n messages have been accepted and returns them all; after
// WaitTimeout it fails the test, saying how many came.
func (s *Server) Wait(t testing.TB, n int) []Message {
	t.Helper()
	return s.wait(t, fmt.Sprintf("%d e-mails", n), func() []Message { return s.Messages() }, n)
}

// WaitTo waits until rcpt has received at least n messages and returns them; after
// WaitTimeout it fails the test, saying how many came.
func (s *Server) WaitTo(t testing.TB, rcpt string, n int) []Message {
	t.Helper()
	return s.wait(t, fmt.Sprintf("%d e-mails to %s", n, rcpt), func() []Message { return s.To(rcpt) }, n)
}

func (s *Server) wait(t testing.TB, what string, got func() []Message, n int) []Message {
	t.Helper()
	timeout := time.NewTimer(WaitTimeout)
	defer timeout.Stop()
	for {
		// Take the channel before counting: a message kept after the count closes it.
		s.mu.Lock()
		arrived := s.arrived
		s.mu.Unlock()
		if msgs := got(); len(msgs) >= n {
			return msgs
		}
		select {
		case <-arrived:
		case <-timeout.C:
			var all []string
			for _, m := range s.Messages() {
				all = append(all, fmt.Sprintf("%v %q", m.To, m.Header.Get("Subject")))
			}
			t.Fatalf("smtptest: waited %s for %s, %d came; every message: %v", WaitTimeout, what, len(got()), all)
			return nil
		}
	}
}

// keep records a message, unless the server is told to refuse it.
func (s *Server) keep(m Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refuse > 0 {
		s.refuse--
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	s.msgs = append(s.msgs, m)
	close(s.arrived)
	s.arrived = make(chan struct{})
	return nil
}

var linkPattern = regexp.MustCompile(`https?://\S+`)

// Link returns the message's first link that contains part, failing the test if it has none.
func (m Message) Link(t testing.TB, part string) string {
	t.Helper()
	for _, l := range linkPattern.FindAllString(m.Body, -1) {
		if strings.Contains(l, part) {
			return l
		}
	}
	t.Fatalf("smtptest: no link with %q in the e-mail:\n%s", part, m.Body)
	return ""
}

// session is one SMTP connection's transaction.
type session struct {
	srv *Server
	cur Message
}

func (s *session) Reset()        { s.cur = Message{} }
func (s *session) Logout() error { return nil }

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	s.cur.From = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.cur.To = append(s.cur.To, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m, err := mail.ReadMessage(strings.NewReader(string(raw)))
	if err != nil {
		return err
	}
	body := m.Body
	if strings.EqualFold(m.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		body = quotedprintable.NewReader(body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	msg := s.cur
	msg.To = slices.Clone(s.cur.To)
	msg.Raw, msg.Header, msg.Body = string(raw), m.Header, strings.ReplaceAll(string(b), "\r\n", "\n")
	return s.srv.keep(msg)
}
