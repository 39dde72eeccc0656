package web

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// pageCache keeps rendered public pages (not private ones) for a few seconds: during an
// incident many visitors load the same page at once, and each would otherwise cost the
// page's queries, its view and its compression. The key holds the page's overall status, so
// a change of status shows at once; other changes show within the TTL.
type pageCache struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]cachedPage
}

type cachedPage struct {
	raw, gz []byte // gz is nil when the page is too small to be worth compressing
	expires time.Time
}

// maxCached bounds the cache; expired entries are dropped when it is reached.
const maxCached = 1024

func (c *pageCache) get(key string, now time.Time) (cachedPage, bool) {
	if c.ttl <= 0 {
		return cachedPage{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.m[key]
	if !ok || !now.Before(p.expires) {
		return cachedPage{}, false
	}
	return p, true
}

func (c *pageCache) put(key string, p cachedPage, now time.Time) {
	if c.ttl <= 0 {
		return
	}
	p.expires = now.Add(c.ttl)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCached {
		for k, v := range c.m {
			if !now.Before(v.expires) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= maxCached {
			clear(c.m)
		}
	}
	c.m[key] = p
}

// compress returns body gzip-compressed, or nil when it is too small to be worth it.
func (h *Handler) compress(body []byte) []byte {
	if len(body) < 1024 {
		return nil
	}
	var buf bytes.Buffer
	zw := h.gzipWriter(&buf)
	_, _ = zw.Write(body)
	_ = zw.Close()
	h.gzips.Put(zw)
	return buf.Bytes()
}

// writeCached sends a cached page, compressed when the client accepts it.
func (h *Handler) writeCached(req *request, p cachedPage) {
	hd := req.w.Header()
	hd.Add("Vary", "Accept-Encoding")
	body := p.raw
	if p.gz != nil && acceptsGzip(req.r) {
		body = p.gz
		hd.Set("Content-Encoding", "gzip")
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	req.w.WriteHeader(http.StatusOK)
	if req.r.Method != http.MethodHead {
		_, _ = req.w.Write(body)
	}
}
