//go:build linux

package main

import (
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox"
)

// servedWorkflow: shell-tool calls of one sandbox, one after the other, served by the
// persistent helper of the run. Each prints its pid namespace (the helper's identity: one
// helper, one namespace) on its first line.
const servedWorkflow = `name: served
approval: {default: auto}
steps:
  - name: leave
    type: tool
    tool: shell
    args:
      command: |
        readlink /proc/self/ns/pid
        echo secret > "$TMPDIR/left"; mkdir "$HOME/locked"; echo x > "$HOME/locked/f"; chmod 0 "$HOME/locked"
        sh -c 'setsid sleep 1000 >/dev/null 2>&1 </dev/null &'
        ipcmk -M 4096 >/dev/null; ipcmk -Q >/dev/null
        export LEFT=1; cd /
  - name: look
    type: tool
    tool: shell
    args:
      command: &look |
        readlink /proc/self/ns/pid
        ls -A "$TMPDIR"; echo "LEFT=${LEFT-unset}"; pwd
        cat /proc/[0-9]*/comm 2>/dev/null | grep sleep; ipcs | grep -c '^0x' || true
  - name: attack
    type: tool
    tool: shell
    args:
      command: |
        readlink /proc/self/ns/pid
        for f in mem environ maps; do head -c 64 /proc/1/$f >/dev/null 2>&1 && echo "read $f"; done
        ls /proc/1/fd >/dev/null 2>&1 && echo "listed its descriptors"
        if command -v strace >/dev/null; then timeout 1 strace -p 1 -o /dev/null 2>/dev/null; [ $? = 1 ] || echo traced; fi
        for s in TERM INT HUP QUIT USR1 SEGV ABRT KILL STOP; do /bin/kill -s $s 1 2>/dev/null; done
        sleep 0.2; echo alive
  - name: after
    type: tool
    tool: shell
    args:
      command: |
        readlink /proc/self/ns/pid
        id -u; grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status
  - name: job
    type: tool
    tool: shell
    args:
      command: |
        readlink /proc/self/ns/pid
        echo secret > "$TMPDIR/left"; setsid sleep 1001 >/dev/null 2>&1 </dev/null &
        export LEFT=1
  - name: look_again
    type: tool
    tool: shell
    args:
      command: *look
  - name: both
    type: parallel
    steps:
      - {name: one, type: tool, tool: shell, args: {command: "readlink /proc/self/ns/pid; sleep 0.5"}}
      - {name: two, type: tool, tool: shell, args: {command: "readlink /proc/self/ns/pid; sleep 0.5"}}
`

// TestSandboxServedCallsShareNothing: through the real binary, shell-tool calls served by one
// persistent helper find nothing of the call before (process, temp-dir file, IPC object,
// variable, directory), cannot read, trace or signal the helper, and stay sandboxed after
// trying; a call that started a background job is followed by a new helper; two calls at
// once never share one.
func TestSandboxServedCallsShareNothing(t *testing.T) {
	rep := sandbox.Probe()
	if !rep.Root || !rep.Available(sandbox.LayerPIDNS) || !rep.Available(sandbox.LayerLandlock) {
		t.Skip("needs root, namespaces and Landlock")
	}
	e := newEnv(t)
	e.write("served.yaml", servedWorkflow)
	res := e.runJSON(0, "run", "served.yaml")
	st := e.state(res.RunID)
	out := func(step string) (ns, rest string) { return servedOutput(t, st, step) }
	helper, _ := out("leave")
	want := "LEFT=unset\n" + e.dir + "\n0"
	for _, step := range []string{"look", "look_again"} {
		if _, rest := out(step); rest != want {
			t.Errorf("step %s saw %q of the calls before, want only %q", step, rest, want)
		}
	}
	if _, rest := out("attack"); rest != "alive" {
		t.Errorf("attacking call reached the helper: %q", rest)
	}
	if _, rest := out("after"); rest != "65534\nNoNewPrivs:\t1\nSeccomp:\t2" {
		t.Errorf("call after the attack not sandboxed: %q", rest)
	}
	for _, step := range []string{"look", "attack", "after", "job"} {
		if ns, _ := out(step); ns != helper {
			t.Errorf("step %s ran in %s, want the helper of the first call (%s)", step, ns, helper)
		}
	}
	again, _ := out("look_again")
	if again == helper {
		t.Errorf("the call after a background job ran in the same helper (%s)", helper)
	}
	if one, _ := out("one"); one == func() string { two, _ := out("two"); return two }() {
		t.Errorf("two concurrent calls ran in one helper (%s)", one)
	}
}

// servedOutput splits the output of a served call's step into its pid namespace (its first
// line: the helper that served it) and the rest; a step missing or not starting so fails.
func servedOutput(t *testing.T, st *state.RunState, step string) (ns, rest string) {
	t.Helper()
	s, ok := st.States[step]
	if !ok {
		t.Fatalf("no state for step %s", step)
	}
	ns, rest, _ = strings.Cut(s.Output, "\n")
	if !strings.HasPrefix(ns, "pid:[") {
		t.Fatalf("step %s: output %q does not start with its pid namespace", step, s.Output)
	}
	return ns, rest
}
