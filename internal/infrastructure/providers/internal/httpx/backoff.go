package httpx

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Backoff is the retry policy: how many attempts after the first, and how long to wait
// between them. Its zero value never retries.
type Backoff struct {
	// MaxRetries is the number of attempts after the first.
	MaxRetries int
	// Base is the wait before the first retry; each later retry doubles it.
	Base time.Duration
	// Max caps the doubling.
	Max time.Duration
	// MaxRetryAfter caps the wait a server asks for with Retry-After, so that a server asking
	// for an hour cannot hold a run that long.
	MaxRetryAfter time.Duration
}

// DefaultBackoff is the policy of every provider: 3 retries after 0.5s, 1s and 2s (less up to a
// quarter of jitter), never more than 8s, and at most 60s when the server says how long.
func DefaultBackoff(maxRetries int) Backoff {
	return Backoff{MaxRetries: maxRetries, Base: 500 * time.Millisecond, Max: 8 * time.Second, MaxRetryAfter: time.Minute}
}

// Delay is the wait before retry number retry+1. A positive retryAfter (the server's wish) is
// honoured exactly, up to MaxRetryAfter; otherwise the wait doubles from Base up to Max, less a
// random part of up to a quarter, so that clients that failed together do not retry together.
func (b Backoff) Delay(retry int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, b.MaxRetryAfter)
	}
	d := b.Base
	for i := 0; i < retry && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	return d - time.Duration(rand.Int64N(int64(d)/4+1))
}

// RetryAfter reads how long a server asked the client to wait: retry-after-ms (milliseconds,
// sent by OpenAI), else Retry-After in seconds or as an HTTP date relative to now. It returns 0
// when the headers say nothing usable.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return seconds(ms / 1000)
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		return seconds(s)
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// sleep waits for d or until ctx ends, whichever is first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// seconds converts a server's number of seconds, kept within a day so that absurd values
// cannot overflow a Duration.
func seconds(s float64) time.Duration {
	if s <= 0 {
		return 0
	}
	return time.Duration(min(s, 86400) * float64(time.Second))
}
