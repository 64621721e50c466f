//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/infrastructure/process"
)

// longWorkflow is a run long enough to continue as new several times with
// temporal_continue_after: 100 (about 15 steps an execution): shell steps reading earlier
// outputs, a sub-workflow (a child workflow) in the middle, and at the end a call that waits
// for a person's approval, sent to the run id.
func longWorkflow(steps int) string {
	var b strings.Builder
	b.WriteString("name: long\nsteps:\n")
	for i := 1; i <= steps; i++ {
		fmt.Fprintf(&b, "  - name: s%02d\n    type: shell\n    command: echo %d\n", i, i)
		if i == steps/2 {
			b.WriteString("  - name: child\n    type: workflow\n    workflow: sub.yaml\n    inputs: {n: \"{{states.s01.output}}\"}\n")
		}
	}
	fmt.Fprintf(&b, `  - name: save
    type: tool
    tool: write_file
    args:
      path: out.txt
      content: "{{states.s01.output}}-{{states.child.output}}-{{states.s%02d.output}}"
  - name: last
    type: shell
    command: cat out.txt
output: "{{states.last.output}}"
`, steps)
	return b.String()
}

const subWorkflow = `name: sub
inputs:
  - name: n
steps:
  - name: sub_one
    type: shell
    command: echo sub {{inputs.n}}
  - name: sub_two
    type: shell
    command: echo two
output: "{{states.sub_one.output}}"
`

// TestTemporalContinueAsNew: a run whose history passes temporal_continue_after continues as
// new several times between steps; its submitter streams every step (the sub-workflow's
// too) as a local run shows them, a call waiting for approval after the continuations is
// released by awf approve sent to the run id, and the exported state equals the local run's.
func TestTemporalContinueAsNew(t *testing.T) {
	addr := startTemporal(t)
	e := newEnv(t)
	e.write("long.yaml", longWorkflow(60))
	e.write("sub.yaml", subWorkflow)
	e.startWorker(addr)

	localRun := e.mustRun(0, "run", "long.yaml", "--yes")
	local := e.runJSON(0, "run", "long.yaml", "--yes")
	if local.Output != "1-sub 1-60" {
		t.Fatalf("local run: %+v", local)
	}
	e.write(".awf/config.yaml", "temporal_continue_after: 100\n")

	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	client := e.cmd(ctx, "run", "long.yaml", "--engine", "temporal", "--temporal", addr)
	stderr, err := client.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, progress lockedBuffer
	client.Stdout = &stdout
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	m := waitLineTee(t, stderr, &progress, regexp.MustCompile(`waits for approval: awf approve (\S+) (\S+)`))
	runID, callID := m[1], m[2]
	e.mustRun(0, "approve", runID, callID, "--temporal", addr)
	if err := client.Wait(); err != nil {
		t.Fatalf("awf run: %v\n%s\n%s", err, stdout.String(), progress.String())
	}
	if got, want := normalized(e.state(runID)), normalized(e.state(local.RunID)); got != want {
		t.Errorf("exported state differs from the local run's:\n%s\nlocal:\n%s", got, want)
	}
	if got, want := stepLines(progress.String()), stepLines(localRun.stderr); got != want {
		t.Errorf("progress differs from the local run's:\n%s\nlocal:\n%s", got, want)
	}
	if !strings.Contains(progress.String(), "✓ sub_one") {
		t.Errorf("the sub-workflow's steps are not in the progress:\n%s", progress.String())
	}
	runs := executions(t, addr, runID)
	if len(runs) < 4 {
		t.Errorf("the run has %d executions, want at least 4: it did not continue as new", len(runs))
	}
	if dir := os.Getenv("AWF_RECORD_HISTORIES"); dir != "" {
		recordHistories(t, addr, runID, runs, e.dir, dir)
	}
	st := e.mustRun(0, "status", "--engine", "temporal", "--temporal", addr, runID, "--output", "yaml")
	if !strings.Contains(st.stdout, "1-sub 1-60") {
		t.Errorf("awf status of the continued run:\n%s", st.stdout)
	}
}

