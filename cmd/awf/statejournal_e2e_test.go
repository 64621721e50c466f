package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/state"
)

// journaledSteps is a workflow of quick steps, then one that waits for a file named go.
func journaledSteps(quick int) string {
	var b strings.Builder
	b.WriteString("name: journaled\nsteps:\n")
	for i := range quick {
		fmt.Fprintf(&b, "  - {name: s%03d, type: shell, command: \"echo %d\"}\n", i, i)
	}
	b.WriteString("  - {name: wait, type: shell, command: \"touch waiting; while [ ! -f go ]; do sleep 0.02; done; echo went\"}\n")
	return b.String()
}

// TestStepsJournaledUntilTheRunEnds checks, through the binary, that a run saves its steps in
// its journal while it goes on and writes its state file whole when it ends. Killed with
// SIGKILL in its last step, a run's state file alone does not have the steps that ended
// since the run started (they are in the journal), while awf status, which folds the journal
// in, shows every one; awf resume then finishes the run, after which the state
// file holds everything on its own and no journal is left.
func TestStepsJournaledUntilTheRunEnds(t *testing.T) {
	const quick = 40
	e := newEnv(t)
	e.write("journaled.yaml", journaledSteps(quick))
	cmd := e.startAwf("run.out", "run", "journaled.yaml", "--quiet")
	id := e.onlyRun()
	waitFor(t, func() bool { _, err := os.Stat(filepath.Join(e.dir, "waiting")); return err == nil })
	// The start of a step is saved once it has run for a while (200 ms).
	waitFor(t, func() bool { return strings.Contains(e.mustRun(0, "status", id).stdout, "wait") })
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	journal := filepath.Join(e.dir, ".awf", "runs", id+".journal")
	if fi, err := os.Stat(journal); err != nil || fi.Size() == 0 {
		t.Fatalf("journal of the killed run: %v, want the steps' saves in it", err)
	}
	if alone := e.state(id); alone.Status != state.Running || len(alone.States) >= quick {
		t.Errorf("state file alone: status %s with %d steps, want running with fewer than %d (the others journaled)",
			alone.Status, len(alone.States), quick)
	}
	r := e.mustRun(0, "status", id, "--output", "json")
	var s state.RunState
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatalf("status json: %v\n%s", err, r.stdout)
	}
	if len(s.Order) != quick+1 || s.Order[quick] != "wait" || s.States["wait"].Status != state.Running {
		t.Fatalf("status of the killed run: order %v, want the %d quick steps and wait, running", s.Order, quick)
	}
	for _, name := range s.Order[:quick] {
		if st := s.States[name]; st.Status != state.Completed || st.Output == "" {
			t.Errorf("status of the killed run: step %s %s with output %q, want completed", name, st.Status, st.Output)
		}
	}

	e.write("go", "")
	if res := e.runJSON(0, "resume", id); res.Status != "completed" {
		t.Fatalf("resume: %+v", res)
	}
	if _, err := os.Stat(journal); !os.IsNotExist(err) {
		t.Errorf("journal of the finished run: %v, want none", err)
	}
	alone := e.state(id)
	if alone.Status != state.Completed || len(alone.Order) != quick+1 || alone.States["wait"].Output != "went" {
		t.Errorf("state file of the finished run: status %s, order %v, wait %+v; want everything", alone.Status, alone.Order, alone.States["wait"])
	}
	for _, name := range alone.Order[:quick] {
		if st := alone.States[name]; st.Status != state.Completed || st.Output == "" {
			t.Errorf("state file of the finished run: step %s %s with output %q, want completed", name, st.Status, st.Output)
		}
	}
}

// TestParallelChildrenJournaled: the children of a parallel block are journaled too, several
// starting together (a child's start that was not saved yet goes in its sibling's write), not
// each end rewriting the state file. Killed while its last child waits, the run's state file
// alone lacks children that ended; awf status shows them all; resume finishes the block with
// every child's output.
func TestParallelChildrenJournaled(t *testing.T) {
	const quick = 40
	var b strings.Builder
	b.WriteString("name: fan\nsteps:\n  - name: first\n    type: shell\n    command: echo first\n")
	b.WriteString("  - name: fan\n    type: parallel\n    max_concurrency: 4\n    steps:\n")
	for i := range quick {
		fmt.Fprintf(&b, "      - {name: c%03d, type: shell, command: \"echo %d\"}\n", i, i)
	}
	b.WriteString("      - {name: wait, type: shell, command: \"touch waiting; while [ ! -f go ]; do sleep 0.02; done; echo went\"}\n")
	e := newEnv(t)
	e.write("fan.yaml", b.String())
	cmd := e.startAwf("run.out", "run", "fan.yaml", "--quiet")
	id := e.onlyRun()
	waitFor(t, func() bool { _, err := os.Stat(filepath.Join(e.dir, "waiting")); return err == nil })
	waitFor(t, func() bool {
		var s state.RunState
		r := e.mustRun(0, "status", id, "--output", "json")
		if json.Unmarshal([]byte(r.stdout), &s) != nil || s.States["wait"] == nil {
			return false
		}
		for i := range quick {
			if st := s.States[fmt.Sprintf("c%03d", i)]; st == nil || st.Status != state.Completed {
				return false
			}
		}
		return true
	})
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	if alone := e.state(id); len(alone.States) >= quick {
		t.Errorf("state file alone: %d steps, want fewer than the %d children (the others journaled)", len(alone.States), quick)
	}
	e.write("go", "")
	res := e.runJSON(0, "resume", id)
	if res.Status != "completed" {
		t.Fatalf("resume: %+v", res)
	}
	var outputs map[string]string
	if err := json.Unmarshal([]byte(e.state(id).States["fan"].Output), &outputs); err != nil || len(outputs) != quick+1 || outputs["wait"] != "went" || outputs["c007"] != "7" {
		t.Errorf("the block's output after resume: %v (%v), want every child's", outputs, err)
	}
}
