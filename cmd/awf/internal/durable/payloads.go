package durable

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// The payload store is content-addressed: one payload (a tool output, a conversation) may be
// referenced by several runs, and the codec that writes and reads it is not told which run it
// serves. So payloads are removed by age, not by run: every write and read of a payload
// touches it, and a sweep removes those nobody wrote or read for the retention
// (temporal_payload_retention, off by default). A payload shared by runs stays while any of
// them uses it. A run that waits longer than the retention without being replayed (a step, an
// approval wait) can lose the payloads its history refers to: choose a retention longer than
// the longest wait of a run (docs/distributed.md).

// touch marks a payload in use now.
func touch(path string) error {
	now := time.Now()
	return os.Chtimes(path, now, now)
}

// sweepSuffix marks a payload the sweep is taking away.
const sweepSuffix = ".sweep"

// sweep removes from the payload store dir the payloads, agent step journals and leftover
// temporary files not written or read since before now-retention, and returns how many it
// removed. A payload touched while the sweep takes it away stays: the sweep moves it aside,
// looks at its time again and puts it back when it was used meanwhile; a write of it that
// comes while it is aside writes it anew (the same bytes).
func sweep(ctx context.Context, dir string, retention time.Duration, now time.Time) (int, error) {
	if retention <= 0 {
		return 0, nil
	}
	cutoff := now.Add(-retention)
	removed := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			return nil
		}
		aside := path + sweepSuffix
		if os.Rename(path, aside) != nil {
			return nil // gone already
		}
		if info, err := os.Stat(aside); err == nil && !info.ModTime().Before(cutoff) {
			_ = os.Rename(aside, path) // touched meanwhile: in use
			return nil
		}
		if os.Remove(aside) == nil {
			removed++
		}
		return nil
	})
	if err != nil {
		return removed, fmt.Errorf("payload store %s: sweep: %w", dir, err)
	}
	return removed, nil
}

// sweepEvery is how often a worker sweeps the payload store: a tenth of the retention, at
// least every hour and at most every minute.
func sweepEvery(retention time.Duration) time.Duration {
	return min(max(retention/10, time.Minute), time.Hour)
}

// sweeper sweeps dir at start and then every sweepEvery(retention) until ctx ends, reporting
// what it did with report.
func sweeper(ctx context.Context, dir string, retention time.Duration, report func(removed int, err error)) {
	if retention <= 0 {
		return
	}
	t := time.NewTicker(sweepEvery(retention))
	defer t.Stop()
	for {
		report(sweep(ctx, dir, retention, time.Now()))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
