package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/state"
)

// gated waits, in its first step, for the file "go" to exist, and logs its second step: a run
// that stays live for as long as a test needs.
const gated = `name: gated
steps:
  - name: wait
    type: shell
    command: while [ ! -e go ]; do sleep 0.02; done
  - name: after
    type: shell
    command: echo after >> steps.log
`

// startAwf starts awf args in e's directory with its output in files out and out.err.
func (e *env) startAwf(out string, args ...string) *exec.Cmd {
	e.t.Helper()
	cmd := e.cmd(e.t.Context(), args...)
	stdout, err := os.Create(filepath.Join(e.dir, out))
	if err != nil {
		e.t.Fatal(err)
	}
	stderr, err := os.Create(filepath.Join(e.dir, out+".err"))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { stdout.Close(); stderr.Close() })
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	return cmd
}

// onlyRun returns the id of the one run in e's state directory, waiting for it to appear.
func (e *env) onlyRun() string {
	e.t.Helper()
	var files []string
	waitFor(e.t, func() bool {
		files, _ = filepath.Glob(filepath.Join(e.dir, ".awf", "runs", "*.yaml"))
		return len(files) == 1
	})
	return strings.TrimSuffix(filepath.Base(files[0]), ".yaml")
}

// exitOf waits for cmd and returns its exit code.
func exitOf(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// TestRunLockOneOwner: a resume during a live run is refused with the pid and host of the
// run's process; after kill -9, status and history say the process is gone, an immediate
// resume succeeds, and of two resumes started at once exactly one runs.
func TestRunLockOneOwner(t *testing.T) {
	e := newEnv(t)
	e.write("gated.yaml", gated)
	first := e.startAwf("first.out", "run", "gated.yaml")
	id := e.onlyRun()
	host, _ := os.Hostname()
	r := e.run("resume", id)
	if r.code != 1 || !strings.Contains(r.stderr, fmt.Sprintf("in use by process %d on host %s", first.Process.Pid, host)) {
		t.Fatalf("resume during the run: exit %d, %s; want exit 1 naming pid %d on %s", r.code, r.stderr, first.Process.Pid, host)
	}
	if r := e.mustRun(0, "status", id); !strings.Contains(r.stdout, "status:   running") {
		t.Errorf("status of a live run:\n%s", r.stdout)
	}
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	if s := e.state(id); s.Status != state.Running {
		t.Fatalf("state after kill -9 = %s, want running (nothing recorded the end)", s.Status)
	}
	if r := e.mustRun(0, "status", id); !strings.Contains(r.stdout, "status:   interrupted") || !strings.Contains(r.stdout, "process gone") {
		t.Errorf("status after kill -9 does not say the process is gone:\n%s", r.stdout)
	}
	if r := e.mustRun(0, "history"); !strings.Contains(r.stdout, "interrupted (process gone)") {
		t.Errorf("history after kill -9:\n%s", r.stdout)
	}

	a := e.startAwf("a.out", "resume", id)
	b := e.startAwf("b.out", "resume", id)
	// The winner waits for "go", which comes only once the loser has given up.
	var loser, winner *exec.Cmd
	var loserOut string
	waitFor(t, func() bool {
		for _, c := range []struct {
			cmd *exec.Cmd
			out string
		}{{a, "a.out.err"}, {b, "b.out.err"}} {
			if strings.Contains(e.read(c.out), "error:") {
				loser, loserOut = c.cmd, c.out
			}
		}
		return loser != nil
	})
	if code := exitOf(t, loser); code != 1 || !strings.Contains(e.read(loserOut), "is in use by process") {
		t.Errorf("losing resume: exit %d, %s", code, e.read(loserOut))
	}
	winner = a
	if loser == a {
		winner = b
	}
	e.write("go", "")
	if code := exitOf(t, winner); code != 0 {
		t.Fatalf("winning resume: exit %d", code)
	}
	if s := e.state(id); s.Status != state.Completed || s.Resumed != 1 {
		t.Errorf("state = %s, resumed %d; want completed, resumed once", s.Status, s.Resumed)
	}
	if log := e.read("steps.log"); log != "after\n" {
		t.Errorf("steps.log = %q, want the last step run once", log)
	}
	if _, err := os.Stat(filepath.Join(e.dir, ".awf", "runs", id+".lock")); !os.IsNotExist(err) {
		t.Errorf("lock file left after the run: %v", err)
	}
}

// TestClosedPipeDoesNotKillTheRun is `awf run ... 2>&1 | head -1`: once head has gone, the
// run's progress has nowhere to go, but the run goes on, completes and records it, exit 0.
func TestClosedPipeDoesNotKillTheRun(t *testing.T) {
	e := newEnv(t)
	e.write("gated.yaml", gated)
	script := fmt.Sprintf(`{ %q run gated.yaml 2>&1; echo $? > code; } | (head -1; exec 0<&-; touch go)`, awfBin)
	cmd := exec.CommandContext(t.Context(), "sh", "-c", script)
	cmd.Dir, cmd.Env = e.dir, e.environ()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sh: %v\n%s", err, out)
	}
	if code := strings.TrimSpace(e.read("code")); code != "0" {
		t.Fatalf("awf run | head -1: exit %s, want 0 (141 is death by SIGPIPE)", code)
	}
	if s := e.state(e.onlyRun()); s.Status != state.Completed {
		t.Errorf("state = %s, want completed", s.Status)
	}
	if log := e.read("steps.log"); log != "after\n" {
		t.Errorf("steps.log = %q", log)
	}
}

