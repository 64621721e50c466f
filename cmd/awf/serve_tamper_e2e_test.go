//go:build linux

package main

import (
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/infrastructure/sandbox"
)

// tamperWorkflow: a call changes, in the persistent helper that serves it, what the kernel
// lets a process of the same uid change in another without ptrace or signals (its resource
// limits, nice value, scheduling policy, CPU affinity, I/O priority) and the mode of the
// private temp dir; the calls before and after print what their programs inherit of these.
// Each call prints its pid namespace (its helper) first, and its open descriptors (the
// helper's control socket must not be among them).
const tamperWorkflow = `name: tamper
approval: {default: auto}
steps:
  - name: before
    type: tool
    tool: shell
    args:
      command: &probe |
        readlink /proc/self/ns/pid
        ls /proc/self/fd | tr '\n' ' '; echo
        grep -E '^Max (file size|open files|processes|cpu time)' /proc/self/limits
        cut -d' ' -f19,41 /proc/self/stat; grep Cpus_allowed_list /proc/self/status; ionice
        stat -c %a "$TMPDIR"; touch "$TMPDIR/f" && echo writable
  - name: tamper
    type: tool
    tool: shell
    args:
      command: |
        readlink /proc/self/ns/pid
        prlimit --pid 1 --fsize=1000:1000 --nofile=64:64 --nproc=50:50 --cpu=100:100
        renice -n 10 -u "$(id -u)" >/dev/null
        taskset -a -p 1 1 >/dev/null
        chrt -a -i -p 0 1
        for t in /proc/1/task/*; do ionice -c 3 -p "${t##*/}"; done
        chmod 0500 "$TMPDIR"
        echo done
  - name: after
    type: tool
    tool: shell
    args:
      command: *probe
`

// TestSandboxServedCallCannotTamperWithItsHelper: a call that lowers its persistent helper's
// limits, raises its nice value, pins it to one CPU, makes its scheduling and I/O idle and
// takes the write permission off the temp dir leaves none of it to the next call, which
// runs in a new helper with what the first call had; no call sees the control socket.
func TestSandboxServedCallCannotTamperWithItsHelper(t *testing.T) {
	rep := sandbox.Probe()
	if !rep.Root || !rep.Available(sandbox.LayerPIDNS) || !rep.Available(sandbox.LayerLandlock) {
		t.Skip("needs root, namespaces and Landlock")
	}
	e := newEnv(t)
	e.write("tamper.yaml", tamperWorkflow)
	res := e.runJSON(0, "run", "tamper.yaml")
	st := e.state(res.RunID)
	out := func(step string) (ns, rest string) { return servedOutput(t, st, step) }
	helper, before := out("before")
	if tns, rest := out("tamper"); tns != helper || rest != "done" {
		t.Fatalf("tamper ran in %s (want %s, the helper of the first call) and said %q", tns, helper, rest)
	}
	if fds, _, _ := strings.Cut(before, "\n"); fds != "0 1 2 3 " {
		t.Errorf("a served call has descriptors %q, want only its stdin, stdout, stderr (and ls's)", fds)
	}
	if !strings.HasSuffix(before, "\n700\nwritable") {
		t.Errorf("probe of the first call: %q", before)
	}
	if _, after := out("after"); after != before {
		t.Errorf("the call after the tampering one inherited it:\n%s\nwant as before:\n%s", after, before)
	}
}
