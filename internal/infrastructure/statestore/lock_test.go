package statestore

import (
	"os"
	"strings"
	"testing"
)

// TestLockLeftByKilledOwner: a lock file a killed process left, longer than the new owner's,
// is taken over, and names the new owner only.
func TestLockLeftByKilledOwner(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir)
	write(t, s.lockPath("run"), "pid: 99999999\nhost: "+strings.Repeat("long-host-name", 20)+"\nsince: 2020-01-01T00:00:00Z\n")
	unlock, err := s.Lock(t.Context(), "run")
	if err != nil {
		t.Fatalf("Lock over a stale lock file: %v", err)
	}
	defer unlock()
	host, _ := os.Hostname()
	if o, ok := s.Owner("run"); !ok || o.PID != os.Getpid() || o.Host != host {
		t.Errorf("Owner = %+v, %v; want this process on %s", o, ok, host)
	}
}
