package portstest

import (
	"sync"
	"time"

	"github.com/awf-dev/awf/internal/domain/ports"
)

// FakeClock is a [ports.Clock] that tests set and advance. With a step set, every Now also
// moves the clock on by the step, so that consecutive readings differ as real ones do and
// durations come out non-zero and exact. Safe for concurrent use.
type FakeClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

var _ ports.Clock = (*FakeClock)(nil)

// NewFakeClock returns a clock that reads start until it is moved.
func NewFakeClock(start time.Time) *FakeClock { return &FakeClock{now: start} }

// Now returns the clock's time, then advances it by the step.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now
	c.now = c.now.Add(c.step)
	return t
}

// Set moves the clock to t.
func (c *FakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// Advance moves the clock on by d.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// SetStep makes every later Now advance the clock by d; 0 stops it.
func (c *FakeClock) SetStep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.step = d
}
