package runner_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/loader"
)

// flaky counts calls per script and prints the script's text with "-out"; scripts named in
// failOnce fail on their first call only.
type flaky struct {
	mu       sync.Mutex
	calls    map[string]int
	failOnce map[string]bool
}

func newFlaky(failOnce ...string) *flaky {
	f := &flaky{calls: map[string]int{}, failOnce: map[string]bool{}}
	for _, s := range failOnce {
		f.failOnce[s] = true
	}
	return f
}

func (f *flaky) run(ctx context.Context, req ports.ProcessRequest) (ports.ProcessResult, error) {
	f.mu.Lock()
	f.calls[req.Script]++
	n := f.calls[req.Script]
	f.mu.Unlock()
	if f.failOnce[req.Script] && n == 1 {
		return exit(1, "first time")
	}
	return ok(req.Script + "-out\n")
}

func (f *flaky) counts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for k, v := range f.calls {
		out[k] = v
	}
	return out
}

// resumable returns an env whose loader gives w for its path.
func resumable(t *testing.T, w *workflow.Workflow) *env {
	e := newEnv(t)
	e.deps.Loader = loaderFunc(func(path string) (*workflow.Workflow, error) {
		if path != w.Path {
			t.Errorf("Load(%q), want %q", path, w.Path)
		}
		return w, nil
	})
	return e
}

func TestResumeSkipsDoneSteps(t *testing.T) {
	skipped := shell("never", "never")
	skipped.When = "false"
	w := wf(shell("a", "a"), skipped, shell("b", "b"), shell("c", "c {{ states.a.output }} {{ states.never.status }}"))
	e := resumable(t, w)
	f := newFlaky("b")
	e.respond(f.run)
	r := e.runner()
	first, err := r.Run(t.Context(), runner.Request{Workflow: w, WorkDir: "/work"})
	if err == nil || first.Status != state.Failed {
		t.Fatalf("first run = %v, %s; want b to fail", err, first.Status)
	}
	run, err := r.Resume(t.Context(), first.ID)
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if run.ID != first.ID || run.Status != state.Completed || run.Resumed != 1 || run.Error != "" || run.WorkDir != "/work" {
		t.Errorf("resumed run = id %s status %s resumed %d error %q dir %q; want same id, completed, 1, no error, /work",
			run.ID, run.Status, run.Resumed, run.Error, run.WorkDir)
	}
	if got := f.counts(); len(got) != 3 || got["a"] != 1 || got["b"] != 2 {
		t.Errorf("process calls = %v, want a once, b twice, c once, never not at all", got)
	}
	reqs := e.proc.Requests()
	if got := varValues(reqs[len(reqs)-1]); !cmp.Equal(got, []string{"a-out", "skipped"}) {
		t.Errorf("c saw %q, want a's output from the first run and never skipped", got)
	}
	if diff := cmp.Diff(map[string]state.Status{"a": state.Completed, "never": state.Skipped, "b": state.Completed, "c": state.Completed}, statuses(run)); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if e.runCount() != 1 {
		t.Errorf("runs saved = %d, want 1: resume keeps the state file", e.runCount())
	}
	var started []string
	for _, ev := range e.events.Events() {
		if ev.Kind == ports.RunStarted {
			started = append(started, ev.Message)
		}
	}
	if !cmp.Equal(started, []string{"", "resumed"}) {
		t.Errorf("run_started messages = %q, want a fresh start then a resume", started)
	}
}

