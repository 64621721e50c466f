package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/awf-dev/awf/internal/domain/state"
)

// awfBin is the binary under test, built once by TestMain.
var awfBin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "awf-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	awfBin = filepath.Join(dir, "awf")
	args := []string{"build", "-o", awfBin}
	if os.Getenv("GOCOVERDIR") != "" {
		args = append(args, "-cover")
	}
	build := exec.Command("go", append(args, ".")...)
	// As make build and docs/ci.md build it: static, so that the container backend can use
	// it and the benchmarks measure the binary people run.
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build awf:", err)
		return 1
	}
	return m.Run()
}

// result is one awf process.
type result struct {
	stdout, stderr string
	code           int
}

// env is an isolated home for one test: its own HOME and config dir, no API keys, no CI.
type env struct {
	t    *testing.T
	dir  string // working directory
	home string // HOME when not dir/.home
}

func newEnv(t *testing.T, files ...string) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir()}
	for _, f := range files {
		e.copy(filepath.Join("..", "..", "testdata", "e2e", f), f)
	}
	return e
}

func (e *env) copy(src, dst string) {
	e.t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		e.t.Fatal(err)
	}
	e.write(dst, string(data))
}

func (e *env) write(name, content string) {
	e.t.Helper()
	p := filepath.Join(e.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) environ() []string {
	home := filepath.Join(e.dir, ".home")
	if e.home != "" {
		home = e.home
	}
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GOCOVERDIR=" + os.Getenv("GOCOVERDIR"),
		"LANG=C.UTF-8",
	}
}

func (e *env) cmd(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, awfBin, args...)
	cmd.Dir = e.dir
	cmd.Env = e.environ()
	return cmd
}

// run runs awf to completion with no terminal.
func (e *env) run(args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.t.Context(), 2*time.Minute)
	defer cancel()
	return e.capture(e.cmd(ctx, args...), args)
}

// capture runs cmd, an awf command built by e.cmd with args, to completion and returns its
// output and exit code. It fails the test when awf could not be run at all.
func (e *env) capture(cmd *exec.Cmd, args []string) result {
	e.t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		e.t.Fatalf("awf %v: %v", args, err)
	}
	return result{stdout.String(), stderr.String(), code}
}

func (e *env) mustRun(wantCode int, args ...string) result {
	e.t.Helper()
	return e.wantExit(e.run(args...), wantCode, args)
}

