//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLimitReached: the cgroup's event counters say which limit stopped a process.
func TestLimitReached(t *testing.T) {
	tests := []struct {
		name   string
		memory string // memory.events, "" for none
		pids   string // pids.events
		want   string
	}{
		{"nothing", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 0\n", "max 0\n", ""},
		{"oom kill", "low 0\nhigh 0\nmax 9\noom 2\noom_kill 1\noom_group_kill 0\n", "max 0\n", ResourceMemory},
		{"fork refused", "oom_kill 0\n", "max 17\n", ResourcePIDs},
		{"no files", "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range map[string]string{"memory.events": tc.memory, "pids.events": tc.pids} {
				if content == "" {
					continue
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l := &Launch{cg: &cgroup{dir: dir, fd: -1}}
			if got := l.LimitReached(); got != tc.want {
				t.Errorf("LimitReached() = %q, want %q", got, tc.want)
			}
		})
	}
	if got := (&Launch{}).LimitReached(); got != "" {
		t.Errorf("LimitReached() without a cgroup = %q, want none", got)
	}
}
