package web

import (
	"context"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/vantagehq/vantage/controlplane/internal/notifier"
	"github.com/vantagehq/vantage/controlplane/internal/smtptest"
	"github.com/vantagehq/vantage/controlplane/internal/statuspage/subscribe"
	"github.com/vantagehq/vantage/controlplane/internal/store"
	"github.com/vantagehq/vantage/pkg/testwait"
)

// runMailNotifier runs a real notifier on st, e-mailing through sink with links on publicURL,
// until the test ends.
func runMailNotifier(t *testing.T, st *store.Store, sink *smtptest.Server, publicURL string) {
	t.Helper()
	n, err := notifier.New(notifier.Config{
		SMTPURL: sink.URL(), MailFrom: "Acme status <status@vantage.test>", PublicURL: publicURL,
		Workers: 2, PollInterval: 20 * time.Millisecond, Backoff: []time.Duration{50 * time.Millisecond, 50 * time.Millisecond}},
		notifier.Deps{Store: st, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = n.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// TestSubscribeFlowBrowser walks the double opt-in in real headless Chromium, against the
// handler as serve.go mounts it (Extra: the confirm/unsubscribe links), a real database, a
// real notifier and a real SMTP server: subscribe through the page's form, open the e-mailed
// confirmation link, then unsubscribe through the e-mailed link's button.
func TestSubscribeFlowBrowser(t *testing.T) {
	exec := chromiumPath(t)
	st := newStore(t)
	f := newFixture(t, st, store.StatusPageInput{Name: "Acme Cloud", Subdomain: "acme"})
	f.component("Public API", uuid.Nil, false)
	sink := smtptest.New(t)
	links, err := subscribe.NewHandler(subscribe.Deps{Store: st, Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, f.handlerWith(Config{}, Deps{Extra: links}))
	runMailNotifier(t, st, sink, srv.URL)
	const addr = "reader@example.com"

	opts := append([]chromedp.ExecAllocatorOption{}, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.ExecPath(exec), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()

	// navigate runs steps that load a page and checks its HTTP status.
	navigate := func(what string, status int64, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		resp, err := chromedp.RunResponse(ctx, steps...)
		if err != nil {
			t.Fatalf("chromium (%s): %v", what, err)
		}
		if resp.Status != status {
			t.Fatalf("%s: HTTP %d, want %d", what, resp.Status, status)
		}
	}
	// page reads the shown page's heading and status message.
	page := func() (h1, message string) {
		t.Helper()
		return run(t, ctx, chromedp.Text(chromedp.CSS("h1"))), run(t, ctx, chromedp.Text(chromedp.CSS(`p[role="status"]`)))
	}

	// 1. Subscribe through the page's form.
	navigate("open the page", 200, chromedp.Navigate(srv.URL+"/status/acme"))
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("email")), chromedp.SendKeys(chromedp.ID("email"), addr)); err != nil {
		t.Fatalf("chromium (type the address): %v", err)
	}
	navigate("submit the form", 200, chromedp.Click(chromedp.CSS(`form.sub button[type="submit"]`)))
	if h1, msg := page(); h1 != "Check your inbox" || !strings.Contains(msg, "We sent a confirmation link to "+addr) {
		t.Fatalf("after subscribing: %q / %q", h1, msg)
	}
	subscriber := func() (exists, confirmed bool) {
		t.Helper()
		var n int
		if err := st.Pool().QueryRow(context.Background(), `SELECT count(*), coalesce(bool_and(confirmed), false)
			FROM status_page_subscribers WHERE status_page_id = $1 AND email_address = $2`, f.page, addr).Scan(&n, &confirmed); err != nil {
			t.Fatal(err)
		}
		return n == 1, confirmed
	}
	if exists, confirmed := subscriber(); !exists || confirmed {
		t.Fatalf("after subscribing: subscriber exists %v, confirmed %v; want a pending subscriber", exists, confirmed)
	}

	// 2. Exactly one e-mail, the confirmation, reaches the address; the notifier records it.
	sink.WaitTo(t, addr, 1)
	testwait.Eventually(t, 5*time.Second, testwait.Holds("the delivered e-mail's record", func() bool {
		var n int
		err := st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM deliveries WHERE channel = 'email'
			AND address = $1 AND status = $2`, addr, store.DeliveryDelivered).Scan(&n)
		return err == nil && n == 1
	}))
	if got := sink.Messages(); len(got) != 1 || len(got[0].To) != 1 || got[0].To[0] != addr {
		t.Fatalf("the sink received %d messages (%+v), want exactly one to %s", len(got), got, addr)
	}
	msg := sink.To(addr)[0]
	if s := msg.Header.Get("Subject"); s != "Confirm your subscription to Acme Cloud" {
		t.Errorf("subject %q", s)
	}
	if cte := msg.Header.Get("Content-Transfer-Encoding"); !strings.EqualFold(cte, "quoted-printable") {
		t.Errorf("Content-Transfer-Encoding %q; the link was parsed from a decoded quoted-printable body", cte)
	}
	confirm := msg.Link(t, "/status/acme/confirm?token=")
	unsubscribe := msg.Link(t, "/status/acme/unsubscribe?token=")
	for _, l := range []string{confirm, unsubscribe} {
		if u, err := url.Parse(l); err != nil || u.Scheme+"://"+u.Host != srv.URL {
			t.Fatalf("link %s is not on the server %s (%v)", l, srv.URL, err)
		}
	}

	// 3. The confirmation link, opened in the browser, confirms.
	navigate("open the confirmation link", 200, chromedp.Navigate(confirm))
	if h1, msg := page(); h1 != "Subscription confirmed" || !strings.Contains(msg, addr+" will now receive e-mail updates about Acme Cloud") {
		t.Fatalf("confirmation page: %q / %q", h1, msg)
	}
	shot := run(t, ctx, chromedp.FullScreenshot(100))
	if exists, confirmed := subscriber(); !exists || !confirmed {
		t.Fatalf("after confirming: subscriber exists %v, confirmed %v", exists, confirmed)
	}
	path := filepath.Join(artifactDir(t), "subscribe-confirmed.png")
	if len(shot) == 0 {
		t.Fatal("empty screenshot of the confirmation page")
	}
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(shot))

	// 4. The unsubscribe link only asks; the button unsubscribes.
	navigate("open the unsubscribe link", 200, chromedp.Navigate(unsubscribe))
	if h1, msg := page(); h1 != "Unsubscribe" || !strings.Contains(msg, "Stop e-mail updates about Acme Cloud to "+addr+"?") {
		t.Fatalf("unsubscribe page: %q / %q", h1, msg)
	}
	if exists, _ := subscriber(); !exists {
		t.Fatal("opening the unsubscribe link unsubscribed")
	}
	navigate("click the unsubscribe button", 200, chromedp.Click(chromedp.CSS(`form[method="post"] button[type="submit"]`)))
	if h1, msg := page(); h1 != "Unsubscribed" || !strings.Contains(msg, addr+" will receive no more e-mail updates about Acme Cloud") {
		t.Fatalf("after unsubscribing: %q / %q", h1, msg)
	}
	if exists, _ := subscriber(); exists {
		t.Fatal("the subscriber is still there after unsubscribing")
	}
	if n := len(sink.Messages()); n != 1 {
		t.Errorf("the sink received %d messages in all, want 1", n)
	}
}
