//go:build linux

package process

import (
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// servingRunner is a sandboxed runner with persistent helpers, and the helper pid of each Run.
func servingRunner(t *testing.T) (*Runner, func() []int) {
	t.Helper()
	r := sandboxedRunner(t, nil)
	r.cfg.Serve = true
	t.Cleanup(func() { r.Close() })
	var (
		mu   sync.Mutex
		pids []int
	)
	r.onStart = func(pid int) { mu.Lock(); pids = append(pids, pid); mu.Unlock() }
	return r, func() []int { mu.Lock(); defer mu.Unlock(); return append([]int(nil), pids...) }
}

// sandboxedProbe prints what shows the call is sandboxed: its uid, no_new_privs and seccomp.
const sandboxedProbe = `id -u; grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status`

func wantSandboxed(t *testing.T, out string) {
	t.Helper()
	if !strings.HasPrefix(out, "65534\n") || !strings.Contains(out, "NoNewPrivs:\t1") || !strings.Contains(out, "Seccomp:\t2") {
		t.Errorf("call not sandboxed: %q", out)
	}
}

// TestServedCallLeavesNothing: one helper serves the calls, and the next call finds nothing
// of the one before: no process (orphaned, in its own session), no file in the temp dir
// ($TMPDIR, also $HOME; even one it cannot list), no System V IPC object, none of its
// variables or its directory. A call that started a background job is not served again: its
// job (a goroutine of the interpreter) could outlive it; the next call gets a new helper and
// finds nothing of it either.
func TestServedCallLeavesNothing(t *testing.T) {
	r, pids := servingRunner(t)
	ws := t.TempDir()
	run := func(script string) string {
		t.Helper()
		res, err := r.Run(t.Context(), ports.ProcessRequest{Script: script, Dir: ws, Policy: &workflow.Policy{}})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("Run(%q) = exit %d, %v; stderr %q", script, res.ExitCode, err, res.Stderr)
		}
		return res.Stdout
	}
	const check = `ls -A "$TMPDIR"; echo "LEFT=${LEFT-unset}"; pwd
cat /proc/[0-9]*/comm 2>/dev/null | grep sleep; ipcs | grep -c '^0x' || true`
	want := "LEFT=unset\n" + ws + "\n0\n"
	run(`echo secret > "$TMPDIR/left"; mkdir "$HOME/locked"; echo x > "$HOME/locked/f"; chmod 0 "$HOME/locked"
sh -c 'setsid sleep 1000 >/dev/null 2>&1 </dev/null &'
ipcmk -M 4096 >/dev/null; ipcmk -Q >/dev/null; ipcmk -S 1 >/dev/null
export LEFT=1; cd /`)
	if out := run(check); out != want {
		t.Errorf("the call after saw %q, want only %q", out, want)
	}
	run(`echo secret > "$TMPDIR/left"; setsid sleep 1001 >/dev/null 2>&1 </dev/null & export LEFT=1; cd /`)
	if out := run(check); out != want {
		t.Errorf("the call after one with a background job saw %q, want only %q", out, want)
	}
	wantSandboxed(t, run(sandboxedProbe))
	p := pids()
	if len(p) != 5 || p[0] != p[1] || p[1] != p[2] || p[2] == p[3] || p[3] != p[4] {
		t.Errorf("helpers %v: want one for the first three calls, another after the background job", p)
	}
}

// TestServedCallLeavesNoOrphan: without background jobs the helper is kept, and a process
// the call left (orphaned, in a session of its own) is gone before the next call starts.
func TestServedCallLeavesNoOrphan(t *testing.T) {
	r, pids := servingRunner(t)
	ws := t.TempDir()
	req := func(script string) ports.ProcessRequest {
		return ports.ProcessRequest{Script: script, Dir: ws, Policy: &workflow.Policy{}}
	}
	if res, err := r.Run(t.Context(), req(`sh -c 'setsid sleep 1000 >/dev/null 2>&1 </dev/null &'; sleep 0.1; echo ok`)); err != nil || res.Stdout != "ok\n" {
		t.Fatalf("first call = %q, %v (%q)", res.Stdout, err, res.Stderr)
	}
	res, err := r.Run(t.Context(), req(`cat /proc/[0-9]*/comm 2>/dev/null | grep -c sleep || true`))
	if err != nil || res.Stdout != "0\n" {
		t.Errorf("second call counts %q sleep processes, %v; want 0", res.Stdout, err)
	}
	if p := pids(); len(p) != 2 || p[0] != p[1] {
		t.Errorf("helpers %v, want one serving both calls", p)
	}
}

