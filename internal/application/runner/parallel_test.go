package runner_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

func par(name string, failFast bool, limit int, children ...workflow.Step) workflow.Step {
	return workflow.Step{Name: name, Type: workflow.StepParallel,
		Parallel: &workflow.ParallelStep{Steps: children, MaxConcurrency: limit, FailFast: failFast}}
}

// scripted answers "a" and "b" with output, "fail-*" with exit 1, and "block" by waiting
// for ctx to end, as a killed process does.
func scripted(ctx context.Context, req ports.ProcessRequest) (ports.ProcessResult, error) {
	switch req.Script {
	case "block":
		<-ctx.Done()
		return ports.ProcessResult{}, fault.New(fault.Execution, "killed: %w", ctx.Err())
	case "fail-a":
		return exit(1, "boom")
	case "fail-b":
		return exit(1, "bang")
	}
	return ok(req.Script + "-out\n")
}

func TestParallel(t *testing.T) {
	lenient := shell("a", "fail-a")
	lenient.ContinueOnError = true
	tests := []struct {
		name       string
		step       workflow.Step
		want       map[string]state.Status
		wantOutput string
		wantErr    string
		wantChild  map[string]string // child -> error
	}{{
		name:       "all complete",
		step:       par("p", true, 0, shell("a", "a"), shell("b", "b")),
		want:       map[string]state.Status{"p": state.Completed, "a": state.Completed, "b": state.Completed, "next": state.Completed},
		wantOutput: `{"a":"a-out","b":"b-out"}`,
	}, {
		name: "fail fast interrupts running siblings",
		// b comes first so that it has started (and blocks) whenever a fails.
		step:      par("p", true, 0, shell("b", "block"), shell("a", "fail-a")),
		want:      map[string]state.Status{"p": state.Failed, "a": state.Failed, "b": state.Interrupted},
		wantErr:   `step "p": step "a": exit status 1: boom`,
		wantChild: map[string]string{"a": "exit status 1: boom", "b": `interrupted: step "a" failed`},
	}, {
		name:       "fail fast starts no more",
		step:       par("p", true, 1, shell("a", "fail-a"), shell("b", "b")),
		want:       map[string]state.Status{"p": state.Failed, "a": state.Failed},
		wantErr:    `step "p": step "a": exit status 1: boom`,
		wantOutput: `{}`,
	}, {
		name:       "wait all runs every child",
		step:       par("p", false, 1, shell("a", "fail-a"), shell("b", "b")),
		want:       map[string]state.Status{"p": state.Failed, "a": state.Failed, "b": state.Completed},
		wantErr:    `step "p": step "a": exit status 1: boom`,
		wantOutput: `{"b":"b-out"}`,
	}, {
		name:    "wait all reports every failure",
		step:    par("p", false, 0, shell("a", "fail-a"), shell("b", "fail-b")),
		want:    map[string]state.Status{"p": state.Failed, "a": state.Failed, "b": state.Failed},
		wantErr: `step "p": step "a": exit status 1: boom; step "b": exit status 1: bang`,
	}, {
		name:       "child with continue_on_error",
		step:       par("p", true, 0, lenient, shell("b", "b")),
		want:       map[string]state.Status{"p": state.Completed, "a": state.Failed, "b": state.Completed, "next": state.Completed},
		wantOutput: `{"b":"b-out"}`,
	}, {
		name: "nested",
		step: par("p", true, 0, par("inner", true, 0, shell("a", "a")), shell("b", "b")),
		want: map[string]state.Status{"p": state.Completed, "inner": state.Completed, "a": state.Completed,
			"b": state.Completed, "next": state.Completed},
		wantOutput: `{"b":"b-out","inner":"{\"a\":\"a-out\"}"}`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.respond(scripted)
			run, err := e.runner().Run(t.Context(), runner.Request{Workflow: wf(tc.step, shell("next", "next"))})
			if tc.wantErr == "" && err != nil {
				t.Fatalf("Run = %v, want success", err)
			}
			if tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
				t.Fatalf("Run error = %v, want %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, statuses(run)); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			if tc.wantOutput != "" && run.States["p"].Output != tc.wantOutput {
				t.Errorf("p output = %s, want %s", run.States["p"].Output, tc.wantOutput)
			}
			for child, want := range tc.wantChild {
				if st, ok := run.States[child]; !ok || st.Error != want {
					t.Errorf("%s = %+v, want error %q", child, st, want)
				}
			}
		})
	}
}

func TestParallelOutputInScope(t *testing.T) {
	e := newEnv(t)
	e.respond(scripted)
	_, err := e.runner().Run(t.Context(), runner.Request{Workflow: wf(
		par("p", true, 0, shell("a", "a"), shell("b", "b")),
		shell("next", "x {{ states.p.response.b }} {{ states.a.output }}"),
	)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	reqs := e.proc.Requests()
	if got := varValues(reqs[len(reqs)-1]); !cmp.Equal(got, []string{"a-out", "b-out"}) {
		t.Errorf("next saw %q, want the children's outputs", got)
	}
}

func TestMaxConcurrency(t *testing.T) {
	tests := []struct{ limit, want int }{{0, 6}, {1, 1}, {2, 2}, {4, 4}, {10, 6}}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("max_concurrency %d", tc.limit), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t)
				var mu sync.Mutex
				running, peak := 0, 0
				e.respond(func(context.Context, ports.ProcessRequest) (ports.ProcessResult, error) {
					mu.Lock()
					running++
					peak = max(peak, running)
					mu.Unlock()
					time.Sleep(time.Second) // fake time: every started child overlaps the others
					mu.Lock()
					running--
					mu.Unlock()
					return ok("")
				})
				var children []workflow.Step
				for i := range 6 {
					children = append(children, shell(fmt.Sprintf("c%d", i), "c"))
				}
				if _, err := e.runner().Run(t.Context(), runner.Request{Workflow: wf(par("p", true, tc.limit, children...))}); err != nil {
					t.Fatalf("Run: %v", err)
				}
				if peak != tc.want || e.proc.Calls() != 6 {
					t.Errorf("peak concurrency = %d over %d calls, want %d over 6", peak, e.proc.Calls(), tc.want)
				}
			})
		})
	}
}

