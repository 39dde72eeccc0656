package browserscript

import (
	"crypto/sha256"
	"sync"
)

// Cache keeps transformed scripts, so that a check's script is compiled once per agent, not
// once per run (the transform costs more than a short run of the script). The zero value is
// ready to use and safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	byKey map[[32]byte]*Program
	order [][32]byte
}

// CacheSize bounds a Cache (a program is about the size of its script); the oldest entry goes
// first.
const CacheSize = 512

// Get returns the program of source, transforming it on first use (see Transform; an empty
// filename is DefaultFilename). A script that does not compile is not kept.
func (c *Cache) Get(filename, source string) (*Program, error) {
	if filename == "" {
		filename = DefaultFilename
	}
	key := sha256.Sum256([]byte(filename + "\x00" + source))
	c.mu.Lock()
	p, ok := c.byKey[key]
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := Transform(filename, source)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = map[[32]byte]*Program{}
	}
	if _, ok := c.byKey[key]; !ok {
		c.byKey[key] = p
		c.order = append(c.order, key)
		if len(c.order) > CacheSize {
			delete(c.byKey, c.order[0])
			c.order = c.order[1:]
		}
	}
	return p, nil
}
