//go:build unix

package process

// Tests of the process group the helper leads, which is Unix's.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
)

func TestRunTimeoutKillsGroup(t *testing.T) {
	r := New(Config{})
	pgids := groupOf(t, r)
	watched := make(chan int, 1)
	go func() { watched <- waitForSleeps(t, <-pgids, 5) }()

	got, err := r.Run(t.Context(), ports.ProcessRequest{Script: children + "echo started; wait", Env: childrenEnv(t), Timeout: 2 * time.Second})
	pgid := <-watched
	if err == nil || err.Error() != "timed out after 2s" || fault.KindOf(err) != fault.Execution || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run(timeout) error = %v (kind %v), want \"timed out after 2s\" of kind execution wrapping DeadlineExceeded", err, fault.KindOf(err))
	}
	if got.Stdout != "started\n" || got.ExitCode != 128+int(syscall.SIGKILL) {
		t.Errorf("Run(timeout) = stdout %q, exit %d; want the partial output %q, exit 137", got.Stdout, got.ExitCode, "started\n")
	}
	waitGroupGone(t, pgid)
}

func TestRunCancelKillsGroup(t *testing.T) {
	r := New(Config{})
	ctx, cancel := context.WithCancel(t.Context())
	pgids := groupOf(t, r)
	watched := make(chan int, 1)
	go func() {
		pgid := waitForSleeps(t, <-pgids, 5)
		cancel()
		watched <- pgid
	}()

	_, err := r.Run(ctx, ports.ProcessRequest{Script: children + "wait", Env: childrenEnv(t)})
	pgid := <-watched
	if err == nil || err.Error() != "interrupted" || fault.KindOf(err) != fault.Execution || !errors.Is(err, context.Canceled) {
		t.Errorf("Run(cancel) error = %v (kind %v), want \"interrupted\" of kind execution wrapping Canceled", err, fault.KindOf(err))
	}
	waitGroupGone(t, pgid)
}

func TestRunLeftoverJobsKilled(t *testing.T) {
	r := New(Config{})
	pgids := groupOf(t, r)
	// The script ends at once, leaving its jobs behind; they hold stdout, so Run would wait
	// for them if it did not kill them.
	got, err := r.Run(t.Context(), ports.ProcessRequest{Script: children + "echo done", Env: childrenEnv(t)})
	if err != nil || got.Stdout != "done\n" || got.ExitCode != 0 {
		t.Errorf("Run(leftover jobs) = %+v, %v; want stdout %q, exit 0", got, err, "done\n")
	}
	waitGroupGone(t, <-pgids)
}

// TestRunSetsidEscapes pins down the known gap: a process that leaves the group with setsid
// survives the group kill (only a PID namespace, from the sandbox, catches it). What Run
// promises is that it does not hang on the pipes such a process holds: it stops reading after
// DrainTimeout.
func TestRunSetsidEscapes(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	r := New(Config{DrainTimeout: 100 * time.Millisecond})
	pgids := groupOf(t, r)
	script := `setsid sh -c 'echo $$ > "$PIDFILE"; exec sleep 100' & while [ ! -s "$PIDFILE" ]; do sleep 0.01; done; echo done`
	got, err := r.Run(t.Context(), ports.ProcessRequest{Script: script, Env: map[string]string{"PIDFILE": pidFile}})
	if err != nil || got.Stdout != "done\n" {
		t.Errorf("Run(setsid child holding stdout) = %+v, %v; want stdout %q", got, err, "done\n")
	}
	waitGroupGone(t, <-pgids)
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if syscall.Kill(pid, syscall.SIGKILL) == nil {
		t.Logf("known gap: setsid child %d outlived the run (killed by the test)", pid)
	}
}

// groupOf makes r send the helper's process group id, once per Run, after checking that the
// helper leads a group of its own.
func groupOf(t *testing.T, r *Runner) chan int {
	pgids := make(chan int, 1)
	r.onStart = func(pid int) {
		if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
			t.Errorf("helper %d is in process group %d (%v), want its own", pid, pgid, err)
		}
		pgids <- pid
	}
	return pgids
}

// waitForSleeps waits until the group pgid has at least n live sleep processes, so that the
// kill that follows has something to kill, and returns pgid.
func waitForSleeps(t *testing.T, pgid, n int) int {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		count := 0
		for _, comm := range liveMembers(pgid) {
			if comm == "sleep" {
				count++
			}
		}
		if count >= n {
			return pgid
		}
	}
	t.Errorf("group %d never had %d sleep processes: %v", pgid, n, liveMembers(pgid))
	return pgid
}

// waitGroupGone waits until no live process is left in group pgid: SIGKILL is sent before Run
// returns, and dying takes the kernel a moment. Zombies do not count: here PID 1 may not reap
// orphans.
func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if len(liveMembers(pgid)) == 0 {
			return
		}
	}
	members := liveMembers(pgid)
	syscall.Kill(-pgid, syscall.SIGKILL)
	t.Errorf("processes of group %d survived the run: %v", pgid, members)
}

// liveMembers returns the processes of group pgid that are not zombies, pid -> command name.
func liveMembers(pgid int) map[int]string {
	members := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		open, end := strings.IndexByte(string(data), '('), strings.LastIndexByte(string(data), ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(string(data[end+1:]))
		if len(fields) < 3 || fields[0] == "Z" || fields[0] == "X" {
			continue
		}
		if g, _ := strconv.Atoi(fields[2]); g == pgid {
			members[pid] = string(data[open+1 : end])
		}
	}
	return members
}

func TestRunOutputCap(t *testing.T) {
	const limit = 1 << 20
	exact := strings.Repeat("z", limit)
	line := strings.Repeat("y", 1023)
	tests := []struct {
		name      string
		script    string
		vars      map[string]string
		wantOut   string
		truncated bool
		killed    bool // the script never ends: only the cap stops it
	}{
		{"yes", "yes", nil, strings.Repeat("y\n", limit/2), true, true},
		{"yes in a grandchild", "sh -c 'sh -c yes'", nil, strings.Repeat("y\n", limit/2), true, true},
		{"builtin loop", `while true; do echo "$L"; done`, map[string]string{"L": line}, strings.Repeat(line+"\n", limit/1024), true, true},
		{"exactly the limit", `printf '%s' "$V"`, map[string]string{"V": exact}, exact, false, false},
		{"one byte over", `printf '%s!' "$V"`, map[string]string{"V": exact}, exact, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := New(Config{})
			pgids := groupOf(t, r)
			got, err := r.Run(t.Context(), ports.ProcessRequest{Script: tc.script, Vars: tc.vars, OutputLimit: limit})
			if err != nil {
				t.Fatalf("Run(%q) error: %v", tc.script, err)
			}
			if got.Stdout != tc.wantOut || got.Truncated != tc.truncated {
				t.Errorf("Run(%q) = %d bytes (prefix %.20q), truncated %v; want %d bytes (prefix %.20q), truncated %v",
					tc.script, len(got.Stdout), got.Stdout, got.Truncated, len(tc.wantOut), tc.wantOut, tc.truncated)
			}
			if tc.killed && got.ExitCode != 128+int(syscall.SIGKILL) {
				t.Errorf("Run(%q).ExitCode = %d, want 137 (killed at the cap)", tc.script, got.ExitCode)
			}
			waitGroupGone(t, <-pgids)
		})
	}
}
