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
	"strings"
	"testing"
	"time"
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
