//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/awf-dev/awf/internal/domain/state"
)

// These tests run the temporal engine against a real Temporal server: the Temporal CLI's dev
// server (temporal server start-dev, on free ports, in memory), with workers that are
// processes of the real awf binary (handing over to awf-temporal, built beside it).

// temporalCLI finds the temporal program: on PATH, else where go install puts it. Without
// it the tests are skipped, unless AWF_INTEGRATION=require (CI) makes that a failure.
func temporalCLI(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: starts a Temporal dev server")
	}
	if p, err := exec.LookPath("temporal"); err == nil {
		return p
	}
	home, _ := os.UserHomeDir()
	for _, p := range []string{filepath.Join(os.Getenv("GOPATH"), "bin", "temporal"), filepath.Join(home, "go", "bin", "temporal")} {
		if info, err := os.Stat(p); err == nil && !info.IsDir() {
			return p
		}
	}
	msg := "the temporal CLI is not installed (go install github.com/temporalio/cli/cmd/temporal@v1.5.1): the temporal engine's integration tests need its dev server"
	if os.Getenv("AWF_INTEGRATION") == "require" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// buildAWFTemporal builds awf-temporal beside the awf under test, where awf finds it.
var buildAWFTemporal = sync.OnceValue(func() error {
	out, err := exec.Command("go", "build", "-o", filepath.Join(filepath.Dir(awfBin), "awf-temporal"), "./awf-temporal").CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build ./awf-temporal: %v\n%s", err, out)
	}
	return nil
})

