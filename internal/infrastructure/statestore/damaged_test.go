package statestore

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/state"
)

// savedSmallRun saves smallRun in a new directory and returns the directory, the store, the
// run and its state file.
func savedSmallRun(t *testing.T) (dir string, s *Store, run *state.RunState, data []byte) {
	t.Helper()
	dir = t.TempDir()
	s = newStore(t, dir)
	run = smallRun()
	if err := s.Save(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.Path(run.ID))
	if err != nil {
		t.Fatal(err)
	}
	return dir, s, run, data
}

// TestTruncatedStateFile cuts a state file at every line boundary: Load and List report it
// truncated, never a run with its last fields missing (finished 0001-01-01, steps to re-run).
func TestTruncatedStateFile(t *testing.T) {
	dir, s, run, data := savedSmallRun(t)
	lines := strings.SplitAfter(string(data), "\n")
	for n := 1; n < len(lines)-1; n++ {
		write(t, s.Path(run.ID), strings.Join(lines[:n], ""))
		if _, err := newStore(t, dir).Load(t.Context(), run.ID); err == nil || !strings.Contains(err.Error(), "truncated") {
			t.Fatalf("Load of the first %d lines = %v, want a truncation error", n, err)
		}
		list, err := newStore(t, dir).List(t.Context())
		if err != nil || len(list) != 1 || !strings.Contains(list[0].Unreadable, "truncated") {
			t.Fatalf("List of the first %d lines = %+v, %v; want the run unreadable: truncated", n, list, err)
		}
	}
	write(t, s.Path(run.ID), string(data))
	assertLoads(t, newStore(t, dir), run)
}

// TestStateFileOfEarlierVersion loads a state file without the header and end marker, as
// earlier versions wrote them.
func TestStateFileOfEarlierVersion(t *testing.T) {
	dir, s, run, data := savedSmallRun(t)
	old := strings.TrimSuffix(strings.TrimPrefix(string(data), stateHeader), stateEnd)
	write(t, s.Path(run.ID), old)
	assertLoads(t, newStore(t, dir), run)
	if list, err := newStore(t, dir).List(t.Context()); err != nil || len(list) != 1 || list[0].Unreadable != "" {
		t.Errorf("List = %+v, %v; want the run readable", list, err)
	}
	write(t, s.Path(run.ID), "")
	if _, err := newStore(t, dir).Load(t.Context(), run.ID); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("Load of an empty file = %v, want it called empty", err)
	}
}

// TestLoadValid damages the journal's second of three lines: Load fails naming it, LoadValid
// gives the run with the first line applied and says what it left out; the next Save keeps
// the damaged journal aside and the run loads cleanly again.
func TestLoadValid(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir)
	run := savedAgentRun(t, s, 1)
	var after1 *state.RunState
	for i := 1; i < 4; i++ {
		beginAgentCall(run.States["implement"], i)
		appendStep(t, s, run)
		if i == 1 {
			after1 = cloneRun(t, run)
		}
	}
	lines := journalLines(t, s, run.ID)
	p := s.journalPath(run.ID)
	damaged := lines[0] + "{garbage\n" + lines[2]
	write(t, p, damaged)
	if _, err := newStore(t, dir).Load(t.Context(), run.ID); err == nil || !strings.Contains(err.Error(), p+":2:") {
		t.Fatalf("Load = %v, want an error naming %s:2", err, p)
	}
	fresh := newStore(t, dir)
	got, dropped, err := fresh.LoadValid(t.Context(), run.ID)
	if err != nil {
		t.Fatalf("LoadValid: %v", err)
	}
	if !strings.Contains(dropped, p+":2:") || !strings.Contains(dropped, "left out") {
		t.Errorf("dropped = %q, want it to name %s:2 and say the rest was left out", dropped, p)
	}
	assertSame(t, got, after1)
	// The journal cannot be appended to before a Save: it ends with damaged lines.
	beginAgentCall(got.States["implement"], 2)
	if err := fresh.AppendStep(t.Context(), got, "implement"); err != nil {
		t.Fatal(err)
	}
	if kept, err := os.ReadFile(p + damagedExt); err != nil || string(kept) != damaged {
		t.Errorf("damaged journal kept as %q, %v; want the journal as it was", kept, err)
	}
	assertLoads(t, newStore(t, dir), got)
	if _, dropped, err := newStore(t, dir).LoadValid(t.Context(), run.ID); err != nil || dropped != "" {
		t.Errorf("LoadValid after the save = %q, %v; want nothing dropped", dropped, err)
	}
}

// TestLoadValidUnappliable checks that a line that parses but cannot be applied (a step the
// state file does not have) is left out whole, with those after it.
func TestLoadValidUnappliable(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir)
	run := savedAgentRun(t, s, 1)
	beginAgentCall(run.States["implement"], 1)
	appendStep(t, s, run)
	want := cloneRun(t, run)
	beginAgentCall(run.States["implement"], 2)
	appendStep(t, s, run)
	lines := journalLines(t, s, run.ID)
	write(t, s.journalPath(run.ID), lines[0]+strings.Replace(lines[1], `"step":"implement"`, `"step":"other"`, 1))
	got, dropped, err := newStore(t, dir).LoadValid(t.Context(), run.ID)
	if err != nil || !strings.Contains(dropped, `step "other" is not in the state file`) {
		t.Fatalf("LoadValid = %q, %v; want line 2 left out", dropped, err)
	}
	assertSame(t, got, want)
}

// TestFullDiskEndsTheRun: a run that ends when its state can no longer be written (a full
// disk) is not left claiming to run: the status is rewritten in place.
func TestFullDiskEndsTheRun(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir)
	run := smallRun()
	run.Status, run.FinishedAt = state.Running, nil
	if err := s.Save(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	s.failWrite = syscall.ENOSPC
	run.Step("logs").Status = state.Completed
	if err := s.Save(t.Context(), run); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Save on a full disk = %v, want ENOSPC", err)
	}
	if got, err := newStore(t, dir).Load(t.Context(), run.ID); err != nil || got.Status != state.Running {
		t.Fatalf("after a failed save of a running run: %v, %v; want running, untouched", got.Status, err)
	}
	end := run.StartedAt.Add(time.Minute).UTC()
	run.Status, run.FinishedAt = state.Failed, &end
	if err := s.Save(t.Context(), run); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("last Save on a full disk = %v, want ENOSPC", err)
	}
	got, err := newStore(t, dir).Load(t.Context(), run.ID)
	if err != nil || got.Status != state.Failed {
		t.Errorf("after the last save failed: %v, %v; want failed", got.Status, err)
	}
}