// wantExit fails the test, showing awf's output, when r (of awf args) did not exit with
// wantCode; it returns r.
func (e *env) wantExit(r result, wantCode int, args []string) result {
	e.t.Helper()
	if r.code != wantCode {
		e.t.Fatalf("awf %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, wantCode, r.stdout, r.stderr)
	}
	return r
}

// runJSON runs awf run --output json and decodes its result.
func (e *env) runJSON(wantCode int, args ...string) runResult {
	e.t.Helper()
	r := e.mustRun(wantCode, append(args, "--output", "json")...)
	var res runResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		e.t.Fatalf("stdout is not one JSON object: %v\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
	return res
}

type runResult struct {
	RunID     string            `json:"run_id"`
	Status    string            `json:"status"`
	StateFile string            `json:"state_file"`
	Output    string            `json:"output"`
	Error     jsonError         `json:"error"`
	Steps     map[string]string `json:"steps"`
}

// jsonError is the error member of a failed command's --output json object.
type jsonError struct {
	Kind     string `json:"kind"`
	Message  string `json:"message"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	ExitCode int    `json:"exit_code"`
}

// state reads a run's state file as the domain type; it fails the test if the file does not
// parse.
func (e *env) state(id string) *state.RunState {
	e.t.Helper()
	path := filepath.Join(e.dir, ".awf", "runs", id+".yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		e.t.Fatal(err)
	}
	var s state.RunState
	if err := yaml.Unmarshal(data, &s); err != nil {
		e.t.Fatalf("state file %s does not parse: %v", path, err)
	}
	return &s
}

// interruptSlow runs slow.yaml with --output json, interrupts it (SIGINT) in its second step
// and returns its env and result, failing the test unless awf exited 130 with one JSON object.
func interruptSlow(t *testing.T) (*env, runResult) {
	t.Helper()
	e := newEnv(t, "slow.yaml")
	cmd := e.cmd(t.Context(), "run", "slow.yaml", "--output", "json")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { b, _ := os.ReadFile(filepath.Join(e.dir, "progress.log")); return len(b) > 0 })
	time.Sleep(200 * time.Millisecond) // let the nap step start its child
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit = %v, want 130", err)
	}
	return e, oneJSONObject[runResult](t, stdout.String())
}

func (e *env) read(name string) string {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.dir, name))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(data)
}

func TestVersionAndHelp(t *testing.T) {
	e := newEnv(t)
	if r := e.mustRun(0, "--version"); !strings.HasPrefix(r.stdout, "awf ") {
		t.Errorf("--version = %q", r.stdout)
	}
	r := e.mustRun(0, "--help")
	for _, c := range []string{"run", "validate", "list", "status", "history", "resume", "init", "completion"} {
		if !strings.Contains(r.stdout, "  "+c+" ") {
			t.Errorf("--help lacks command %q", c)
		}
	}
	if r := e.mustRun(0, "completion", "bash"); !strings.Contains(r.stdout, "bash completion") {
		t.Errorf("completion bash printed %.80q", r.stdout)
	}
}

func TestEveryStepType(t *testing.T) {
	e := newEnv(t, "steps.yaml", "child.yaml")
	e.write("sub/.keep", "")
	res := e.runJSON(0, "run", "steps.yaml")
	if res.Status != "completed" {
		t.Fatalf("status %s: %s", res.Status, res.Error.Message)
	}
	if want := "hi e2e in sub / ABC / 7"; res.Output != want {
		t.Errorf("output = %q, want %q", res.Output, want)
	}
	wantSteps := map[string]string{"hello": "completed", "skipped": "skipped", "env_and_dir": "completed",
		"fan": "completed", "a": "completed", "b": "completed", "c": "completed", "child": "completed", "soft_fail": "failed"}
	for name, want := range wantSteps {
		if res.Steps[name] != want {
			t.Errorf("step %s: %s, want %s", name, res.Steps[name], want)
		}
	}
	s := e.state(res.RunID)
	if s.Status != state.Completed || s.Inputs["who"] != "e2e" {
		t.Errorf("state: status %s inputs %v", s.Status, s.Inputs)
	}
	if ec := s.States["soft_fail"].ExitCode; ec == nil || *ec != 7 {
		t.Errorf("soft_fail exit code = %v, want 7", ec)
	}
	if got := s.States["hello"].Output; strings.TrimSpace(got) != "hi e2e" {
		t.Errorf("hello output in state = %q", got)
	}
	if res.StateFile == "" || !strings.HasSuffix(res.StateFile, res.RunID+".yaml") {
		t.Errorf("state_file = %q", res.StateFile)
	}
}

func TestRetry(t *testing.T) {
	e := newEnv(t, "retry.yaml")
	res := e.runJSON(0, "run", "retry.yaml")
	if res.Output != "ok after 3" {
		t.Errorf("output = %q", res.Output)
	}
	if s := e.state(res.RunID).States["flaky"]; s.Attempts != 3 {
		t.Errorf("attempts = %d, want 3", s.Attempts)
	}
}

func TestResumeAfterFailure(t *testing.T) {
	e := newEnv(t, "fail_then_fix.yaml")
	res := e.runJSON(3, "run", "fail_then_fix.yaml")
	if res.Status != "failed" || res.Steps["first"] != "completed" || res.Steps["second"] != "failed" {
		t.Fatalf("first run: %+v", res)
	}
	if r := e.mustRun(0, "status", res.RunID); !strings.Contains(r.stdout, "not fixed yet") {
		t.Errorf("status does not show the failure:\n%s", r.stdout)
	}
	e.write("fixed", "")
	res2 := e.runJSON(0, "resume", res.RunID)
	if res2.RunID != res.RunID || res2.Status != "completed" || res2.Output != "first+second" {
		t.Errorf("resume: %+v", res2)
	}
	if n := strings.Count(e.read("first.log"), "run"); n != 1 {
		t.Errorf("first step ran %d times, want 1", n)
	}
	if r := e.run("resume", res.RunID); r.code != 1 || !strings.Contains(r.stderr, "already completed") {
		t.Errorf("resume of a completed run: exit %d, %s", r.code, r.stderr)
	}
}

func TestValidateReportsEveryErrorWithPosition(t *testing.T) {
	e := newEnv(t, "invalid.yaml")
	r := e.mustRun(2, "validate", "invalid.yaml")
	for _, want := range []string{
		`invalid.yaml:4:11:`, `"shel"`, `did you mean "shell"?`,
		`invalid.yaml:5:5:`, `"comand"`, `did you mean "command"?`,
		`invalid.yaml:6:`, `duplicate`,
		`"later"`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("validate output lacks %q:\n%s", want, r.stderr)
		}
	}
	r = e.mustRun(2, "validate", "invalid.yaml", "--output", "json")
	var out struct {
		Files []struct {
			Valid  bool
			Errors []struct {
				Line, Column int
				Message      string
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("validate json: %v\n%s", err, r.stdout)
	}
	if len(out.Files) != 1 || out.Files[0].Valid || len(out.Files[0].Errors) < 4 {
		t.Errorf("validate json = %+v", out)
	}
	// run refuses the same file with the same exit code.
	e.mustRun(2, "run", "invalid.yaml")
}

func TestExitCodes(t *testing.T) {
	e := newEnv(t, "steps.yaml", "child.yaml", "fail_then_fix.yaml", "invalid.yaml")
	e.write("required.yaml", "name: required\ninputs:\n  - {name: a, required: true}\n  - {name: b, type: integer, required: true}\nsteps:\n  - {name: s, type: shell, command: echo}\n")
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"success", []string{"validate", "steps.yaml"}, 0, ""},
		{"unknown flag", []string{"run", "--bogus", "steps.yaml"}, 1, "unknown flag"},
		{"missing file", []string{"run", "nope.yaml"}, 1, "nope.yaml"},
		{"no args", []string{"run"}, 1, "need a workflow file"},
		{"missing inputs named together", []string{"run", "required.yaml"}, 1, "a, b"},
		{"bad input type", []string{"run", "required.yaml", "-i", "a=x", "-i", "b=many"}, 1, "integer"},
		{"unknown input", []string{"run", "required.yaml", "-i", "a=x", "-i", "b=1", "-i", "c=2"}, 1, `"c"`},
		{"invalid workflow", []string{"run", "invalid.yaml"}, 2, "invalid.yaml:"},
		{"execution failed", []string{"run", "fail_then_fix.yaml"}, 3, "not fixed yet"},
		{"system error", []string{"run", "--state-dir", "/dev/null/runs", "steps.yaml"}, 4, "/dev/null"},
		{"unknown run", []string{"status", "nope"}, 1, "nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.run(tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
				t.Errorf("awf %v: exit %d, want %d; stderr lacks %q?\n%s", tc.args, r.code, tc.code, tc.msg, r.stderr)
			}
		})
	}
}

func TestTimeoutKillsTheStep(t *testing.T) {
	e := newEnv(t, "timeout.yaml")
	start := time.Now()
	res := e.runJSON(3, "run", "timeout.yaml")
	if !strings.Contains(res.Error.Message, "timed out") {
		t.Errorf("error = %q, want a timeout", res.Error.Message)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("the timed-out step was not killed (took %s)", time.Since(start))
	}
}

func TestInterruptSavesStateAndExits130(t *testing.T) {
	e, res := interruptSlow(t)
	if s := e.state(res.RunID); s.Status != state.Interrupted {
		t.Errorf("state status = %s, want interrupted", s.Status)
	}
	if strings.Contains(e.read("progress.log"), "two") {
		t.Error("a step after the interrupt ran")
	}
	res2 := e.runJSON(0, "resume", res.RunID)
	if res2.Status != "completed" || strings.Count(e.read("progress.log"), "one") != 1 {
		t.Errorf("resume after interrupt: %+v, log %q", res2, e.read("progress.log"))
	}
}

func TestLargeOutputFlowsToTheNextStep(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	e := newEnv(t, "big.yaml")
	res := e.runJSON(0, "run", "big.yaml")
	if res.Output != "10485760" {
		t.Fatalf("output = %q, want 10485760", res.Output)
	}
	info, err := os.Stat(filepath.Join(e.dir, ".awf", "runs", res.RunID+".yaml"))
	if err != nil || info.Size() > 64<<10 {
		t.Errorf("state file holds the big output (size %v, err %v)", info.Size(), err)
	}
	s := e.state(res.RunID)
	if s.States["produce"].OutputFile == "" {
		t.Errorf("big output not stored beside the state file: %+v", s.States["produce"])
	}
}

func TestHistoryAndStatus(t *testing.T) {
	e := newEnv(t, "fail_then_fix.yaml", "retry.yaml")
	failed := e.runJSON(3, "run", "fail_then_fix.yaml")
	ok := e.runJSON(0, "run", "retry.yaml")
	r := e.mustRun(0, "history", "--output", "json")
	var h struct {
		Runs []struct {
			RunID    string `json:"run_id"`
			Workflow string `json:"workflow"`
			Status   string `json:"status"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Runs) != 2 || h.Runs[0].RunID != ok.RunID || h.Runs[1].RunID != failed.RunID {
		t.Errorf("history not newest first: %+v", h.Runs)
	}
	r = e.mustRun(0, "history", "--status", "failed", "--output", "json")
	if err := json.Unmarshal([]byte(r.stdout), &h); err != nil || len(h.Runs) != 1 || h.Runs[0].Workflow != "fail-then-fix" {
		t.Errorf("history --status failed = %s", r.stdout)
	}
	r = e.mustRun(0, "status", ok.RunID, "--output", "json")
	var s state.RunState
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || s.ID != ok.RunID || s.States["flaky"] == nil {
		t.Errorf("status json: %v %s", err, r.stdout)
	}
	e.mustRun(1, "history", "--status", "bogus")
}

// TestHistoryFollowsAResume: a run that failed is listed as failed, then as completed once
// resumed, whether awf history takes it from the index of finished runs or reads its state
// file (index deleted, or damaged).
func TestHistoryFollowsAResume(t *testing.T) {
	e := newEnv(t, "fail_then_fix.yaml")
	failed := e.runJSON(3, "run", "fail_then_fix.yaml")
	status := func(when string) string {
		t.Helper()
		var h struct {
			Runs []struct {
				RunID  string `json:"run_id"`
				Status string `json:"status"`
			}
		}
		r := e.mustRun(0, "history", "--output", "json")
		if err := json.Unmarshal([]byte(r.stdout), &h); err != nil || len(h.Runs) != 1 || h.Runs[0].RunID != failed.RunID {
			t.Fatalf("%s: history = %s (%v)", when, r.stdout, err)
		}
		return h.Runs[0].Status
	}
	index := filepath.Join(".awf", "runs", ".summaries.jsonl")
	if e.read(index) == "" {
		t.Fatal("the failed run was not indexed")
	}
	if got := status("after the failure"); got != "failed" {
		t.Errorf("after the failure history says %s", got)
	}
	e.write("fixed", "")
	e.mustRun(0, "resume", failed.RunID[:8])
	if got := status("after the resume"); got != "completed" {
		t.Errorf("after the resume history says %s, want completed", got)
	}
	e.write(index, "not json\n"+e.read(index)[:20])
	if got := status("with a damaged index"); got != "completed" {
		t.Errorf("with a damaged index history says %s", got)
	}
	if err := os.Remove(filepath.Join(e.dir, index)); err != nil {
		t.Fatal(err)
	}
	if got := status("without the index"); got != "completed" {
		t.Errorf("without the index history says %s", got)
	}
}

func TestDryRunRunsNothing(t *testing.T) {
	e := newEnv(t, "fail_then_fix.yaml", "steps.yaml", "child.yaml")
	r := e.mustRun(0, "run", "steps.yaml", "--dry-run", "-i", "who=plan")
	for _, want := range []string{`echo "hi plan"`, "states.greeting.output", "dry run"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, r.stdout)
		}
	}
	e.mustRun(0, "run", "fail_then_fix.yaml", "--dry-run")
	if _, err := os.Stat(filepath.Join(e.dir, "first.log")); err == nil {
		t.Error("dry run executed a step")
	}
	if _, err := os.Stat(filepath.Join(e.dir, ".awf", "runs")); err == nil {
		t.Error("dry run wrote a state file")
	}
}

