package process

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"
)

// spillAt is how much of an output headBuffer keeps in memory; the rest goes to an unlinked
// temporary file. A 10 MB output then costs one 10 MB string at the end instead of a doubling
// buffer (8 + 16 MB while it grows) and its copy into a string.
const spillAt = 1 << 20

// headBuffer keeps the first limit bytes written to it and drops the rest, calling onOverflow
// once, at the first byte it drops. The first spillAt bytes are held in memory, the rest in a
// temporary file removed at creation, so that nothing is left behind if awf dies. Write never
// fails, so the reader feeding it keeps draining the pipe and the writers on the other side
// never block. Not safe for concurrent use.
type headBuffer struct {
	limit      int64
	buf        []byte
	spill      *os.File // nil until the output outgrows spillAt, and after String
	spilled    int64    // bytes in spill
	lost       bool     // a spill write and its recovery failed: bytes are missing
	total      int64
	onOverflow func()
}

func (h *headBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := h.limit - int64(len(h.buf)) - h.spilled; room > 0 {
		k := int(min(int64(len(p)), room))
		h.keep(p[:k])
		p = p[k:]
	}
	if len(p) > 0 && h.total <= h.limit && h.onOverflow != nil {
		h.onOverflow()
	}
	h.total += int64(n)
	return n, nil
}

// keep stores p in memory up to spillAt, and in the spill file past it. Without a file (none
// could be made, or writing to it failed) everything stays in memory.
func (h *headBuffer) keep(p []byte) {
	if h.spill == nil && len(h.buf)+len(p) > spillAt && !h.lost {
		h.spill, _ = os.CreateTemp("", "awf-output-*")
		if h.spill != nil {
			os.Remove(h.spill.Name())
		}
	}
	if h.spill == nil {
		h.grow(len(p))
		h.buf = append(h.buf, p...)
		return
	}
	if _, err := h.spill.Write(p); err != nil {
		h.unspill()
		h.grow(len(p))
		h.buf = append(h.buf, p...)
		return
	}
	h.spilled += int64(len(p))
}

// unspill moves the spilled bytes back into memory after a failed write (a full disk): the
// output stays whole as long as memory allows.
func (h *headBuffer) unspill() {
	f := h.spill
	h.spill = nil
	defer f.Close()
	k := int(h.spilled)
	h.grow(k)
	h.buf = h.buf[:len(h.buf)+k]
	if _, err := f.ReadAt(h.buf[len(h.buf)-k:], 0); err != nil {
		h.buf = h.buf[:len(h.buf)-k]
		h.lost = true
	}
	h.spilled = 0
}

// grow makes room for k more bytes by doubling, never past the limit: append's own growth is
// 1.25x for large slices, which copies a large output some twenty times.
func (h *headBuffer) grow(k int) {
	if cap(h.buf)-len(h.buf) >= k {
		return
	}
	size := max(2*cap(h.buf), len(h.buf)+k, 512)
	if len(h.buf)+k <= spillAt {
		size = min(size, spillAt) // past it the bytes go to the spill file
	}
	size = int(min(int64(size), h.limit))
	buf := make([]byte, len(h.buf), size)
	copy(buf, h.buf)
	h.buf = buf
}

// Truncated reports whether bytes were dropped.
func (h *headBuffer) Truncated() bool { return h.total > h.limit || h.lost }

// String returns the kept bytes and releases the spill file; call it once, at the end. A
// spilled output is read into one allocation of its exact size that becomes the string
// without a further copy.
func (h *headBuffer) String() string {
	if h.spill == nil {
		return string(h.buf)
	}
	f := h.spill
	h.spill = nil
	defer f.Close()
	out := make([]byte, len(h.buf)+int(h.spilled))
	copy(out, h.buf)
	if _, err := f.ReadAt(out[len(h.buf):], 0); err != nil {
		h.lost = true
		return string(h.buf)
	}
	h.buf, h.spilled = nil, 0
	return unsafe.String(unsafe.SliceData(out), len(out))
}

// headTail keeps the first and the last half of its limit and counts what it drops between
// them: a failing command's first error and its final message are both worth keeping, while a
// flood in the middle is not. It never signals overflow itself: the outputBudget it is written
// through counts it with stdout against the output limit. Not safe for concurrent use.
type headTail struct {
	limit int64
	head  []byte
	tail  []byte // grows to tailCap, then is a ring whose oldest byte is at pos
	pos   int
	total int64
}

func (h *headTail) headCap() int { return int(h.limit / 2) }
func (h *headTail) tailCap() int { return int(h.limit) - h.headCap() }

func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	h.total += int64(n)
	if room := h.headCap() - len(h.head); room > 0 {
		k := min(len(p), room)
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	tc := h.tailCap()
	if tc == 0 {
		return n, nil
	}
	if room := tc - len(h.tail); room > 0 {
		k := min(len(p), room)
		h.tail = append(h.tail, p[:k]...)
		p = p[k:]
	}
	if len(p) >= tc {
		copy(h.tail, p[len(p)-tc:])
		h.pos = 0
		return n, nil
	}
	for len(p) > 0 {
		k := copy(h.tail[h.pos:], p)
		p = p[k:]
		h.pos = (h.pos + k) % tc
	}
	return n, nil
}

// String returns head and tail; when bytes were dropped between them, a line says how many.
func (h *headTail) String() string {
	dropped := h.total - int64(len(h.head)) - int64(len(h.tail))
	if dropped == 0 {
		return string(h.head) + string(h.tail[h.pos:]) + string(h.tail[:h.pos])
	}
	mark := fmt.Sprintf("\n[awf: %d bytes of stderr left out]\n", dropped)
	return string(h.head) + mark + string(h.tail[h.pos:]) + string(h.tail[:h.pos])
}

// readBufs holds the scratch buffers that pipe readers use; 64 KiB is a default pipe's capacity.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// drain copies f into w until EOF, a read error (a deadline) or a closed file.
func drain(f *os.File, w io.Writer) {
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	buf := *bp
	for {
		n, err := f.Read(buf)
		if n > 0 {
			w.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// outputBudget counts the bytes of stdout and stderr together against the output limit and
// calls onOverflow once, at the first byte past it: a flood on either stream stops the
// script, where a cap on stdout alone let a stderr-only flood run to the timeout. Safe for
// concurrent use by the two readers.
type outputBudget struct {
	limit      int64
	used       atomic.Int64
	once       sync.Once
	onOverflow func()
}

// counting returns w with every write counted against b.
func (b *outputBudget) counting(w io.Writer) io.Writer { return budgetWriter{w: w, b: b} }

// exceeded reports whether the streams together went past the limit.
func (b *outputBudget) exceeded() bool { return b.used.Load() > b.limit }

type budgetWriter struct {
	w io.Writer
	b *outputBudget
}

func (c budgetWriter) Write(p []byte) (int, error) {
	if c.b.used.Add(int64(len(p))) > c.b.limit && c.b.onOverflow != nil {
		c.b.once.Do(c.b.onOverflow)
	}
	return c.w.Write(p)
}
