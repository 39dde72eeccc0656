package httpserve

import (
	"net"
	"net/netip"
	"sync"
)

// LimitPerClient wraps l so that one client IP address holds at most limit open connections: a
// connection beyond that is closed as soon as it is accepted, which the client sees as a reset
// or an immediate EOF. Addresses for which unbounded reports true are not counted (nil: none
// is). limit < 1 returns l unchanged.
func LimitPerClient(l net.Listener, limit int, unbounded func(netip.Addr) bool) net.Listener {
	if limit < 1 {
		return l
	}
	return &perClientListener{Listener: l, max: limit, unbounded: unbounded, open: map[netip.Addr]int{}}
}

type perClientListener struct {
	net.Listener
	max       int
	unbounded func(netip.Addr) bool

	mu   sync.Mutex
	open map[netip.Addr]int
}

// Accept returns the next connection within its client's bound, closing those beyond it.
func (l *perClientListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr, ok := clientAddr(c)
		if !ok || (l.unbounded != nil && l.unbounded(addr)) {
			return c, nil
		}
		if l.take(addr) {
			return &countedConn{Conn: c, release: func() { l.give(addr) }}, nil
		}
		c.Close()
	}
}

func (l *perClientListener) take(a netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[a] >= l.max {
		return false
	}
	l.open[a]++
	return true
}

func (l *perClientListener) give(a netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[a]--; l.open[a] <= 0 {
		delete(l.open, a)
	}
}

// clientAddr is the remote IP of c, IPv4-mapped addresses unmapped so that one client is one
// key.
func clientAddr(c net.Conn) (netip.Addr, bool) {
	ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

// countedConn gives its slot back once, on the first Close.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
