package main

// Crash test of the flagship example under --replay (issue 13, item 8): kill -9 at random
// moments of the README's quick start, each followed by awf resume with the same cassette.

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/state"
)

// quickStartTrials is how many kill -9 moments the crash test tries.
const quickStartTrials = 30

// fastTests replaces the example's `go test ./...` with a short stand-in, so that 30 runs
// and their resumes take seconds on a CI machine: the model's turns come from the cassette,
// which does not compare tool output, and what is under test is what awf does around the
// calls.
const fastTests = `cd {{inputs.project_path}} && sleep 0.3 && echo "ok  	example.com/sample/src/strutil	0.002s"`

// quickStartEnv is a fresh copy of workflows/ with the stand-in test command.
func quickStartEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	copyWorkflows(t, filepath.Join("..", "..", "workflows"), filepath.Join(e.dir, "workflows"))
	wf := e.read("workflows/autonomous-coding.yaml")
	const real = `"cd {{inputs.project_path}} && go test ./..."`
	if !strings.Contains(wf, real) {
		t.Fatalf("workflows/autonomous-coding.yaml no longer runs %s: update fastTests", real)
	}
	e.write("workflows/autonomous-coding.yaml", strings.Replace(wf, real, "'"+fastTests+"'", 1))
	return e
}

// TestQuickStartKillThenResumeUnderReplay kills the quick start (under --replay) with SIGKILL
// at random moments, then resumes it with the same cassette: every resume completes, no call
// the state recorded as completed runs again, and each write happens once.
func TestQuickStartKillThenResumeUnderReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: 30 runs and resumes")
	}
	args := append(readmeQuickStart(t), "--quiet")
	cassette := args[slices.Index(args, "--replay")+1]

	// One run to the end measures how long a run lasts once its state exists, so that the
	// kills land inside it.
	e := quickStartEnv(t)
	cmd := e.cmd(t.Context(), args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return agentRunID(e) != "" })
	start := time.Now()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("uninterrupted run: %v", err)
	}
	length := time.Since(start)
	assertWriteIntents(t, e)
	seed := uint64(time.Now().UnixNano())
	t.Logf("an uninterrupted run lasts %s once its state exists; seed %d", length, seed)
	rnd := rand.New(rand.NewPCG(seed, 0))

	var resumed, settled int
	for i := range quickStartTrials {
		// Within the first 85% of the measured length: runs vary, and a kill after the end
		// tests nothing.
		at := time.Duration(rnd.Int64N(int64(length) * 85 / 100))
		r, s := killAndResume(t, args, cassette, at)
		if r {
			resumed++
		}
		settled += s
		if t.Failed() {
			t.Fatalf("trial %d (kill after %s, seed %d) failed", i, at, seed)
		}
	}
	t.Logf("%d trials: %d resumed (the others ended before the kill), %d calls cut off and settled", quickStartTrials, resumed, settled)
}

// killAndResume runs the quick start in a fresh copy, kills it after at (once its state
// exists), resumes it unless it had ended, and checks the outcome. It reports whether a resume
// ran and how many calls the kill cut off.
func killAndResume(t *testing.T, args []string, cassette string, at time.Duration) (bool, int) {
	t.Helper()
	e := quickStartEnv(t)
	cmd := e.cmd(t.Context(), args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	// The state exists once the run's first step has started (or it ended first).
	waitFor(t, func() bool {
		select {
		case <-exited:
			return true
		default:
			return agentRunID(e) != ""
		}
	})
	select {
	case <-exited:
	case <-time.After(at):
		cmd.Process.Kill()
		<-exited
	}
	stopOrphan(t, e)
	id := agentRunID(e)
	if id == "" {
		t.Fatalf("no run state after the kill")
	}
	before, ok := agentTryState(e, id)
	if !ok {
		t.Fatalf("the state of the killed run does not load")
	}
	done := map[string]bool{}
	cutOff := 0
	if st := before.States["implement_feature"]; st != nil {
		for _, c := range st.ToolCalls {
			if c.Result != nil {
				done[c.ID] = true
			} else if c.InFlight {
				cutOff++
			}
		}
	}
	auditBefore := len(agentAuditAll(e, id))
	ran := before.Status != state.Completed
	if ran {
		r := e.run("resume", id, "--replay", cassette, "--yes", "--quiet")
		if r.code != 0 {
			t.Errorf("resume: exit %d\n%s", r.code, r.stderr)
			return ran, cutOff
		}
	}
	s := e.state(id)
	st := agentStep(t, s, "implement_feature")
	if s.Status != state.Completed || !strings.Contains(st.Output, "Added `Reverse` to the strutil package") {
		t.Errorf("after resume: run %s, output %q", s.Status, st.Output)
	}
	for _, c := range st.ToolCalls {
		if c.Result == nil || !c.Result.Success || c.InFlight {
			t.Errorf("call %s (%s) after resume: %+v, want a success", c.ID, c.Tool, c.Result)
		}
	}
	all := agentAuditAll(e, id)
	for _, l := range all[auditBefore:] {
		if done[l.CallID] {
			t.Errorf("call %s (%s) was completed before the kill and has a new audit record %+v: it ran again", l.CallID, l.Tool, l)
		}
	}
	// A write takes effect once: each write_file call has one attempt that was not found,
	// by its digest, not to have happened. A kill after the call was recorded in flight but
	// before its started record leaves a rerun decision that closes no attempt: it cancels
	// nothing.
	writes := map[string]int{}
	open := map[string]bool{}
	for _, l := range all {
		if l.Tool != "write_file" {
			continue
		}
		switch {
		case l.Outcome == "started":
			writes[l.CallID]++
			open[l.CallID] = true
		case l.Recovery.Decision == state.RecoveryRerun:
			if open[l.CallID] {
				writes[l.CallID]--
			}
			open[l.CallID] = false
		default:
			open[l.CallID] = false
		}
	}
	for id, n := range writes {
		if n != 1 {
			t.Errorf("write_file call %s took effect %d times, want once", id, n)
		}
	}
	if len(writes) != 2 {
		t.Errorf("write_file calls in the audit log: %v, want 2", writes)
	}
	reverse := e.read("workflows/sample-project/src/strutil/reverse.go")
	if !strings.Contains(reverse, "func Reverse(s string) string") {
		t.Errorf("reverse.go = %q", reverse)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "workflows", "sample-project", "src", "strutil", "reverse_test.go")); err != nil {
		t.Errorf("reverse_test.go: %v", err)
	}
	return ran, cutOff
}

// assertWriteIntents checks what resume relies on in the local engine's state: every
// write_file call of the quick start records, before it runs, the digest of what it means to
// write, and that digest is the one of the file it wrote.
func assertWriteIntents(t *testing.T, e *env) {
	t.Helper()
	st := agentStep(t, e.state(agentRunID(e)), "implement_feature")
	writes := 0
	for _, c := range st.ToolCalls {
		if c.Tool != "write_file" {
			continue
		}
		writes++
		sum, _ := c.Intent["sha256"].(string)
		if sum == "" || c.Result == nil || len(c.Result.Changes) != 1 || c.Result.Changes[0].After != "sha256:"+sum {
			t.Errorf("write_file call %s: intent %v, result %+v; want the digest it wrote, recorded as its intent", c.ID, c.Intent, c.Result)
		}
	}
	if writes != 2 {
		t.Errorf("the quick start made %d write_file calls, want 2", writes)
	}
}
