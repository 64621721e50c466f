package portstest

import (
	"sync"
	"testing"
	"time"
)

func TestFakeClock(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewFakeClock(start)
	if got := c.Now(); !got.Equal(start) {
		t.Errorf("Now() = %v, want %v", got, start)
	}
	c.Advance(time.Minute)
	if got, want := c.Now(), start.Add(time.Minute); !got.Equal(want) {
		t.Errorf("Now() after Advance = %v, want %v", got, want)
	}
	c.SetStep(time.Second)
	first, second := c.Now(), c.Now()
	if d := second.Sub(first); d != time.Second {
		t.Errorf("two readings with a 1s step are %v apart, want 1s", d)
	}
	later := start.Add(time.Hour)
	c.Set(later)
	c.SetStep(0)
	if got := c.Now(); !got.Equal(later) || !c.Now().Equal(later) {
		t.Errorf("Now() after Set and SetStep(0) = %v, want %v twice", got, later)
	}
}

func TestFakeClockConcurrent(t *testing.T) {
	c := NewFakeClock(time.Time{})
	c.SetStep(time.Nanosecond)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				c.Now()
			}
		})
	}
	wg.Wait()
	if got := c.Now().Sub(time.Time{}); got != 800*time.Nanosecond {
		t.Errorf("after 800 readings the clock moved %v, want 800ns", got)
	}
}
