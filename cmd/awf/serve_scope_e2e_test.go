//go:build linux

package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/infrastructure/sandbox"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox/landlock"
)

// scopedWorkflow: the first call leaves stopped processes (each in a session of its own, so
// no hangup of an orphaned group ends them), started by the stages of one pipeline, which the
// interpreter runs at once from goroutines on different threads; the second looks for them
// and, in the same step, has one program signal another.
const scopedWorkflow = `name: scoped
approval: {default: auto}
steps:
  - name: leave
    type: tool
    tool: shell
    args:
      command: |
        readlink /proc/self/ns/pid
        s='setsid sh stop.sh </dev/null >/dev/null 2>&1 & sleep 0.05'
        sh -c "$s" | sh -c "$s" | sh -c "$s" | sh -c "$s" | sh -c "$s" | sh -c "$s"
        grep -l '^State:.*T' /proc/[0-9]*/status 2>/dev/null | wc -l
  - name: look
    type: tool
    tool: shell
    args:
      command: |
        readlink /proc/self/ns/pid
        grep -l '^State:.*T' /proc/[0-9]*/status 2>/dev/null | wc -l
        sh -c 'sleep 100 </dev/null >/dev/null 2>&1 & echo $!' > "$TMPDIR/pid"
        sh -c 'kill $(cat "$TMPDIR/pid")' && echo "one program signalled another"
`

// TestSandboxServedHelperKillsWhatEveryThreadStarted: with Landlock's IPC scopes (ABI 6), the
// programs of a call share one domain, whichever thread of the helper started them. Before,
// each thread of the helper had a Landlock domain of its own (go-landlock enforces thread by
// thread before ABI 8), and scoped signals refused the helper's kill(-1) for the processes a
// different thread had started, while it reported success: the leftovers survived, the clean-up
// ran into its 5 s deadline, and the next call got a new helper.
func TestSandboxServedHelperKillsWhatEveryThreadStarted(t *testing.T) {
	rep := sandbox.Probe()
	if !rep.Root || !rep.Available(sandbox.LayerPIDNS) || landlock.ABI() < 6 {
		t.Skip("needs root, namespaces and Landlock ABI 6 (scopes)")
	}
	e := newEnv(t)
	e.write("stop.sh", "kill -STOP $$\nsleep 1000\n")
	e.write("scoped.yaml", scopedWorkflow)
	for range 3 { // a thread mismatch is likely on one run, all but certain on three
		res := e.runJSON(0, "run", "scoped.yaml")
		st := e.state(res.RunID)
		leaveNS, left := servedOutput(t, st, "leave")
		if left != "6" {
			t.Fatalf("leave: %q stopped processes, want 6 (the test's premise)", left)
		}
		lookNS, seen := servedOutput(t, st, "look")
		if lookNS != leaveNS {
			t.Fatalf("look ran in %s, not in the helper of leave (%s): its clean-up failed", lookNS, leaveNS)
		}
		if want := "0\none program signalled another"; strings.TrimSpace(seen) != want {
			t.Fatalf("look saw %q, want %q", seen, want)
		}
		if d := st.States["leave"].DurationMs; d > 3000 {
			t.Errorf("leave took %d ms: its clean-up waited for processes it could not kill", d)
		}
	}
}

// abstractWorkflow: pairs of programs of one call, a listener and a client, meet on abstract
// unix sockets (the interpreter starts each program from whichever thread runs it).
const abstractWorkflow = `name: abstract
approval: {default: auto}
steps:
  - name: meet
    type: tool
    tool: shell
    args:
      command: |
        ok=0
        for i in 1 2 3 4 5 6 7 8; do
          python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind("\0awf-e2e-" + sys.argv[1]); s.listen(); s.settimeout(3); c,_=s.accept(); c.send(b"x")' $i &
          sleep 0.05
          python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect("\0awf-e2e-" + sys.argv[1]); print(s.recv(1).decode())' $i 2>/dev/null | grep -q x && ok=$((ok+1))
          wait
        done
        echo "met $ok of 8"
`

// TestSandboxProgramsReachEachOthersAbstractSockets: with Landlock's abstract-socket scope
// (ABI 6), programs of one call may connect to each other's abstract unix sockets, whichever
// thread of the helper started them. Before, each thread's own domain made most connections
// fail with EPERM.
func TestSandboxProgramsReachEachOthersAbstractSockets(t *testing.T) {
	rep := sandbox.Probe()
	if !rep.Root || !rep.Available(sandbox.LayerPIDNS) || landlock.ABI() < 6 {
		t.Skip("needs root, namespaces and Landlock ABI 6 (scopes)")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3 for its sockets")
	}
	e := newEnv(t)
	e.write("abstract.yaml", abstractWorkflow)
	res := e.runJSON(0, "run", "abstract.yaml")
	if got := strings.TrimSpace(e.state(res.RunID).States["meet"].Output); got != "met 8 of 8" {
		t.Errorf("programs of one call on abstract sockets: %q, want met 8 of 8", got)
	}
}