// TestServedHelperUnreachable: a call cannot read the helper's memory, environment or
// descriptors, trace it or signal it; the next call runs in the same helper, sandboxed. A
// helper killed from outside between calls is replaced, still sandboxed.
func TestServedHelperUnreachable(t *testing.T) {
	r, pids := servingRunner(t)
	ws := t.TempDir()
	req := func(script string) ports.ProcessRequest {
		return ports.ProcessRequest{Script: script, Dir: ws, Policy: &workflow.Policy{}}
	}
	res, err := r.Run(t.Context(), req(`for f in mem environ maps; do head -c 64 /proc/1/$f >/dev/null 2>&1 && echo "read $f"; done
ls /proc/1/fd >/dev/null 2>&1 && echo "listed fds"
if command -v strace >/dev/null; then timeout 1 strace -p 1 -o /dev/null 2>/dev/null; [ $? = 1 ] || echo traced; fi
for s in TERM INT HUP QUIT USR1 SEGV ABRT KILL STOP; do /bin/kill -s $s 1 2>/dev/null; done
sleep 0.2; echo alive`))
	if err != nil || res.Stdout != "alive\n" {
		t.Fatalf("attacking call = %q, %v (stderr %q); want nothing read, no trace, and the call alive", res.Stdout, err, res.Stderr)
	}
	res, err = r.Run(t.Context(), req(sandboxedProbe))
	if err != nil {
		t.Fatal(err)
	}
	wantSandboxed(t, res.Stdout)
	p := pids()
	if len(p) != 2 || p[0] != p[1] {
		t.Fatalf("helpers %v, want the attacked helper to serve the next call", p)
	}
	syscall.Kill(p[1], syscall.SIGKILL)
	waitExited(p[1]) // gone (not reaped: the runner finds it so when the next call comes)
	if res, err = r.Run(t.Context(), req(sandboxedProbe)); err != nil {
		t.Fatal(err)
	}
	wantSandboxed(t, res.Stdout)
	if p = pids(); len(p) != 3 || p[2] == p[1] {
		t.Errorf("helpers %v, want a new one after the helper was killed", p)
	}
}

// TestServedCallStopped: a call that times out or overflows its output ends as with a helper
// of its own (the helper is killed: exit 137 on overflow, a timeout error), and the next call
// gets a new helper.
func TestServedCallStopped(t *testing.T) {
	r, pids := servingRunner(t)
	ws := t.TempDir()
	res, err := r.Run(t.Context(), ports.ProcessRequest{Script: "sleep 10", Dir: ws, Policy: &workflow.Policy{}, Timeout: 100 * time.Millisecond})
	if fault.KindOf(err) != fault.Execution || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("timed-out call = exit %d, %v", res.ExitCode, err)
	}
	res, err = r.Run(t.Context(), ports.ProcessRequest{Script: "while :; do echo xxxxxxxxxxxxxxxx; done", Dir: ws, Policy: &workflow.Policy{}, OutputLimit: 1000})
	if err != nil || !res.Truncated || res.ExitCode != 137 || len(res.Stdout) != 1000 {
		t.Errorf("overflowing call = exit %d, truncated %v, %d bytes, %v", res.ExitCode, res.Truncated, len(res.Stdout), err)
	}
	res, err = r.Run(t.Context(), ports.ProcessRequest{Script: "exit 7", Dir: ws, Policy: &workflow.Policy{}})
	if err != nil || res.ExitCode != 7 {
		t.Errorf("call after = exit %d, %v", res.ExitCode, err)
	}
	if p := pids(); len(p) != 3 || p[0] == p[1] || p[1] == p[2] {
		t.Errorf("helpers %v, want a new one after each stopped call", p)
	}
}

// TestServedConcurrentCalls: two calls of the same sandbox at once run in two helpers, never
// one helper for both; both are kept for the calls after.
func TestServedConcurrentCalls(t *testing.T) {
	r, pids := servingRunner(t)
	ws := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() {
			res, err := r.Run(t.Context(), ports.ProcessRequest{Script: "sleep 0.3; echo $$", Dir: ws, Policy: &workflow.Policy{}})
			if err == nil && res.Stdout != "1\n" {
				err = errors.New("stdout " + res.Stdout)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	p := pids()
	if len(p) != 2 || p[0] == p[1] {
		t.Fatalf("helpers %v, want two for two concurrent calls", p)
	}
	for range 2 {
		if _, err := r.Run(t.Context(), ports.ProcessRequest{Script: "true", Dir: ws, Policy: &workflow.Policy{}}); err != nil {
			t.Fatal(err)
		}
	}
	if p = pids(); p[2] != p[3] || p[2] != p[0] && p[2] != p[1] {
		t.Errorf("helpers %v, want the later calls served by one of the two", p)
	}
}

// TestServedCallLargeInput: a served call gets a 10 MB variable and 1 MB of stdin whole, and
// its exit status as it is, through the same wire as a helper of its own.
func TestServedCallLargeInput(t *testing.T) {
	r, pids := servingRunner(t)
	ws := t.TempDir()
	for range 2 {
		res, err := r.Run(t.Context(), ports.ProcessRequest{Script: `printf %s "$BIG" | wc -c; wc -c; exit 255`, Dir: ws,
			Policy: &workflow.Policy{}, Vars: map[string]string{"BIG": strings.Repeat("x", 10<<20)}, Stdin: strings.Repeat("y", 1<<20)})
		if err != nil || res.ExitCode != 255 || strings.Fields(res.Stdout)[0] != "10485760" || strings.Fields(res.Stdout)[1] != "1048576" {
			t.Fatalf("call = exit %d, %q, %v", res.ExitCode, res.Stdout, err)
		}
	}
	if p := pids(); len(p) != 2 || p[0] != p[1] {
		t.Errorf("helpers %v, want one serving both calls", p)
	}
}
