//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSandboxTempDirOfAKilledRunIsSwept: awf killed with SIGKILL during a sandboxed call cannot
// remove the call's private temporary directory; the next awf to start a sandbox removes it,
// since no process holds its lock any more (and it is not brand new), and removes its own when
// it ends.
func TestSandboxTempDirOfAKilledRunIsSwept(t *testing.T) {
	tmp := t.TempDir()
	if err := os.Chmod(tmp, 0o1777); err != nil { // like /tmp: the sandbox's uid reaches its directory in it
		t.Fatal(err)
	}
	e := newEnv(t)
	e.write("slow.yaml", "name: slow\napproval: {default: auto}\nsteps:\n  - {name: s, type: tool, tool: shell, args: {command: \"sleep 30\"}}\n")
	e.write("quick.yaml", "name: quick\napproval: {default: auto}\nsteps:\n  - {name: q, type: tool, tool: shell, args: {command: \"true\"}}\n")
	dirs := func() []string {
		d, _ := filepath.Glob(filepath.Join(tmp, "awf-tmp-*"))
		return d
	}
	slow := e.cmd(t.Context(), "run", "slow.yaml")
	slow.Env = append(slow.Env, "TMPDIR="+tmp)
	if err := slow.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(dirs()) == 1 })
	left := dirs()[0]
	slow.Process.Kill()
	slow.Wait()
	stopOrphan(t, e)
	if _, err := os.Stat(left); err != nil {
		t.Fatalf("the killed run's temp dir is already gone (%v): nothing to test", err)
	}
	// A directory is swept once it is older than a moment (another awf may have just made
	// it and not hold it yet): this one is made older rather than waited for.
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(left, old, old); err != nil {
		t.Fatal(err)
	}

	quick := e.cmd(t.Context(), "run", "quick.yaml")
	quick.Env = append(quick.Env, "TMPDIR="+tmp)
	if out, err := quick.CombinedOutput(); err != nil {
		t.Fatalf("run quick.yaml: %v\n%s", err, out)
	}
	if left := dirs(); len(left) != 0 {
		t.Errorf("temp dirs left after the next run: %q", left)
	}
}
