package container

import (
	"fmt"
	"sync"
)

// capped keeps the first limit bytes written to it and counts the rest, calling onOverflow
// once, at the first byte it drops. Write never fails, so the stream feeding it keeps being
// drained. Safe for concurrent use: the demultiplexer writes while Run may read.
type capped struct {
	mu         sync.Mutex
	limit      int64
	buf        []byte
	total      int64
	onOverflow func()
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	if room := c.limit - int64(len(c.buf)); room > 0 {
		k := min(int64(len(p)), room)
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
	}
	if len(p) > 0 && c.total <= c.limit && c.onOverflow != nil {
		c.onOverflow()
	}
	c.total += int64(n)
	return n, nil
}

// Truncated reports whether bytes were dropped.
func (c *capped) Truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total > c.limit
}

// String returns the kept bytes.
func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.buf)
}

// Dropped is a line saying how many bytes were left out, or "".
func (c *capped) Dropped(stream string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total <= c.limit {
		return ""
	}
	return fmt.Sprintf("\n[awf: %d bytes of %s left out]\n", c.total-c.limit, stream)
}