// TestResumeRefusesChangedWorkflow changes a workflow the run calls: resume names the file and
// refuses; --force resumes and the state records it.
func TestResumeRefusesChangedWorkflow(t *testing.T) {
	e := newEnv(t, "child.yaml")
	e.write("main.yaml", `name: main
steps:
  - name: shout
    type: workflow
    workflow: child.yaml
    inputs: {text: hello}
  - name: gate
    type: shell
    command: test -f fixed
`)
	res := e.runJSON(3, "run", "main.yaml")
	if res.Status != "failed" {
		t.Fatalf("first run: %+v", res)
	}
	s := e.state(res.RunID)
	child := filepath.Join(e.dir, "child.yaml")
	if len(s.Sources) != 2 || !strings.HasPrefix(s.Sources[child], "sha256:") {
		t.Fatalf("sources = %v, want main.yaml and child.yaml", s.Sources)
	}
	e.write("fixed", "")
	e.write("child.yaml", strings.Replace(e.read("child.yaml"), "tr a-z A-Z", "tr a-z A-Z; echo changed", 1))
	r := e.run("resume", res.RunID)
	if r.code != 1 || !strings.Contains(r.stderr, child+" (changed)") || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("resume of a changed workflow: exit %d, %s; want exit 1 naming %s", r.code, r.stderr, child)
	}
	if s := e.state(res.RunID); s.Status != state.Failed || s.Resumed != 0 {
		t.Errorf("refused resume changed the run: %s, resumed %d", s.Status, s.Resumed)
	}
	if res := e.runJSON(0, "resume", res.RunID, "--force"); res.Status != "completed" {
		t.Fatalf("resume --force: %+v", res)
	}
	s = e.state(res.RunID)
	if len(s.Overrides) != 1 || s.Overrides[0].Flag != "--force" || len(s.Overrides[0].Changed) != 1 ||
		s.Overrides[0].Changed[0] != child+" (changed)" {
		t.Errorf("overrides = %+v, want the forced resume recorded with the changed file", s.Overrides)
	}
	if s.Sources[child] == e.state(res.RunID).Overrides[0].Changed[0] || s.Sources[child] == "" {
		t.Errorf("sources after --force = %v", s.Sources)
	}
}

// TestDamagedState: a truncated state file is refused by resume and status and listed as
// unreadable by history, with an empty one; a corrupt journal line makes the run unreadable
// until resume --from-last-valid, which recovers from the line before and records it.
func TestDamagedState(t *testing.T) {
	e := newEnv(t, "fail_then_fix.yaml")
	res := e.runJSON(3, "run", "fail_then_fix.yaml")
	statePath := filepath.Join(".awf", "runs", res.RunID+".yaml")
	whole := e.read(filepath.Join(".awf", "runs", res.RunID+".yaml"))
	lines := strings.SplitAfter(whole, "\n")
	e.write(filepath.Join(".awf", "runs", res.RunID+".yaml"), strings.Join(lines[:len(lines)/2], ""))
	e.write(filepath.Join(".awf", "runs", "empty-run.yaml"), "")
	for _, args := range [][]string{{"resume", res.RunID}, {"status", res.RunID}} {
		if r := e.run(args...); r.code == 0 || !strings.Contains(r.stderr, "truncated") {
			t.Errorf("awf %v of a truncated state file: exit %d, %s", args, r.code, r.stderr)
		}
	}
	r := e.mustRun(0, "history")
	for _, want := range []string{"unreadable run " + res.RunID + ": " + statePath + ": the state file is truncated", "unreadable run empty-run: "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("history does not list %q:\n%s", want, r.stdout)
		}
	}
	os.Remove(filepath.Join(e.dir, ".awf", "runs", "empty-run.yaml"))
	e.write(filepath.Join(".awf", "runs", res.RunID+".yaml"), whole)

	journal := filepath.Join(".awf", "runs", res.RunID+".journal")
	// The journal continues the state file: its first line is the sequence number after the
	// file's journal_seq (the steps of a run are journaled while it runs).
	var seq int
	for line := range strings.Lines(whole) {
		if _, err := fmt.Sscanf(line, "journal_seq: %d", &seq); err == nil {
			break
		}
	}
	seq++
	good := fmt.Sprintf(`{"seq":%d,"updated_at":"2026-11-26T10:00:00Z","step":"first","record":{"status":"completed","output":"from the journal"}}`+"\n", seq)
	e.write(journal, good+"{garbage\n"+strings.Replace(good, fmt.Sprintf(`"seq":%d`, seq), fmt.Sprintf(`"seq":%d`, seq+2), 1))
	if r := e.run("resume", res.RunID); r.code == 0 || !strings.Contains(r.stderr, journal+":2:") {
		t.Fatalf("resume with a corrupt journal line: exit %d, %s; want an error naming line 2", r.code, r.stderr)
	}
	e.write("fixed", "")
	res2 := e.runJSON(0, "resume", res.RunID, "--from-last-valid")
	if res2.Status != "completed" || res2.Output != "from the journal+second" {
		t.Fatalf("resume --from-last-valid: %+v", res2)
	}
	s := e.state(res.RunID)
	if len(s.Overrides) != 1 || s.Overrides[0].Flag != "--from-last-valid" || !strings.Contains(s.Overrides[0].Dropped, journal+":2:") {
		t.Errorf("overrides = %+v, want the recovery recorded, naming line 2", s.Overrides)
	}
	if kept := e.read(journal + ".damaged"); !strings.Contains(kept, "{garbage") {
		t.Errorf("damaged journal not kept: %q", kept)
	}
}
