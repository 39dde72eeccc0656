package smtptest_test

import (
	"errors"
	"net/smtp"
	"net/textproto"
	"strings"
	"testing"

	"github.com/vantagehq/vantage/controlplane/internal/smtptest"
)

func send(t *testing.T, s *smtptest.Server, to []string, msg string) error {
	t.Helper()
	return smtp.SendMail(s.Addr(), nil, "alerts@vantage.test", to, []byte(strings.ReplaceAll(msg, "\n", "\r\n")))
}

// TestServerKeepsDecodedMessages: the envelope, the raw message and the decoded body are kept,
// and a waiter is woken by the message it waits for.
func TestServerKeepsDecodedMessages(t *testing.T) {
	t.Parallel()
	s := smtptest.New(t)
	qp := "Subject: two\nContent-Transfer-Encoding: quoted-printable\n\nsee https://vantage.test/confirm?token=3Dabc=\n&x=3D1 now\n"
	sent := make(chan error, 1)
	go func() {
		if err := send(t, s, []string{"ann@example.com"}, "Subject: one\n\nplain\n"); err != nil {
			sent <- err
			return
		}
		sent <- send(t, s, []string{"bob@example.com", "cy@example.com"}, qp)
	}()
	got := s.WaitTo(t, "bob@example.com", 1)
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Header.Get("Subject") != "two" || got[0].From != "alerts@vantage.test" ||
		strings.Join(got[0].To, ",") != "bob@example.com,cy@example.com" {
		t.Fatalf("bob's messages: %+v", got)
	}
	if link := got[0].Link(t, "/confirm"); link != "https://vantage.test/confirm?token=abc&x=1" {
		t.Errorf("decoded link %q", link)
	}
	if !strings.Contains(got[0].Raw, "token=3Dabc=\r\n") {
		t.Errorf("the raw message is not as sent:\n%s", got[0].Raw)
	}
	if all := s.Wait(t, 2); len(all) != 2 || all[0].Body != "plain\n" || len(s.To("ann@example.com")) != 1 {
		t.Errorf("every message: %+v", all)
	}
}

// TestServerRefusesWhenTold: refused messages get a temporary SMTP error and are not kept.
func TestServerRefusesWhenTold(t *testing.T) {
	t.Parallel()
	s := smtptest.New(t)
	s.RefuseNext(1)
	err := send(t, s, []string{"ann@example.com"}, "Subject: refused\n\nx\n")
	var perr *textproto.Error
	if !errors.As(err, &perr) || perr.Code != 451 {
		t.Fatalf("first message: %v, want a 451", err)
	}
	if err := send(t, s, []string{"ann@example.com"}, "Subject: kept\n\nx\n"); err != nil {
		t.Fatal(err)
	}
	if got := s.Messages(); len(got) != 1 || got[0].Header.Get("Subject") != "kept" {
		t.Fatalf("kept %+v, want only the second message", got)
	}
}
