package prober

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/vantagehq/vantage/pkg/check"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// MaxWebSocketRead bounds one message read by a WebSocket probe.
const MaxWebSocketRead = 1 << 20

// WebSocket probes WebSocket checks: the opening handshake to url with the check's headers
// over a fresh connection dialled through the outbound address policy; then, with
// websocket_message, that text is sent; and with websocket_expected, messages are read until
// one matches (websocket_comparison) or the deadline passes. The connection is closed
// normally at the end.
//
// Verdict: a handshake that fails is TRANSPORT (classified by the connection's error, or
// INVALID_RESPONSE with the HTTP status when the server answered without upgrading); no
// matching reply before the deadline is ASSERTION / UNEXPECTED_REPLY when some replies came
// and TRANSPORT / TIMEOUT when none did. The response time is the handshake plus the wait for
// the reply; response_code is the handshake's HTTP status (101 once open).
type WebSocket struct {
	opts options
}

var _ Prober = (*WebSocket)(nil)

// NewWebSocket returns the WebSocket prober.
func NewWebSocket(opts ...Option) *WebSocket { return &WebSocket{opts: newOptions(opts)} }

// Probe runs one WebSocket attempt; see WebSocket.
func (p *WebSocket) Probe(ctx context.Context, job *vantagev1.CheckJob) (Result, error) {
	res := Result{Kind: check.WebSocket}
	spec := job.GetWebsocket()
	match, err := replyMatcher(spec)
	if err != nil {
		res.failTransport(InvalidRequest, err.Error())
		res.finish(job, nil)
		return res, nil
	}
	header := http.Header{}
	for name, v := range spec.GetHeaders() {
		header.Set(name, v)
	}
	transport := &http.Transport{
		DialContext:       p.opts.dialer(true).DialContext,
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: !spec.GetVerifySsl(), RootCAs: p.opts.rootCAs, MinVersion: tls.VersionTLS12}, //nolint:gosec // the check's verify_ssl
		DisableKeepAlives: true,
		Proxy:             nil,
	}
	defer transport.CloseIdleConnections()
	start := time.Now()
	//nolint:bodyclose // coder/websocket closes the handshake response's body itself
	conn, resp, err := websocket.Dial(ctx, spec.GetUrl(), &websocket.DialOptions{
		HTTPClient: &http.Client{Transport: transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		HTTPHeader: header,
	})
	res.WebSocketOpen = time.Since(start)
	if resp != nil {
		res.ResponseCode = resp.StatusCode
	}
	if err != nil {
		if cerr := cancelled(ctx); cerr != nil {
			return Result{}, cerr
		}
		res.ResponseTime = time.Since(start)
		res.Timings.Total = res.ResponseTime
		res.WebSocketOpen = 0
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			res.failTransport(InvalidResponse, fmt.Sprintf("the server answered the handshake with HTTP %d instead of upgrading", resp.StatusCode))
		} else {
			ft := classify(ctx, err)
			res.failTransport(ft, describe(ft, err))
		}
		res.finish(job, nil)
		return res, nil
	}
	conn.SetReadLimit(MaxWebSocketRead)
	defer func() { _ = conn.Close(websocket.StatusNormalClosure, "") }()

	exchangeStart := time.Now()
	if spec.Message != nil {
		if err := conn.Write(ctx, websocket.MessageText, []byte(spec.GetMessage())); err != nil {
			return p.exchangeFailed(ctx, job, res, start, err)
		}
	}
	if match == nil {
		res.ResponseTime = time.Since(start)
		res.Timings.Total = res.ResponseTime
		res.pass(fmt.Sprintf("opened in %s", millis(res.WebSocketOpen)))
		res.finish(job, nil)
		return res, nil
	}
	var last []byte
	replies := 0
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			if cerr := cancelled(ctx); cerr != nil {
				return Result{}, cerr
			}
			res.ResponseTime = time.Since(start)
			res.Timings.Total = res.ResponseTime
			if replies > 0 && ctx.Err() != nil {
				res.failAssertion(UnexpectedReply, fmt.Sprintf("%d %s, none %s %q", replies, plural(replies, "reply"), strings.ToLower(spec.GetComparison()), spec.GetExpected()))
				res.finish(job, last)
				return res, nil
			}
			return p.exchangeFailed(ctx, job, res, start, err)
		}
		replies++
		last = data
		if match(string(data)) {
			res.WebSocketReply = time.Since(exchangeStart)
			res.ResponseTime = time.Since(start)
			res.Timings.Total = res.ResponseTime
			res.pass(fmt.Sprintf("opened in %s, matching reply after %s", millis(res.WebSocketOpen), millis(res.WebSocketReply)))
			res.finish(job, data)
			return res, nil
		}
	}
}

// exchangeFailed makes the result of a connection that failed once open.
func (p *WebSocket) exchangeFailed(ctx context.Context, job *vantagev1.CheckJob, res Result, start time.Time, err error) (Result, error) {
	if cerr := cancelled(ctx); cerr != nil {
		return Result{}, cerr
	}
	res.ResponseTime = time.Since(start)
	res.Timings.Total = res.ResponseTime
	var ce websocket.CloseError
	switch {
	case ctx.Err() != nil:
		res.failTransport(Timeout, fmt.Sprintf("no matching reply within %s", millis(res.ResponseTime)))
	case errors.As(err, &ce):
		res.failTransport(ConnectionClosed, fmt.Sprintf("the server closed the connection (%d %s)", int(ce.Code), ce.Reason))
	default:
		ft := classify(ctx, err)
		res.failTransport(ft, describe(ft, err))
	}
	res.finish(job, nil)
	return res, nil
}

// replyMatcher returns the test of a reply against websocket_expected; nil when none is
// expected.
func replyMatcher(spec *vantagev1.WebSocketSpec) (func(string) bool, error) {
	if spec.GetUrl() == "" {
		return nil, errors.New("the check has no url")
	}
	if spec.Expected == nil {
		return nil, nil
	}
	want := spec.GetExpected()
	switch spec.GetComparison() {
	case "", check.WebSocketContains:
		return func(s string) bool { return strings.Contains(s, want) }, nil
	case check.WebSocketEquals:
		return func(s string) bool { return s == want }, nil
	case check.WebSocketMatches:
		re, err := regexp.Compile(want)
		if err != nil {
			return nil, fmt.Errorf("websocket_expected is not a valid regular expression: %w", err)
		}
		return re.MatchString, nil
	}
	return nil, fmt.Errorf("websocket_comparison %q is not CONTAINS, EQUALS or MATCHES", spec.GetComparison())
}
