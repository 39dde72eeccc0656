package prober

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/vantagehq/vantage/pkg/check"
	vantagev1 "github.com/vantagehq/vantage/proto/vantage/v1"
)

// startWebSocket serves, on loopback: /echo, which echoes every message (and greets with
// "hello" when asked by the X-Greet header); /silent, which reads and never answers; /chatty,
// which answers "noise" to everything; and /plain, an HTTP page that does not upgrade.
func startWebSocket(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	accept := func(w http.ResponseWriter, r *http.Request, serve func(*websocket.Conn)) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		serve(c)
	}
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		greet := r.Header.Get("X-Greet")
		accept(w, r, func(c *websocket.Conn) {
			ctx := r.Context()
			if greet != "" {
				_ = c.Write(ctx, websocket.MessageText, []byte(greet))
			}
			for {
				typ, data, err := c.Read(ctx)
				if err != nil {
					return
				}
				if err := c.Write(ctx, typ, data); err != nil {
					return
				}
			}
		})
	})
	mux.HandleFunc("/silent", func(w http.ResponseWriter, r *http.Request) {
		accept(w, r, func(c *websocket.Conn) {
			for {
				if _, _, err := c.Read(r.Context()); err != nil {
					return
				}
			}
		})
	})
	mux.HandleFunc("/chatty", func(w http.ResponseWriter, r *http.Request) {
		accept(w, r, func(c *websocket.Conn) {
			for {
				if _, _, err := c.Read(r.Context()); err != nil {
					return
				}
				_ = c.Write(r.Context(), websocket.MessageText, []byte("noise"))
			}
		})
	})
	mux.HandleFunc("/plain", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no sockets here", http.StatusNotFound) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func wsURL(srv *httptest.Server, path string) string {
	return "ws" + strings.TrimPrefix(srv.URL, "http") + path
}

func wsJob(spec *vantagev1.WebSocketSpec) *vantagev1.CheckJob {
	return &vantagev1.CheckJob{Kind: vantagev1.CheckKind_CHECK_KIND_WEBSOCKET, Spec: &vantagev1.CheckJob_Websocket{Websocket: spec}}
}

func TestWebSocketExchange(t *testing.T) {
	t.Parallel()
	srv := startWebSocket(t)
	echo := wsURL(srv, "/echo")
	cases := []struct {
		name    string
		spec    *vantagev1.WebSocketSpec
		timeout time.Duration
		source  string // "" = passes
		ft      string
	}{
		{"open only", &vantagev1.WebSocketSpec{Url: echo}, 5 * time.Second, "", ""},
		{"contains", &vantagev1.WebSocketSpec{Url: echo, Message: ptr(`{"op":"ping"}`), Expected: ptr(`"ping"`), Comparison: check.WebSocketContains}, 5 * time.Second, "", ""},
		{"equals", &vantagev1.WebSocketSpec{Url: echo, Message: ptr("ping"), Expected: ptr("ping"), Comparison: check.WebSocketEquals}, 5 * time.Second, "", ""},
		{"matches", &vantagev1.WebSocketSpec{Url: echo, Message: ptr("ping 42"), Expected: ptr(`^ping \d+$`), Comparison: check.WebSocketMatches}, 5 * time.Second, "", ""},
		{"reply without message", &vantagev1.WebSocketSpec{Url: echo, Headers: map[string]string{"X-Greet": "hello"}, Expected: ptr("hello")}, 5 * time.Second, "", ""},
		{"wrong reply", &vantagev1.WebSocketSpec{Url: wsURL(srv, "/chatty"), Message: ptr("ping"), Expected: ptr("pong"), Comparison: check.WebSocketEquals}, 500 * time.Millisecond, SourceAssertion, UnexpectedReply},
		{"no reply", &vantagev1.WebSocketSpec{Url: wsURL(srv, "/silent"), Message: ptr("ping"), Expected: ptr("pong")}, 500 * time.Millisecond, SourceTransport, Timeout},
		{"not upgraded", &vantagev1.WebSocketSpec{Url: wsURL(srv, "/plain")}, 5 * time.Second, SourceTransport, InvalidResponse},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := run(t, NewWebSocket(), wsJob(tc.spec), tc.timeout)
			if tc.source == "" {
				wantPass(t, res)
				if res.ResponseCode != http.StatusSwitchingProtocols || res.WebSocketOpen <= 0 {
					t.Errorf("response code %d, open %s", res.ResponseCode, res.WebSocketOpen)
				}
				if tc.spec.Expected != nil && res.WebSocketReply <= 0 {
					t.Errorf("reply time %s", res.WebSocketReply)
				}
				return
			}
			wantFail(t, res, tc.source, tc.ft)
		})
	}
}

func TestWebSocketTransport(t *testing.T) {
	t.Parallel()
	srv := startWebSocket(t)
	_, closed := closedPort(t)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err == nil {
			c.Close(websocket.StatusNormalClosure, "")
		}
	}))
	t.Cleanup(tlsSrv.Close)
	wss := "wss" + strings.TrimPrefix(tlsSrv.URL, "https")

	res := run(t, NewWebSocket(), wsJob(&vantagev1.WebSocketSpec{Url: "ws://127.0.0.1:" + strconv.Itoa(closed) + "/"}), 5*time.Second)
	wantFail(t, res, SourceTransport, ConnectionRefused)
	res = run(t, NewWebSocket(WithPrivateTargets(false)), wsJob(&vantagev1.WebSocketSpec{Url: wsURL(srv, "/echo")}), 5*time.Second)
	wantFail(t, res, SourceTransport, ForbiddenTarget)
	res = run(t, NewWebSocket(), wsJob(&vantagev1.WebSocketSpec{Url: wss, VerifySsl: true}), 5*time.Second)
	wantFail(t, res, SourceTransport, TLSError)
	wantPass(t, run(t, NewWebSocket(), wsJob(&vantagev1.WebSocketSpec{Url: wss, VerifySsl: false}), 5*time.Second))
}

func TestWebSocketSecretsRedacted(t *testing.T) {
	t.Parallel()
	srv := startWebSocket(t)
	job := wsJob(&vantagev1.WebSocketSpec{Url: wsURL(srv, "/chatty"), Message: ptr("token hunter2"), Expected: ptr("hunter2-ok")})
	job.Redact = []string{"hunter2"}
	res := run(t, NewWebSocket(), job, 500*time.Millisecond)
	wantFail(t, res, SourceAssertion, UnexpectedReply)
	if strings.Contains(res.ResultSummary, "hunter2") {
		t.Errorf("summary leaks the secret: %q", res.ResultSummary)
	}
}
