package durable

import (
	"strings"
	"testing"
	"time"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/internal/infrastructure/config"
)

func settingsOf(cfg config.Config) (Settings, error) {
	f := &cmdutil.Factory{Config: func() (config.Config, error) { return cfg, nil }}
	return loadSettings(f)
}

// TestSettings: unset settings are the defaults; set ones are parsed; a wrong one is an error
// naming the setting, its value and where it came from.
func TestSettings(t *testing.T) {
	s, err := settingsOf(config.Config{})
	if err != nil || s != (Settings{HeartbeatTimeout: 5 * time.Second, PinnedWait: 30 * time.Second, ContinueAfter: 10_000}) {
		t.Fatalf("defaults = %+v, %v", s, err)
	}
	s, err = settingsOf(config.Config{HeartbeatTimeout: "20s", PinnedWait: "2m", ContinueAfter: "500", PayloadRetention: "48h"})
	if err != nil || s != (Settings{HeartbeatTimeout: 20 * time.Second, PinnedWait: 2 * time.Minute, ContinueAfter: 500, PayloadRetention: 48 * time.Hour}) {
		t.Fatalf("set = %+v, %v", s, err)
	}
	if s, err := settingsOf(config.Config{PayloadRetention: "0s"}); err != nil || s.PayloadRetention != 0 {
		t.Errorf("retention 0 = %+v, %v; want kept forever", s, err)
	}
	for _, bad := range []config.Config{
		{HeartbeatTimeout: "0s"}, {HeartbeatTimeout: "fast"}, {PinnedWait: "10ms"}, {ContinueAfter: "99"},
		{ContinueAfter: "1e9"}, {ContinueAfter: "60000"}, {PayloadRetention: "-1h"}, {PayloadRetention: "1s"},
	} {
		bad.Sources = map[string]string{"temporal_heartbeat_timeout": "env AWF_TEMPORAL_HEARTBEAT_TIMEOUT",
			"temporal_pinned_wait": ".awf/config.yaml", "temporal_continue_after": ".awf/config.yaml", "temporal_payload_retention": "env AWF_TEMPORAL_PAYLOAD_RETENTION"}
		_, err := settingsOf(bad)
		if err == nil || !strings.Contains(err.Error(), "temporal_") || !strings.Contains(err.Error(), "want") ||
			!(strings.Contains(err.Error(), "env AWF_") || strings.Contains(err.Error(), ".awf/config.yaml")) {
			t.Errorf("%+v: error %v, want one naming the setting and its source", bad, err)
		}
	}
}

// TestHeartbeatEvery: a worker heartbeats five times per heartbeat timeout, never more often
// than every 100 ms; the default timeout when the activity has none.
func TestHeartbeatEvery(t *testing.T) {
	for timeout, want := range map[time.Duration]time.Duration{
		0: time.Second, 5 * time.Second: time.Second, time.Minute: 12 * time.Second, 200 * time.Millisecond: 100 * time.Millisecond,
	} {
		if got := heartbeatEvery(timeout); got != want {
			t.Errorf("heartbeatEvery(%v) = %v, want %v", timeout, got, want)
		}
	}
}