func TestTimeout(t *testing.T) {
	tests := []struct {
		name        string
		step        workflow.Step
		wantErr     string
		wantElapsed time.Duration
		want        map[string]state.Status
	}{{
		name:        "shell step",
		step:        withTimeout(shell("slow", "block"), 5*time.Second, nil),
		wantErr:     `step "slow": timed out after 5s`,
		wantElapsed: 5 * time.Second,
		want:        map[string]state.Status{"slow": state.Failed},
	}, {
		name:        "each attempt has its own timeout",
		step:        withTimeout(shell("slow", "block"), 5*time.Second, &workflow.Retry{MaxAttempts: 3, Initial: time.Second}),
		wantErr:     `step "slow": timed out after 5s`,
		wantElapsed: 15 * time.Second, // the fake Sleep does not wait
		want:        map[string]state.Status{"slow": state.Failed},
	}, {
		name:        "parallel step interrupts its children",
		step:        withTimeout(par("p", true, 0, shell("a", "a"), shell("b", "block")), 2*time.Second, nil),
		wantErr:     `step "p": timed out after 2s`,
		wantElapsed: 2 * time.Second,
		want:        map[string]state.Status{"p": state.Failed, "a": state.Completed, "b": state.Interrupted},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t)
				e.respond(scripted)
				start := time.Now()
				run, err := e.runner().Run(t.Context(), runner.Request{Workflow: wf(tc.step)})
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Run error = %v, want %q", err, tc.wantErr)
				}
				if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || fault.KindOf(err) != fault.Execution {
					t.Errorf("error %v: want an execution error wrapping DeadlineExceeded only", err)
				}
				if elapsed := time.Since(start); elapsed != tc.wantElapsed {
					t.Errorf("fake time elapsed = %v, want %v", elapsed, tc.wantElapsed)
				}
				if run.Status != state.Failed {
					t.Errorf("run status = %s, want failed (a timeout is not an interruption)", run.Status)
				}
				if diff := cmp.Diff(tc.want, statuses(run)); diff != "" {
					t.Errorf("statuses (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func withTimeout(s workflow.Step, d time.Duration, r *workflow.Retry) workflow.Step {
	s.Timeout = d
	s.Retry = r
	return s
}

// TestParallelChildrenReadWhileSiblingsFinish runs under -race: children render templates
// over the states namespace while their siblings publish their results into it.
func TestParallelChildrenReadWhileSiblingsFinish(t *testing.T) {
	e := newEnv(t)
	e.respond(echo)
	var children []workflow.Step
	for i := range 8 {
		child := shell(fmt.Sprintf("c%d", i), fmt.Sprintf("c {{ states.before.output }}-%d", i))
		child.Shell.Env = map[string]string{}
		for j := range 20 { // many reads, so that reads and writes overlap
			child.Shell.Env[fmt.Sprint("V", j)] = "{{ states.before.output }}"
		}
		children = append(children, child)
	}
	run, err := e.runner().Run(t.Context(), runner.Request{Workflow: wf(
		shell("before", "x {{ inputs.v }}"), par("p", false, 0, children...), shell("after", "x {{ states.c7.output }}"),
	), Inputs: map[string]any{"v": "B"}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for i := range 8 {
		if got := run.States[fmt.Sprintf("c%d", i)].Output; got != "B" {
			t.Errorf("c%d output = %q, want B", i, got)
		}
	}
	if got := run.States["after"].Output; got != "B" {
		t.Errorf("after output = %q, want B", got)
	}
}

// TestParallelChildrenSeeTheStepsBeforeTheirBlock: a parallel block's children see the steps
// before the block and not their siblings, even one that ended before a child started (one
// at a time here), nor those of an inner block; the steps after the block see every child.
func TestParallelChildrenSeeTheStepsBeforeTheirBlock(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	seen := map[string]string{}
	e.respond(func(_ context.Context, req ports.ProcessRequest) (ports.ProcessResult, error) {
		mu.Lock()
		defer mu.Unlock()
		var vals []string
		for i := 1; req.Vars[fmt.Sprintf("AWF_T%d", i)] != ""; i++ {
			vals = append(vals, req.Vars[fmt.Sprintf("AWF_T%d", i)])
		}
		seen[req.Script[:2]] = strings.Join(vals, " ")
		return ok("x\n")
	})
	probe := func(name string) workflow.Step {
		return shell(name, name+`: {{ "b0" in states }} {{ "c1" in states }} {{ "i1" in states }} {{ "p" in states }}`)
	}
	w := wf(shell("b0", "b0"),
		par("p", false, 1, shell("c1", "c1"), probe("c2"), par("inner", false, 1, shell("i1", "i1"), probe("i2"))),
		probe("af"))
	if _, err := e.runner().Run(t.Context(), runner.Request{Workflow: w}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"c2": "true false false false", // c1 ended before c2 started: a sibling still
		"i2": "true false false false", // the inner block's sibling neither
		"af": "true true true true",
	}
	for k, v := range want {
		if seen[k] != v {
			t.Errorf("%s ran %q, want %q", k, seen[k], v)
		}
	}
}