func TestInitAndList(t *testing.T) {
	e := newEnv(t)
	e.mustRun(0, "init")
	e.mustRun(1, "init")
	r := e.mustRun(0, "list", "--output", "json")
	if !strings.Contains(r.stdout, `"name": "hello"`) {
		t.Errorf("list after init: %s", r.stdout)
	}
	res := e.runJSON(0, "run", ".awf/workflows/hello.yaml", "-i", "name=init")
	if !strings.HasPrefix(res.Output, "Hello, init!") {
		t.Errorf("init workflow output = %q", res.Output)
	}
}

// TestCrashLeavesValidState kills awf with SIGKILL at random moments; every state file left
// behind must parse and awf resume must finish the run.
func TestCrashLeavesValidState(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	runs := 25
	for i := range runs {
		e := newEnv(t, "crash.yaml")
		cmd := e.cmd(t.Context(), "run", "crash.yaml", "--quiet")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(5+i*3) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		files, _ := filepath.Glob(filepath.Join(e.dir, ".awf", "runs", "*.yaml"))
		if len(files) == 0 {
			continue // killed before the first save
		}
		id := strings.TrimSuffix(filepath.Base(files[0]), ".yaml")
		s := e.state(id)
		if s.Status == state.Completed {
			continue
		}
		res := e.runJSON(0, "resume", id)
		if res.Status != "completed" {
			t.Fatalf("run %d: resume after kill: %+v", i, res)
		}
		log := e.read("steps.log")
		if !strings.HasSuffix(log, "10\n") {
			t.Errorf("run %d: steps.log = %q", i, log)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