// waitLineTee is waitLine that also keeps every line read, and the rest, in into.
func waitLineTee(t *testing.T, r interface{ Read([]byte) (int, error) }, into *lockedBuffer, re *regexp.Regexp) []string {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				_, _ = into.Write(buf[:n])
				_, _ = pw.Write(buf[:n])
			}
			if err != nil {
				_ = pw.Close()
				return
			}
		}
	}()
	return waitLine(t, pr, re)
}

// stepLines are the lines of a run's progress that start and end steps, without durations
// (the tool summaries of a tool step's call, which a workflow does not know, are left out).
func stepLines(progress string) string {
	dur := regexp.MustCompile(`\s*\(?[0-9.]+(µs|ms|s|m)\)?`)
	step := regexp.MustCompile(`^\s*(✓|✗|\S+: started)`)
	var out []string
	for _, line := range strings.Split(progress, "\n") {
		if step.MatchString(line) {
			out = append(out, dur.ReplaceAllString(line, ""))
		}
	}
	return strings.Join(out, "\n")
}

// executions lists the run ids of the workflow executions of run id on the server (one more
// with every continue-as-new), the latest first.
func executions(t *testing.T, addr, id string) []string {
	t.Helper()
	out, err := exec.Command(temporalCLI(t), "workflow", "list", "--address", addr, "--query", "WorkflowId='"+id+"'",
		"--output", "json").Output()
	if err != nil {
		t.Fatalf("temporal workflow list: %v", err)
	}
	var list []struct {
		Execution struct {
			RunID string `json:"runId"`
		} `json:"execution"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("temporal workflow list: %v\n%s", err, out)
	}
	var ids []string
	for _, x := range list {
		ids = append(ids, x.Execution.RunID)
	}
	return ids
}

// recordHistories writes the histories of the first execution of run id (it continues as
// new) and of its last into dir, with the payloads they reference, for the replay test
// (AWF_RECORD_HISTORIES=dir).
func recordHistories(t *testing.T, addr, id string, runs []string, workDir, dir string) {
	t.Helper()
	for name, run := range map[string]string{"continue-as-new-first.json": runs[len(runs)-1], "continue-as-new-last.json": runs[0]} {
		out, err := exec.Command(temporalCLI(t), "workflow", "show", "--address", addr, "-w", id, "-r", run, "--output", "json").Output()
		if err != nil {
			t.Fatalf("temporal workflow show: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.CopyFS(filepath.Join(dir, "payloads"), os.DirFS(filepath.Join(workDir, ".awf", "payloads"))); err != nil {
		t.Fatal(err)
	}
}

// layersProbe prints what the sandbox of a tool call enforces, then waits for the file go.
const layersProbe = `name: layers
steps:
  - name: probe
    type: tool
    tool: shell
    args:
      command: 'grep -E "^(Uid|NoNewPrivs|Seccomp):" /proc/self/status; echo pid $$; while [ ! -f go ]; do sleep 0.05; done'
output: "{{states.probe.output}}"
`

// TestTemporalWorkerSandboxHelper: a worker's sandboxed tool calls re-run awf (beside
// awf-temporal), not awf-temporal, as their helper, and the call runs under every layer a
// local run's call has (the same uid, no-new-privs, seccomp filter and pid namespace).
func TestTemporalWorkerSandboxHelper(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the layers and the worker's processes from /proc")
	}
	addr := startTemporal(t)
	e := newEnv(t)
	e.write("layers.yaml", layersProbe)
	e.write("go", "")
	local := e.runJSON(0, "run", "layers.yaml", "--yes")
	if !strings.Contains(local.Output, "Seccomp:") {
		t.Fatalf("local probe: %q", local.Output)
	}
	if err := os.Remove(filepath.Join(e.dir, "go")); err != nil {
		t.Fatal(err)
	}
	w := e.startWorker(addr)
	if !strings.Contains(w.log.String(), "sandbox helper: "+awfBin) {
		t.Errorf("the worker does not use %s as its helper:\n%s", awfBin, w.log.String())
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	client := e.cmd(ctx, "run", "layers.yaml", "--yes", "--engine", "temporal", "--temporal", addr, "--output", "json")
	var stdout, stderr lockedBuffer
	client.Stdout, client.Stderr = &stdout, &stderr
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	var helpers []string
	for range 1200 { // until the call's helper runs (the call waits for go)
		if helpers = helperPrograms(w.cmd.Process.Pid); len(helpers) > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.write("go", "")
	if err := client.Wait(); err != nil {
		t.Fatalf("awf run: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if len(helpers) == 0 {
		t.Fatal("no helper process under the worker while the call ran")
	}
	for _, h := range helpers {
		if h != awfBin {
			t.Errorf("a helper of the worker runs %s, want %s", h, awfBin)
		}
	}
	var res runResult
	if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil {
		t.Fatalf("run result %q: %v", stdout.String(), err)
	}
	if res.Output != local.Output {
		t.Errorf("the worker's call ran under\n%s\nthe local call under\n%s", res.Output, local.Output)
	}
}

// helperPrograms lists argv[0] of the sandbox helpers (process.HelperArg) among the
// descendants of pid.
func helperPrograms(pid int) []string {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	cmdlines := map[int][]string{}
	for _, ent := range entries {
		p, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after its closing paren.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		children[ppid] = append(children[ppid], p)
		cmd, _ := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline"))
		cmdlines[p] = strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
	}
	var out []string
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			queue = append(queue, c)
			if args := cmdlines[c]; len(args) > 1 && args[1] == process.HelperArg {
				out = append(out, args[0])
			}
		}
	}
	return out
}

// TestTemporalPayloadRetention: a worker started with temporal_payload_retention sweeps the
// payload store: the payloads of a finished run that nobody wrote or read for longer are
// removed, and a later run whose output is the same payload (content-addressed, shared)
// writes it again and completes.
func TestTemporalPayloadRetention(t *testing.T) {
	addr := startTemporal(t)
	e := newEnv(t)
	e.write("big.yaml", "name: big\nsteps:\n  - name: out\n    type: shell\n    command: head -c 40000 /dev/zero | tr '\\0' x\noutput: \"{{states.out.output}}\"\n")
	first := e.startWorker(addr)
	r := e.runJSON(0, "run", "big.yaml", "--engine", "temporal", "--temporal", addr)
	store := filepath.Join(e.dir, ".awf", "payloads")
	payloads := func() []string {
		var names []string
		_ = filepath.WalkDir(store, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				names = append(names, p)
			}
			return nil
		})
		return names
	}
	old := payloads()
	if len(old) == 0 || len(r.Output) != 40000 {
		t.Fatalf("the run left no payloads (%d) or its output is %d bytes", len(old), len(r.Output))
	}
	long := time.Now().Add(-2 * time.Hour)
	for _, p := range old {
		if err := os.Chtimes(p, long, long); err != nil {
			t.Fatal(err)
		}
	}
	first.kill()
	e.write(".awf/config.yaml", "temporal_payload_retention: 1h\n")
	e.startWorker(addr) // sweeps at start
	for i := 0; len(payloads()) > 0; i++ {
		if i == 200 {
			t.Fatalf("payloads unused for 2 h are still there with a retention of 1 h: %v", payloads())
		}
		time.Sleep(50 * time.Millisecond)
	}
	again := e.runJSON(0, "run", "big.yaml", "--engine", "temporal", "--temporal", addr)
	if again.Output != r.Output || len(payloads()) == 0 {
		t.Errorf("the run after the sweep: output of %d bytes, %d payloads", len(again.Output), len(payloads()))
	}
}
