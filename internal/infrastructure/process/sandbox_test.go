//go:build unix

package process

// [sandbox] Runs through the helper with a sandbox policy. The attack suite is in package
// sandbox; these check the wiring: the spec on the wire, the clone flags, the hooks.

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox"
	"github.com/google/go-cmp/cmp"
)

func TestWireSandboxSpec(t *testing.T) {
	req := &Request{Script: "true", Vars: map[string]string{}, Sandbox: []byte(`{"version":1}`)}
	var buf strings.Builder
	if err := writeRequest(&buf, req); err != nil {
		t.Fatal(err)
	}
	got, err := readRequest(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(req, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	twice := wireMagic + frame(tagScript, "true") + frame(tagSandbox, "a") + frame(tagSandbox, "b") + frame(tagEnd, "")
	if _, err := readRequest(strings.NewReader(twice)); err == nil || !strings.Contains(err.Error(), "two sandbox specs") {
		t.Errorf("two specs: %v, want an error", err)
	}
}

// sandboxedRunner returns a runner whose machine is rep (nil: this one), skipping when this
// machine cannot run the sandbox at all.
func sandboxedRunner(t *testing.T, weaken func(sandbox.Report) sandbox.Report) *Runner {
	t.Helper()
	rep := sandbox.Probe()
	if !rep.Root || !rep.Available(sandbox.LayerUID) || !rep.Available(sandbox.LayerLandlock) {
		t.Skip("needs root, namespaces and Landlock")
	}
	if weaken != nil {
		rep = weaken(rep)
	}
	return New(Config{SandboxReport: func() sandbox.Report { return rep }})
}

func TestRunSandboxed(t *testing.T) {
	r := sandboxedRunner(t, nil)
	ws, outside := t.TempDir(), t.TempDir()
	os.Chmod(outside, 0o777)
	script := `id -u; echo made > made; echo x > ` + outside + `/x || echo refused; echo $HOME | grep -q awf-tmp- && echo private-home`
	res, err := r.Run(t.Context(), ports.ProcessRequest{Script: script, Dir: ws, Policy: &workflow.Policy{}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "65534\nrefused\nprivate-home\n"; res.Stdout != want {
		t.Errorf("stdout = %q, want %q\nstderr: %s", res.Stdout, want, res.Stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "made")); err != nil {
		t.Errorf("the workspace was not writable: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("a write outside the workspace went through")
	}
}

func TestRunSandboxedAllowlist(t *testing.T) {
	r := sandboxedRunner(t, nil)
	res, err := r.Run(t.Context(), ports.ProcessRequest{Script: "cat /dev/null && echo ok; x=id; $x", Dir: t.TempDir(),
		Policy: &workflow.Policy{Commands: []string{"cat", "id"}}, Restrictions: &workflow.Restrictions{Commands: []string{"cat"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "ok\n" || res.ExitCode != 126 || !strings.Contains(res.Stderr, `command "id" refused (rule sandbox.commands)`) {
		t.Errorf("result = %+v; want ok, then id refused by the narrowed allowlist with 126", res)
	}
}

func TestRunSandboxedFailsClosed(t *testing.T) {
	r := sandboxedRunner(t, func(rep sandbox.Report) sandbox.Report { return rep.Without(sandbox.LayerLandlock) })
	ws := t.TempDir()
	_, err := r.Run(t.Context(), ports.ProcessRequest{Script: "echo ran > ran", Dir: ws,
		Policy: &workflow.Policy{Require: []string{"landlock"}}})
	if me, ok := errors.AsType[*sandbox.MissingError](err); !ok || me.Layer != sandbox.LayerLandlock || fault.KindOf(err) != fault.Denied {
		t.Fatalf("Run = %v, want a denied missing landlock", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Error("the script ran")
	}
}

func TestRunWithoutPolicyIsUnsandboxed(t *testing.T) {
	r := sandboxedRunner(t, nil)
	res, err := r.Run(t.Context(), ports.ProcessRequest{Script: "id -u", Dir: t.TempDir()})
	if err != nil || res.Stdout != "0\n" {
		t.Errorf("Run without a policy = %q, %v; want uid 0 as before", res.Stdout, err)
	}
}

// TestRunSandboxedHidesWhatEarlierCallsCreated: protected files that earlier calls of the run
// created are hidden from later ones, however deep, in a new directory or in an old one whose
// timestamps the creating call set back (the runner's protected-path index re-reads a
// directory only when it changed).
func TestRunSandboxedHidesWhatEarlierCallsCreated(t *testing.T) {
	r := sandboxedRunner(t, nil)
	r.cfg.Warm = true
	defer r.Close()
	ws := t.TempDir()
	run := func(script string) string {
		t.Helper()
		res, err := r.Run(t.Context(), ports.ProcessRequest{Script: script, Dir: ws, Policy: &workflow.Policy{}})
		if err != nil {
			t.Fatalf("Run(%q): %v", script, err)
		}
		return res.Stdout + res.Stderr
	}
	run(`mkdir -p new/deep/er && echo SECRET-1 > new/deep/er/.env && mkdir -p old/dir && echo x > old/dir/x`)
	if out := run(`cat new/deep/er/.env; echo more >> new/deep/er/.env || echo refused`); strings.Contains(out, "SECRET") || !strings.Contains(out, "refused") {
		t.Errorf("a .env the call before created was readable or writable: %q", out)
	}
	// The index trusts what it saw of a directory once its ctime is a second old.
	time.Sleep(1200 * time.Millisecond)
	run(`true`)
	run(`echo SECRET-2 > old/dir/.env && touch -d 2000-01-01 old/dir old`)
	if out := run(`cat old/dir/.env; ls -la old/dir`); strings.Contains(out, "SECRET") {
		t.Errorf("a .env created in an old directory, whose times were set back, was readable: %q", out)
	}
}

// TestRunWarmHelper: with Config.Warm, a Run finds the helper started when the one before
// ended; it still runs one request only, in the run's own directory and sandbox, with its
// own stdin, and Close stops the helper left waiting.
func TestRunWarmHelper(t *testing.T) {
	r := sandboxedRunner(t, nil)
	r.cfg.Warm = true
	defer r.Close()
	var pids []int
	r.onStart = func(pid int) { pids = append(pids, pid) }
	a, b := t.TempDir(), t.TempDir()
	if res, err := r.Run(t.Context(), ports.ProcessRequest{Script: "pwd; echo one > f", Dir: a, Policy: &workflow.Policy{}}); err != nil || res.Stdout != a+"\n" {
		t.Fatalf("first run = %q, %v; want %s", res.Stdout, err, a)
	}
	ahead := waitWarm(t, r)
	res, err := r.Run(t.Context(), ports.ProcessRequest{Script: "pwd; cat; cat " + a + "/f || echo unreadable", Stdin: "in\n", Dir: b,
		Policy: &workflow.Policy{}})
	if err != nil || res.Stdout != b+"\nin\nunreadable\n" {
		t.Errorf("second run = %q, %v (stderr %q); want its own directory, its stdin, and the first one's directory unreadable",
			res.Stdout, err, res.Stderr)
	}
	if len(pids) != 2 || pids[1] != ahead || pids[0] == pids[1] {
		t.Errorf("helpers %v, want the second to be the one started ahead (%d)", pids, ahead)
	}
	left := waitWarm(t, r)
	r.Close()
	if err := syscall.Kill(left, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the helper started ahead (%d) outlived Close: kill 0 = %v", left, err)
	}
	if res, err := r.Run(t.Context(), ports.ProcessRequest{Script: "echo after", Dir: a, Policy: &workflow.Policy{}}); err != nil || res.Stdout != "after\n" {
		t.Errorf("run after Close = %q, %v", res.Stdout, err)
	}
}

// waitWarm waits for a helper started ahead and returns the pid of the one the next Run takes.
func waitWarm(t *testing.T, r *Runner) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		r.warm.mu.Lock()
		ready := slices.Clone(r.warm.ready)
		r.warm.mu.Unlock()
		if len(ready) > 0 {
			return ready[0].pid
		}
	}
	t.Fatal("no helper was started ahead")
	return 0
}

// TestRunSandboxedLinkedWorkspace: a working directory reached through a symbolic link still
// has its protected files hidden, however deep.
func TestRunSandboxedLinkedWorkspace(t *testing.T) {
	r := sandboxedRunner(t, nil)
	real, base := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(real, "a/b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "a/b/.env"), []byte("SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "ws")
	if err := os.Symlink(real, ws); err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(t.Context(), ports.ProcessRequest{Script: "cat a/b/.env; cat " + real + "/a/b/.env", Dir: ws, Policy: &workflow.Policy{}})
	if err != nil || strings.Contains(res.Stdout, "SECRET") {
		t.Errorf("Run = %q, %v; a .env in a linked workspace was readable", res.Stdout+res.Stderr, err)
	}
}
