package durable

import (
	"strconv"
	"time"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/internal/domain/fault"
)

// Defaults of the settings (docs/distributed.md). A worker silent for defaultHeartbeatTimeout
// is lost; it heartbeats heartbeatsPerTimeout times in that time, so that a heartbeat or two
// lost to a slow server does not lose it. An activity of a host-pinned run waits
// defaultPinnedWait for a worker of its host. A run continues as new past defaultContinueAfter
// history events, or earlier when the server suggests it.
const (
	defaultHeartbeatTimeout = 5 * time.Second
	heartbeatsPerTimeout    = 5
	defaultPinnedWait       = 30 * time.Second
	defaultContinueAfter    = 10_000
)

// Settings are the engine's tunables, from the configuration (temporal_heartbeat_timeout,
// temporal_pinned_wait, temporal_continue_after, temporal_payload_retention) or the
// environment (AWF_TEMPORAL_HEARTBEAT_TIMEOUT, ...). The first three travel with a run (its
// RunInput), so that every worker replaying it decides the same.
type Settings struct {
	HeartbeatTimeout time.Duration
	PinnedWait       time.Duration
	ContinueAfter    int
	// PayloadRetention is how long a payload nobody wrote or read stays in the payload store;
	// zero keeps them.
	PayloadRetention time.Duration
}

// loadSettings resolves the settings, naming the setting and where it came from when a value
// is wrong.
func loadSettings(f *cmdutil.Factory) (Settings, error) {
	s := Settings{HeartbeatTimeout: defaultHeartbeatTimeout, PinnedWait: defaultPinnedWait, ContinueAfter: defaultContinueAfter}
	cfg, err := f.Config()
	if err != nil {
		return s, err
	}
	bad := func(key, v, want string) error {
		return fault.New(fault.Usage, "%s: %s = %q: want %s", cfg.Sources[key], key, v, want)
	}
	for _, d := range []struct {
		key, v string
		dst    *time.Duration
		min    time.Duration
		zeroOK bool // zero turns the setting off
	}{
		{"temporal_heartbeat_timeout", cfg.HeartbeatTimeout, &s.HeartbeatTimeout, time.Second, false},
		{"temporal_pinned_wait", cfg.PinnedWait, &s.PinnedWait, time.Second, false},
		{"temporal_payload_retention", cfg.PayloadRetention, &s.PayloadRetention, time.Minute, true},
	} {
		if d.v == "" {
			continue
		}
		v, err := time.ParseDuration(d.v)
		if err != nil || (v < d.min && !(d.zeroOK && v == 0)) {
			return s, bad(d.key, d.v, "a duration of at least "+d.min.String()+" (like 30s or 2h)")
		}
		*d.dst = v
	}
	if v := cfg.ContinueAfter; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 || n > 50_000 {
			return s, bad("temporal_continue_after", v, "a number of history events from 100 to 50000")
		}
		s.ContinueAfter = n
	}
	return s, nil
}

// heartbeatEvery is how often a worker heartbeats an activity whose heartbeat timeout is
// timeout (zero: the default's).
func heartbeatEvery(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		timeout = defaultHeartbeatTimeout
	}
	return max(timeout/heartbeatsPerTimeout, 100*time.Millisecond)
}