// freePort returns a TCP port nobody listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startTemporal starts a dev server for one test and returns its HOST:PORT; the server is
// stopped when the test ends.
func startTemporal(t *testing.T) string {
	t.Helper()
	cli := temporalCLI(t)
	if err := buildAWFTemporal(); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	cmd := exec.Command(cli, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", strconv.Itoa(port),
		"--http-port", strconv.Itoa(freePort(t)), "--metrics-port", strconv.Itoa(freePort(t)),
		"--db-filename", "", "--log-level", "error")
	cmd.Dir = t.TempDir()
	log := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for range 600 {
		if strings.Contains(log.String(), "Server:") {
			return addr
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the Temporal dev server did not start:\n%s", log.String())
	return ""
}

// worker is one awf worker process.
type worker struct {
	cmd *exec.Cmd
	log *lockedBuffer
}

// startWorker starts `awf worker` in e's directory against addr and waits until it polls.
func (e *env) startWorker(addr string) *worker {
	e.t.Helper()
	cmd := exec.Command(awfBin, "worker", "--temporal", addr)
	cmd.Dir = e.dir
	cmd.Env = e.environ()
	w := &worker{cmd: cmd, log: &lockedBuffer{}}
	cmd.Stdout, cmd.Stderr = w.log, w.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	for range 600 {
		if strings.Contains(w.log.String(), "polling task queues") {
			return w
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Fatalf("awf worker did not start:\n%s", w.log.String())
	return nil
}

// kill ends the worker and everything it started at once, as a lost machine would.
func (w *worker) kill() {
	_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
	_ = w.cmd.Wait()
}

// lockedBuffer collects a process's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

const temporalDemo = `name: demo
inputs:
  - name: who
    default: world
steps:
  - name: hello
    type: shell
    command: echo hello {{inputs.who}}
  - name: both
    type: parallel
    steps:
      - name: a
        type: shell
        command: echo A
      - name: b
        type: shell
        command: echo B
  - name: save
    type: tool
    tool: write_file
    args:
      path: out.txt
      content: "{{states.hello.output}} {{states.a.output}}{{states.b.output}}"
  - name: read
    type: tool
    tool: read_file
    args:
      path: out.txt
output: "{{states.read.output}}"
`

// TestTemporalRunLikeLocal: a run on the temporal engine (shell steps, a parallel group,
// governed tool calls) reports, exits and records as the same run does locally; a failing
// step exits 3 on both.
func TestTemporalRunLikeLocal(t *testing.T) {
	addr := startTemporal(t)
	e := newEnv(t)
	e.write("demo.yaml", temporalDemo)
	e.write("fail.yaml", "name: failing\nsteps:\n  - name: one\n    type: shell\n    command: echo one\n  - name: two\n    type: shell\n    command: echo oops >&2; exit 3\n")
	e.startWorker(addr)

	local := e.runJSON(0, "run", "demo.yaml", "--yes", "-i", "who=you")
	if err := os.Remove(filepath.Join(e.dir, "out.txt")); err != nil {
		t.Fatal(err)
	}
	remote := e.runJSON(0, "run", "demo.yaml", "--yes", "-i", "who=you", "--engine", "temporal", "--temporal", addr)
	if remote.Output != "hello you AB" || remote.Output != local.Output || remote.Status != "completed" {
		t.Fatalf("temporal run: %+v\nlocal run: %+v", remote, local)
	}
	if want := fmt.Sprint(local.Steps); fmt.Sprint(remote.Steps) != want {
		t.Errorf("steps: %v, want %v", remote.Steps, want)
	}
	if got, want := normalized(e.state(remote.RunID)), normalized(e.state(local.RunID)); got != want {
		t.Errorf("exported state differs from the local run's:\n%s\nlocal:\n%s", got, want)
	}
	failed := e.runJSON(3, "run", "fail.yaml", "--engine", "temporal", "--temporal", addr)
	if failed.Error.Kind != "execution" || !strings.Contains(failed.Error.Message, "exit status 3: oops") || failed.Steps["one"] != "completed" {
		t.Errorf("failed run: %+v", failed)
	}
	// --non-interactive: a call that asks for approval is denied at once, as locally (exit 5).
	denied := e.runJSON(5, "run", "demo.yaml", "--non-interactive", "--engine", "temporal", "--temporal", addr)
	if localDenied := e.runJSON(5, "run", "demo.yaml", "--non-interactive"); denied.Error.Message != localDenied.Error.Message {
		t.Errorf("denied run: %q, locally %q", denied.Error.Message, localDenied.Error.Message)
	}
	// The text report, the configuration choosing the engine and the server.
	e.write(".awf/config.yaml", "engine: temporal\ntemporal: "+addr+"\n")
	r := e.mustRun(0, "run", "demo.yaml", "--yes")
	if !strings.Contains(r.stdout, "hello world AB") || !strings.Contains(r.stderr, "✓ hello") {
		t.Errorf("text run:\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
}

// normalized is a run's state without what differs between two runs of one workflow: ids,
// times, durations and the state's own path.
func normalized(st *state.RunState) string {
	type call struct {
		Tool   string
		Args   map[string]any
		OK     bool
		Output string
		Flight bool
	}
	type step struct {
		Status   state.Status
		Output   string
		ExitCode *int
		Attempts int
		Calls    []call
		Stats    *state.ToolStats
	}
	steps := map[string]step{}
	for name, s := range st.States {
		var calls []call
		for _, c := range s.ToolCalls {
			cc := call{Tool: c.Tool, Args: c.Arguments, Flight: c.InFlight}
			if c.Result != nil {
				cc.OK, cc.Output = c.Result.Success, c.Result.Output
			}
			calls = append(calls, cc)
		}
		stats := s.ToolStats
		if stats != nil {
			cp := *stats
			cp.TotalDurationMs = 0
			stats = &cp
		}
		steps[name] = step{Status: s.Status, Output: s.Output, ExitCode: s.ExitCode, Attempts: s.Attempts, Calls: calls, Stats: stats}
	}
	b, _ := json.MarshalIndent(struct {
		Workflow string
		Status   state.Status
		Inputs   map[string]any
		Output   string
		Error    string
		Steps    map[string]step
	}{st.Workflow, st.Status, st.Inputs, st.Output, st.Error, steps}, "", "  ")
	return string(b)
}

// waitLine reads lines of r until one matches re, and returns its submatches.
func waitLine(t *testing.T, r io.Reader, re *regexp.Regexp) []string {
	t.Helper()
	sc := bufio.NewScanner(r)
	var seen []string
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, r) }()
			return m
		}
		seen = append(seen, sc.Text())
	}
	t.Fatalf("no line matches %s in:\n%s", re, strings.Join(seen, "\n"))
	return nil
}

// TestTemporalDurableApproval: a call that asks for approval waits on the server, costing no
// process; the worker is killed and another one started; awf approve releases the call, which
// runs once, and the audit log records who approved it and from which host. A decision that
// does not match the waiting call changes nothing; awf status shows what waits.
func TestTemporalDurableApproval(t *testing.T) {
	addr := startTemporal(t)
	e := newEnv(t)
	e.write("approve.yaml", "name: approve\nsteps:\n  - name: save\n    type: tool\n    tool: write_file\n    args:\n      path: out.txt\n      content: \"line\\x1b[31m\"\n")
	w := e.startWorker(addr)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	client := e.cmd(ctx, "run", "approve.yaml", "--engine", "temporal", "--temporal", addr, "--output", "json")
	stderr, err := client.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout lockedBuffer
	client.Stdout = &stdout
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	m := waitLine(t, stderr, regexp.MustCompile(`waits for approval: awf approve (\S+) (\S+)`))
	runID, callID := m[1], m[2]

	w.kill()
	e.startWorker(addr) // queries need a worker: the new one replays the run to answer
	st := e.mustRun(0, "status", "--engine", "temporal", "--temporal", addr, runID)
	if !strings.Contains(st.stdout, "waiting for approval") || !strings.Contains(st.stdout, `"content":"line\\u001b[31m"`) {
		t.Errorf("status does not show the waiting call with its escaped arguments:\n%s", st.stdout)
	}
	e.mustRun(0, "approve", runID, callID, "--temporal", addr)
	if err := client.Wait(); err != nil {
		t.Fatalf("awf run: %v\n%s", err, stdout.String())
	}
	var res runResult
	if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil || res.Status != "completed" {
		t.Fatalf("run result %q: %v", stdout.String(), err)
	}
	if data, err := os.ReadFile(filepath.Join(e.dir, "out.txt")); err != nil || string(data) != "line\x1b[31m" {
		t.Errorf("out.txt = %q, %v", data, err)
	}
	audit := e.mustRun(0, "audit", "--run", runID, "--output", "json")
	host, _ := os.Hostname()
	var records int
	for _, line := range strings.Split(strings.TrimSpace(audit.stdout), "\n") {
		var rec struct {
			CallID   string `json:"call_id"`
			Outcome  string `json:"outcome"`
			Approval struct {
				By, User, TTY string
			} `json:"approval"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if rec.CallID != callID {
			continue
		}
		records++
		if rec.Approval.By != "user" || rec.Approval.User == "" || rec.Approval.TTY != "host "+host || rec.Outcome != "ok" {
			t.Errorf("the audit record does not say who approved the call and from where: %s", line)
		}
	}
	if records != 1 {
		t.Errorf("call %s has %d audit records, want 1:\n%s", callID, records, audit.stdout)
	}
}

const temporalCrash = `name: crash
steps:
  - name: first
    type: shell
    command: echo one >> log.txt; echo first
  - name: save
    type: tool
    tool: write_file
    args:
      path: data.txt
      content: saved
  - name: slow
    type: shell
    command: |
      echo $$ > worker.pid
      while [ ! -f go ]; do sleep 0.05; done
      echo two >> log.txt; echo slow
  - name: last
    type: shell
    command: echo three >> log.txt; cat data.txt
output: "{{states.last.output}}"
`

// TestTemporalWorkerLostSharedWorkspace: the worker running a step of a multi-step run with a
// shared workspace is killed (-9, with everything it started); the other worker finishes the
// run. No completed step or call runs again, the step cut off runs once more, and the state
// exported from the workflow is the state of the same run made locally.
func TestTemporalWorkerLostSharedWorkspace(t *testing.T) {
	addr := startTemporal(t)
	e := newEnv(t)
	e.write("crash.yaml", temporalCrash)
	e.write("go", "")
	local := e.runJSON(0, "run", "crash.yaml", "--yes")
	for _, f := range []string{"go", "log.txt", "data.txt", "worker.pid"} {
		if err := os.Remove(filepath.Join(e.dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	workers := []*worker{e.startWorker(addr), e.startWorker(addr)}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	client := e.cmd(ctx, "run", "crash.yaml", "--yes", "--engine", "temporal", "--temporal", addr, "--shared-workspace", "--output", "json")
	var stdout, stderr lockedBuffer
	client.Stdout, client.Stderr = &stdout, &stderr
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	pid := 0
	for range 1200 {
		if b, err := os.ReadFile(filepath.Join(e.dir, "worker.pid")); err == nil {
			if pid, err = strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	group, err := syscall.Getpgid(pid)
	if err != nil {
		t.Fatalf("the worker running step slow (pid %d): %v", pid, err)
	}
	killed := false
	for _, w := range workers {
		if w.cmd.Process.Pid == group {
			w.kill()
			killed = true
		}
	}
	if !killed {
		t.Fatalf("process %d (group %d) is no worker of this test", pid, group)
	}
	e.write("go", "")
	if err := client.Wait(); err != nil {
		t.Fatalf("awf run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var res runResult
	if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil || res.Status != "completed" || res.Output != "saved" {
		t.Fatalf("run result %q: %v", stdout.String(), err)
	}
	if b, _ := os.ReadFile(filepath.Join(e.dir, "log.txt")); string(b) != "one\ntwo\nthree\n" {
		t.Errorf("log.txt = %q: a completed step ran again, or one never ran", b)
	}
	audit := e.mustRun(0, "audit", "--run", res.RunID, "--output", "json")
	if n := strings.Count(audit.stdout, `"tool":"write_file"`); n != 1 {
		t.Errorf("write_file has %d audit records, want 1:\n%s", n, audit.stdout)
	}
	exported := e.mustRun(0, "status", "--engine", "temporal", "--temporal", addr, res.RunID, "--output", "yaml")
	var st state.RunState
	if err := yaml.Unmarshal([]byte(exported.stdout), &st); err != nil {
		t.Fatalf("exported state: %v\n%s", err, exported.stdout)
	}
	if got, want := normalized(&st), normalized(e.state(local.RunID)); got != want {
		t.Errorf("exported state differs from the local run's:\n%s\nlocal:\n%s", got, want)
	}
}

// TestTemporalManyRuns: two workers, 100 runs submitted at once; every run completes, and
// both workers ran some. The submission rate is logged (docs/distributed.md has figures).
func TestTemporalManyRuns(t *testing.T) {
	addr := startTemporal(t)
	e := newEnv(t)
	e.write("small.yaml", "name: small\nsteps:\n  - name: who\n    type: shell\n    command: echo $$\n  - name: twice\n    type: shell\n    command: echo {{states.who.output}}{{states.who.output}}\noutput: \"{{states.who.output}}\"\n")
	workers := []*worker{e.startWorker(addr), e.startWorker(addr)}

	const runs = 100
	start := time.Now()
	ids := make([]string, runs)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 10)
	for i := range runs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			r := e.run("run", "small.yaml", "--engine", "temporal", "--temporal", addr, "--detach")
			if r.code != 0 {
				t.Errorf("submit run %d: exit %d\n%s", i, r.code, r.stderr)
			}
			ids[i] = strings.TrimSpace(r.stdout)
		})
	}
	wg.Wait()
	ran := map[string]int{}
	for _, id := range ids {
		r := e.mustRun(0, "status", "--engine", "temporal", "--temporal", addr, id, "--wait", "--output", "json")
		var v struct {
			Status string `json:"status"`
			Output string `json:"output"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.Status != "completed" {
			t.Fatalf("run %s: %v\n%s", id, err, r.stdout)
		}
		ran[v.Output]++
	}
	t.Logf("%d runs of 2 steps on 2 workers: %.1f runs/s, by worker pid: %v", runs, runs/time.Since(start).Seconds(), ran)
	if got := strings.Count(e.mustRun(0, "history", "--limit", "1000").stdout, " small "); got != runs {
		t.Errorf("awf history lists %d of the %d detached runs awf status --wait saw end", got, runs)
	}
	for _, w := range workers {
		found := false
		for pid := range ran {
			if g, err := syscall.Getpgid(atoi(pid)); err == nil && g == w.cmd.Process.Pid {
				found = true
			}
		}
		if !found {
			t.Errorf("worker %d ran none of the %d runs: %v", w.cmd.Process.Pid, runs, ran)
		}
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// TestTemporalAgentStep: an agent step on the temporal engine (model turns from a cassette,
// five read-only calls of one reply running concurrently on the worker, each governed and
// audited there) records what the same run records locally.
func TestTemporalAgentStep(t *testing.T) {
	addr := startTemporal(t)
	e := agentEnv(t, "parallel.yaml", "parallel.cassette.yaml")
	e.startWorker(addr)
	local := e.runJSON(0, "run", "agent/parallel.yaml", "--replay", "agent/parallel.cassette.yaml")
	for _, f := range []string{"a.started", "b.started"} {
		_ = os.Remove(filepath.Join(e.dir, f))
	}
	remote := e.runJSON(0, "run", "agent/parallel.yaml", "--replay", "agent/parallel.cassette.yaml", "--engine", "temporal", "--temporal", addr)
	if remote.Output != local.Output {
		t.Errorf("output = %q, want the local run's %q", remote.Output, local.Output)
	}
	if got, want := normalized(e.state(remote.RunID)), normalized(e.state(local.RunID)); got != want {
		t.Errorf("state differs from the local run's:\n%s\nlocal:\n%s", got, want)
	}
	if st := e.state(remote.RunID).States["survey"]; st == nil || st.Tokens == nil || st.Tokens.Total != 460 {
		t.Errorf("survey step = %+v, want the cassette's tokens", st)
	}
	if n := len(agentAudit(e, remote.RunID)); n != 5 {
		t.Errorf("%d audit records of the temporal run, want 5", n)
	}
}

// TestTemporalEveryStepType: every step type of the engine core (conditions, dir and env,
// a parallel group limited to 2 at a time, a sub-workflow, continue_on_error, an integer
// input) gives on the temporal engine what it gives locally.
func TestTemporalEveryStepType(t *testing.T) {
	addr := startTemporal(t)
	e := newEnv(t, "steps.yaml", "child.yaml")
	e.write("sub/.keep", "")
	e.startWorker(addr)
	local := e.runJSON(0, "run", "steps.yaml")
	remote := e.runJSON(0, "run", "steps.yaml", "--engine", "temporal", "--temporal", addr)
	if remote.Output != "hi e2e in sub / ABC / 7" || remote.Output != local.Output {
		t.Errorf("output = %q, local %q", remote.Output, local.Output)
	}
	if got, want := normalized(e.state(remote.RunID)), normalized(e.state(local.RunID)); got != want {
		t.Errorf("state differs from the local run's:\n%s\nlocal:\n%s", got, want)
	}
	// The sub-workflow's run is saved too, under its parent, as a local run saves it.
	h := e.mustRun(0, "history", "--output", "json")
	if n := strings.Count(h.stdout, `"parent": "`+remote.RunID+`"`); n != 1 {
		t.Errorf("%d runs under the temporal run, want its sub-workflow's:\n%s", n, h.stdout)
	}
}

// TestTemporalProgramMissing: without awf-temporal beside awf or on PATH, the commands of the
// temporal engine fail with a usage error naming it and how to build it; awf itself never
// links the Temporal SDK.
func TestTemporalProgramMissing(t *testing.T) {
	dir := t.TempDir()
	alone := filepath.Join(dir, "awf")
	data, err := os.ReadFile(awfBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, data, 0o755); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	e.write("hello.yaml", "name: hello\nsteps:\n  - name: hi\n    type: shell\n    command: echo hi\n")
	for _, args := range [][]string{{"worker"}, {"approve", "r", "c"}, {"run", "hello.yaml", "--engine", "temporal"}} {
		cmd := exec.Command(alone, args...)
		cmd.Dir = e.dir
		cmd.Env = append(e.environ()[1:], "PATH="+dir)
		r := e.capture(cmd, args)
		if r.code != 1 || !strings.Contains(r.stderr, "awf-temporal not found beside awf or on PATH") {
			t.Errorf("awf %v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	if out, err := exec.Command("go", "version", "-m", awfBin).Output(); err != nil || strings.Contains(string(out), "go.temporal.io") {
		t.Errorf("awf links the Temporal SDK (or go version -m failed: %v)", err)
	}
}

// TestTemporalWorkerLostInAgentStep: the worker running an agent step is killed (-9) while a
// call that is not idempotent runs, after two calls completed; the other worker continues the
// step (its loop is in the workflow, each call an activity): the completed calls are not run
// again, the one in flight is recorded as interrupted and goes back to the model as an error,
// as a local resume does.
func TestTemporalWorkerLostInAgentStep(t *testing.T) {
	addr := startTemporal(t)
	e := agentEnv(t, "resume.yaml", "resume.cassette.yaml")
	workers := []*worker{e.startWorker(addr), e.startWorker(addr)}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	client := e.cmd(ctx, "run", "agent/resume.yaml", "--replay", "agent/resume.cassette.yaml", "--engine", "temporal",
		"--temporal", addr, "--shared-workspace", "--output", "json")
	var stdout, stderr lockedBuffer
	client.Stdout, client.Stderr = &stdout, &stderr
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { _, err := os.Stat(filepath.Join(e.dir, "slow.pid")); return err == nil })
	var running *worker
	waitFor(t, func() bool { running = workerOfHelper(workers, "sleep"); return running != nil })
	running.kill()
	if err := client.Wait(); err != nil {
		t.Fatalf("awf run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var res runResult
	if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil || res.Status != "completed" {
		t.Fatalf("run result %q: %v\n%s", stdout.String(), err, stderr.String())
	}
	if b, _ := os.ReadFile(filepath.Join(e.dir, "calls.log")); string(b) != "a\nb\n" {
		t.Errorf("calls.log = %q, want each completed call once and the interrupted one not again", b)
	}
	calls := e.state(res.RunID).States["work"].ToolCalls
	if len(calls) != 3 || calls[2].Recovery == nil || calls[2].Recovery.Decision != state.RecoveryUnknown ||
		calls[2].Outcome != state.OutcomeUnknown || calls[2].Result == nil || calls[2].Result.Success {
		t.Errorf("tool calls = %+v, want the slow call settled as interrupted (result %+v)\n%s", calls, calls[len(calls)-1].Result, stderr.String())
	}
}

// workerOfHelper returns the worker whose tool helper (awf __awf-exec) runs a process whose
// command line holds what, or nil. Workers keep idle helpers too: only a busy one says which
// worker runs the call.
func workerOfHelper(workers []*worker, what string) *worker {
	entries, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	parent := func(pid string) string {
		stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
		if err != nil {
			return ""
		}
		// pid (comm) state ppid ...: comm may hold spaces, so count from its closing paren.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) < 2 {
			return ""
		}
		return fields[1]
	}
	for _, p := range entries {
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), what) {
			continue
		}
		helper := parent(filepath.Base(filepath.Dir(p)))
		if hb, err := os.ReadFile(filepath.Join("/proc", helper, "cmdline")); err != nil || !strings.Contains(string(hb), "__awf-exec") {
			continue
		}
		group, err := syscall.Getpgid(atoi(parent(helper)))
		if err != nil {
			continue
		}
		for _, w := range workers {
			if w.cmd.Process.Pid == group {
				return w
			}
		}
	}
	return nil
}

// TestTemporalCallsCarryTheFilesOnce: the run's files (its workflow and sub-workflows) reach
// the history once, in the call the worker asked them for, not with every tool call: before,
// each of a run's n tool calls and model turns carried them, n times the workflow's size.
// Read from the history the dev server kept, with the temporal CLI.
func TestTemporalCallsCarryTheFilesOnce(t *testing.T) {
	addr := startTemporal(t)
	e := newEnv(t)
	var wf strings.Builder
	wf.WriteString("name: many\n# " + strings.Repeat("padding of the workflow file ", 100) + "\nsteps:\n")
	const calls = 8
	for i := range calls {
		fmt.Fprintf(&wf, "  - {name: r%d, type: tool, tool: read_file, args: {path: many.yaml}}\n", i)
	}
	e.write("many.yaml", wf.String())
	e.startWorker(addr)
	run := e.runJSON(0, "run", "many.yaml", "--engine", "temporal", "--temporal", addr)
	out, err := exec.Command(temporalCLI(t), "workflow", "show", "--address", addr, "-w", run.RunID, "--output", "json").Output()
	if err != nil {
		t.Fatalf("temporal workflow show: %v", err)
	}
	var history struct {
		Events []struct {
			Scheduled *struct {
				ActivityType struct{ Name string }
				Input        struct{ Payloads []struct{ Data []byte } }
			} `json:"activityTaskScheduledEventAttributes"`
		}
	}
	if err := json.Unmarshal(out, &history); err != nil {
		t.Fatalf("history: %v", err)
	}
	tools, withFiles := 0, 0
	for _, ev := range history.Events {
		if ev.Scheduled == nil || ev.Scheduled.ActivityType.Name != "awf.tool" {
			continue
		}
		tools++
		var in struct {
			Run struct {
				FilesDigest string
				Files       map[string][]byte
			}
		}
		if err := json.Unmarshal(ev.Scheduled.Input.Payloads[0].Data, &in); err != nil {
			t.Fatalf("tool call input: %v", err)
		}
		if in.Run.FilesDigest == "" {
			t.Errorf("a tool call names the run's files by no digest")
		}
		if in.Run.Files != nil {
			withFiles++
		}
	}
	if tools != calls+1 || withFiles != 1 {
		t.Errorf("%d tool activities, %d of them with the run's files; want %d (a call again, with them, when the worker asked) and 1",
			tools, withFiles, calls+1)
	}
}