func TestResumeRefuses(t *testing.T) {
	w := wf(shell("a", "a"))
	e := resumable(t, w)
	r := e.runner()
	if _, err := r.Run(t.Context(), runner.Request{Workflow: w}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	tests := []struct {
		id   string
		want string
	}{
		{id: "id-1", want: "run id-1 already completed: nothing to resume"},
		{id: "id-9", want: `resume id-9: no run "id-9" in memory`},
	}
	for _, tc := range tests {
		_, err := r.Resume(t.Context(), tc.id)
		if err == nil || err.Error() != tc.want || fault.KindOf(err) != fault.Usage {
			t.Errorf("Resume(%q) = %v, want usage error %q", tc.id, err, tc.want)
		}
	}
}

func TestResumeAfterInterrupt(t *testing.T) {
	w := wf(shell("a", "a"), shell("b", "b"), shell("c", "c"))
	e := resumable(t, w)
	ctx, cancel := context.WithCancel(t.Context())
	var mu sync.Mutex
	calls := map[string]int{}
	e.respond(func(c context.Context, req ports.ProcessRequest) (ports.ProcessResult, error) {
		mu.Lock()
		calls[req.Script]++
		n := calls[req.Script]
		mu.Unlock()
		if req.Script == "b" && n == 1 {
			cancel()
			<-c.Done()
			return ports.ProcessResult{}, fault.New(fault.Execution, "killed")
		}
		return ok("")
	})
	r := e.runner()
	first, err := r.Run(ctx, runner.Request{Workflow: w})
	if first.Status != state.Interrupted {
		t.Fatalf("first run = %v, %s; want interrupted", err, first.Status)
	}
	run, err := r.Resume(t.Context(), first.ID)
	if err != nil || run.Status != state.Completed {
		t.Fatalf("Resume = %v, %s; want completed", err, run.Status)
	}
	if diff := cmp.Diff(map[string]int{"a": 1, "b": 2, "c": 1}, calls); diff != "" {
		t.Errorf("process calls (-want +got):\n%s", diff)
	}
}

func TestResumeParallelKeepsCompletedChildren(t *testing.T) {
	w := wf(par("p", false, 0, shell("a", "a"), shell("b", "b")), shell("after", "after"))
	e := resumable(t, w)
	f := newFlaky("b")
	e.respond(f.run)
	r := e.runner()
	first, err := r.Run(t.Context(), runner.Request{Workflow: w})
	if err == nil {
		t.Fatalf("first run succeeded, want b to fail")
	}
	run, err := r.Resume(t.Context(), first.ID)
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if diff := cmp.Diff(map[string]int{"a": 1, "b": 2, "after": 1}, f.counts()); diff != "" {
		t.Errorf("process calls (-want +got):\n%s", diff)
	}
	if got := run.States["p"].Output; got != `{"a":"a-out","b":"b-out"}` {
		t.Errorf("p output = %s, want both children", got)
	}
}

func TestResumeContinuesSubRun(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"parent.yaml": "name: parent\nsteps:\n  - name: call\n    workflow: child.yaml\n  - name: after\n    command: after\n",
		"child.yaml":  "name: child\nsteps:\n  - name: x\n    command: x\n  - name: y\n    command: y\noutput: \"{{ states.x.output }}\"\n",
	})
	e := newEnv(t)
	e.deps.Loader = loader.New()
	f := newFlaky("y")
	e.respond(f.run)
	first, err := loadRun(t, e, filepath.Join(dir, "parent.yaml"), nil)
	if err == nil {
		t.Fatalf("first run succeeded, want y to fail")
	}
	run, err := e.runner().Resume(t.Context(), first.ID)
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if diff := cmp.Diff(map[string]int{"x": 1, "y": 2, "after": 1}, f.counts()); diff != "" {
		t.Errorf("process calls (-want +got):\n%s", diff)
	}
	child := e.saved("id-2")
	if child.Status != state.Completed || child.Resumed != 1 || child.Parent != first.ID {
		t.Errorf("child = %s resumed %d parent %s; want the first child run completed on resume", child.Status, child.Resumed, child.Parent)
	}
	if run.States["call"].Output != "x-out" || run.States["call"].Vars["sub_run"] != "id-2" {
		t.Errorf("call = %+v, want the child's output and the same sub_run", run.States["call"])
	}
	if n := e.runCount(); n != 2 {
		t.Errorf("runs saved = %d, want 2: no new child run", n)
	}
}

// TestResumeOwnsTheRun: a run another owner holds is not resumed, and nothing is saved; a
// run is owned while it runs.
func TestResumeOwnsTheRun(t *testing.T) {
	w := wf(shell("a", "a"), shell("b", "b"))
	e := resumable(t, w)
	f := newFlaky("b")
	e.respond(f.run)
	r := e.runner()
	first, _ := r.Run(t.Context(), runner.Request{Workflow: w})
	if _, owned := e.store.Owner(first.ID); owned {
		t.Fatal("a finished run is still owned")
	}
	unlock, err := e.store.Lock(t.Context(), first.ID)
	if err != nil {
		t.Fatal(err)
	}
	saves := len(e.store.History(first.ID))
	_, err = r.Resume(t.Context(), first.ID)
	var busy *ports.RunBusyError
	if !errors.As(err, &busy) || fault.KindOf(err) != fault.Usage {
		t.Fatalf("Resume of an owned run = %v, want a *ports.RunBusyError", err)
	}
	if n := len(e.store.History(first.ID)); n != saves || f.counts()["b"] != 1 {
		t.Errorf("the refused resume saved %d times and ran b %d times", n-saves, f.counts()["b"]-1)
	}
	unlock()
	if run, err := r.Resume(t.Context(), first.ID); err != nil || run.Status != state.Completed {
		t.Errorf("Resume after unlock = %v, %v", run.Status, err)
	}
}

// TestResumeChangedSources: changed files refuse the resume, naming them; Force resumes,
// records the override and the new digests.
func TestResumeChangedSources(t *testing.T) {
	w := wf(shell("a", "a"), shell("b", "b"))
	e := resumable(t, w)
	e.respond(newFlaky("b").run)
	r := e.runner()
	was := map[string]string{"/w/main.yaml": "sha256:1", "/w/child.yaml": "sha256:2"}
	first, _ := r.Run(t.Context(), runner.Request{Workflow: w, Sources: was})
	if got := e.saved(first.ID).Sources; !cmp.Equal(got, was) {
		t.Fatalf("sources saved = %v, want %v", got, was)
	}
	now := map[string]string{"/w/main.yaml": "sha256:1", "/w/child.yaml": state.SourceMissing, "/w/x.tool": "sha256:3"}
	_, err := r.ResumeWith(t.Context(), first.ID, runner.ResumeOptions{Sources: now})
	if fault.KindOf(err) != fault.Usage || !strings.Contains(err.Error(), "/w/child.yaml (deleted), /w/x.tool (added)") {
		t.Fatalf("ResumeWith changed sources = %v, want a usage error listing them", err)
	}
	run, err := r.ResumeWith(t.Context(), first.ID, runner.ResumeOptions{Sources: now, Force: true})
	if err != nil || run.Status != state.Completed {
		t.Fatalf("ResumeWith Force = %v, %v", run.Status, err)
	}
	saved := e.saved(first.ID)
	want := []state.Override{{At: saved.Overrides[0].At, Flag: state.ForceFlag, Changed: []string{"/w/child.yaml (deleted)", "/w/x.tool (added)"}}}
	if d := cmp.Diff(want, saved.Overrides); d != "" || !cmp.Equal(saved.Sources, now) {
		t.Errorf("overrides (-want +got):\n%s\nsources = %v", d, saved.Sources)
	}
}
