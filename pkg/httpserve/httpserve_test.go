package httpserve

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// serve runs h with cfg on a loopback listener from Listen and returns its address.
func serve(t *testing.T, cfg Config, h http.Handler) string {
	t.Helper()
	lis, err := Listen("127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(cfg, h, slog.New(slog.DiscardHandler))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() { srv.Close() })
	return lis.Addr().String()
}

// closedWithin reports whether the server closes c (after answering or not) within d.
func closedWithin(t *testing.T, c net.Conn, d time.Duration) (bool, string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false, string(b)
	}
	return true, string(b) // EOF or reset: the server closed the connection
}

// readBody is a handler that reads the whole request body, as the API's decoders do.
var readBody = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if _, err := io.ReadAll(r.Body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusNoContent)
})

func TestSlowBodyIsCutOffWithinTheReadTimeout(t *testing.T) {
	t.Parallel()
	const readTimeout = 500 * time.Millisecond
	addr := serve(t, Config{ReadTimeout: readTimeout}, readBody)
	// The server's read deadline starts when it accepts the connection, so the clock starts
	// before the dial: measured from after it, a loaded machine's delay between the accept and
	// the client's next step reads as the server cutting off early.
	start := time.Now()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Complete headers announcing a body that never comes.
	if _, err := io.WriteString(c, "POST /x HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	closed, _ := closedWithin(t, c, readTimeout+3*time.Second)
	if !closed {
		t.Fatalf("the connection was still open %s after its headers, with a read timeout of %s", time.Since(start), readTimeout)
	}
	if took := time.Since(start); took < readTimeout-50*time.Millisecond {
		t.Fatalf("cut off after %s, before the read timeout of %s", took, readTimeout)
	}
}

func TestHeaderAndBodyCaps(t *testing.T) {
	t.Parallel()
	addr := serve(t, Config{MaxHeaderBytes: 4 << 10, MaxBodyBytes: 1 << 10}, readBody)
	client := &http.Client{Timeout: 5 * time.Second}

	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	req.Header.Set("X-Big", strings.Repeat("a", 16<<10))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("16 KiB of headers with a 4 KiB cap: %d, want 431", resp.StatusCode)
	}

	for _, tc := range []struct {
		size int
		want int
	}{{1 << 10, http.StatusNoContent}, {1<<10 + 1, http.StatusBadRequest}} {
		resp, err := client.Post("http://"+addr+"/", "text/plain", strings.NewReader(strings.Repeat("b", tc.size)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("a %d-byte body with a 1 KiB cap: %d, want %d", tc.size, resp.StatusCode, tc.want)
		}
	}
}

func TestConnectionsPerClientAreBounded(t *testing.T) {
	t.Parallel()
	addr := serve(t, Config{MaxConnsPerClient: 2}, readBody)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// get sends one request on c and reports whether an answer came.
	get := func(c net.Conn) bool {
		_ = c.SetDeadline(time.Now().Add(3 * time.Second))
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
			return false
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusNoContent
	}
	a, b := dial(), dial()
	if !get(a) || !get(b) {
		t.Fatal("the first two connections must be served")
	}
	third := dial()
	start := time.Now()
	if closed, _ := closedWithin(t, third, 2*time.Second); !closed {
		t.Fatal("a third connection from the same address was kept open")
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("the connection over the bound was closed after %s, want at once", took)
	}
	a.Close()
	// The slot is given back once the server notices the close.
	deadline := time.Now().Add(3 * time.Second)
	for !get(dial()) {
		if time.Now().After(deadline) {
			t.Fatal("a closed connection's slot was never given back")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestUnboundedAddressesAreNotCounted(t *testing.T) {
	t.Parallel()
	loopback := func(a netip.Addr) bool { return a.IsLoopback() }
	addr := serve(t, Config{MaxConnsPerClient: 1, Unbounded: loopback}, readBody)
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	for i, c := range conns {
		_ = c.SetDeadline(time.Now().Add(3 * time.Second))
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
			t.Fatalf("connection %d of an exempt address: %v", i+1, err)
		} else {
			resp.Body.Close()
		}
	}
}
