package statestore

import (
	"bufio"
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/state"
)

// The crash test re-runs the test binary as a child that saves a growing run in a loop and
// reports each finished Save on stdout; the parent kills it with SIGKILL at a random moment,
// then checks that the run loads, is consistent and is no older than the last Save reported.
const (
	crashDirEnv   = "AWF_STATESTORE_CRASH_DIR"
	crashRunID    = "crash"
	crashKills    = 30
	crashMaxSteps = 30
	crashThresh   = 512
)

func TestCrashSafety(t *testing.T) {
	skipUnlessCrashTests(t)
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	acked, midWrite := 0, 0
	for kill := range crashKills {
		// The first child must save once; later ones may die while loading.
		acks := rng.IntN(8)
		if kill == 0 {
			acks++
		}
		// A Save takes milliseconds, mostly in fsync; a random delay after the last report
		// spreads the kills over all of its phases. The delay decides only where the kill
		// lands: what is checked afterwards holds whatever the delay.
		delay := time.Duration(rng.Int64N(int64(30 * time.Millisecond)))
		last := runChildUntilKilled(t, "TestCrashChild", dir, acks, delay)
		acked = max(acked, last)
		checkCrashRun(t, dir, acked, kill)
		if t.Failed() {
			return
		}
		if countTemp(t, dir) > 0 {
			midWrite++ // or left over from an earlier kill, if this child never saved
		}
	}
	t.Logf("kills that left a temporary file (landed in the middle of a write): %d of %d", midWrite, crashKills)
}

// skipUnlessCrashTests skips the crash tests in -short mode and where processes cannot be
// killed with SIGKILL.
func skipUnlessCrashTests(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts 30 processes")
	}
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("needs SIGKILL and subprocesses")
	}
}

// runChildUntilKilled starts a child, the test named child, waits for it to report acks Saves
// and for delay, kills it and returns the sequence number of the last Save it reported.
func runChildUntilKilled(t *testing.T, child, dir string, acks int, delay time.Duration) int {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+child+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	last := 0
	lines := bufio.NewScanner(out)
	for n := 0; n < acks && lines.Scan(); {
		seq, ok := strings.CutPrefix(lines.Text(), "saved ")
		if !ok {
			continue // the test framework's own output
		}
		last, _ = strconv.Atoi(seq)
		n++
	}
	time.Sleep(delay)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatalf("kill child: %v", err)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child ended before it was killed: %v", err)
	}
	return last
}

// checkCrashRun loads the run as a new process would and checks every output against the
// generation recorded with it.
func checkCrashRun(t *testing.T, dir string, acked, kill int) {
	t.Helper()
	s := newStore(t, dir, WithOutputThreshold(crashThresh))
	run, err := s.Load(t.Context(), crashRunID)
	if err != nil {
		t.Fatalf("after kill %d: Load: %v", kill, err)
	}
	if seq, _ := run.Inputs["seq"].(int); seq < acked {
		t.Errorf("after kill %d: the run is at save %d, but save %d was reported done", kill, seq, acked)
	}
	if err := crashConsistent(run); err != nil {
		t.Errorf("after kill %d: %v", kill, err)
	}
	list, err := s.List(t.Context())
	if err != nil || len(list) != 1 || list[0].Error != "" {
		t.Errorf("after kill %d: List() = %+v, %v; want the run", kill, list, err)
	}
}

// TestCrashChild is the child of TestCrashSafety; it does nothing in a normal test run.
func TestCrashChild(t *testing.T) {
	ctx := context.Background()
	s, run := crashChild(t, "TestCrashSafety", crashConsistent, func() *state.RunState {
		return &state.RunState{ID: crashRunID, Workflow: "crash", Status: state.Running, Inputs: map[string]any{"seq": 0}}
	})
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 1))
	for range 100000 {
		growCrashRun(run, rng)
		if err := s.Save(ctx, run); err != nil {
			t.Fatalf("child Save: %v", err)
		}
		if _, err := fmt.Printf("saved %d\n", run.Inputs["seq"]); err != nil {
			return // the parent is gone
		}
	}
}

// crashChild opens a crash test child's store and loads the run the children share, or starts
// it with fresh when there is none yet; the run loaded must be consistent. Outside a crash
// test (parent names it), it skips the test.
func crashChild(t *testing.T, parent string, consistent func(*state.RunState) error,
	fresh func() *state.RunState) (*Store, *state.RunState) {
	t.Helper()
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("runs as the child of " + parent)
	}
	s := newStore(t, dir, WithOutputThreshold(crashThresh))
	run, err := s.Load(context.Background(), crashRunID)
	switch {
	case fault.KindOf(err) == fault.Usage:
		run = fresh()
	case err != nil:
		t.Fatalf("child Load: %v", err)
	}
	if err := consistent(run); err != nil {
		t.Fatalf("child loaded an inconsistent run: %v", err)
	}
	return s, run
}

// growCrashRun adds a step, or gives an existing one a new generation of outputs, large or
// small by the hash of the step and generation.
func growCrashRun(run *state.RunState, rng *rand.Rand) {
	run.Inputs["seq"] = run.Inputs["seq"].(int) + 1
	name := fmt.Sprintf("step%02d", len(run.Order))
	if len(run.Order) >= crashMaxSteps || rng.IntN(3) == 0 && len(run.Order) > 0 {
		name = run.Order[rng.IntN(len(run.Order))]
	}
	st := run.Step(name)
	gen := 0
	if st.Vars != nil {
		gen, _ = strconv.Atoi(st.Vars["gen"]) //nolint:errcheck // written by this test
		gen++
	}
	st.Status = state.Completed
	st.Vars = map[string]string{"gen": strconv.Itoa(gen)}
	st.Output = crashOutput(name, gen)
	st.ToolCalls = []state.ToolCallRecord{{ID: "call", Tool: "shell",
		Result: &state.ToolCallResult{Success: true, Output: crashOutput(name+"/call", gen)}}}
}

// crashOutput is the output of a step at a generation: 20 bytes to 30 KB, mostly more than
// crashThresh.
func crashOutput(name string, gen int) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%d", name, gen)
	line := fmt.Sprintf("%s generation %d\n", name, gen)
	return strings.Repeat(line, 1+int(h.Sum32()%1000))
}

func crashConsistent(run *state.RunState) error {
	if len(run.Order) != len(run.States) {
		return fmt.Errorf("%d steps in order, %d recorded", len(run.Order), len(run.States))
	}
	for _, name := range run.Order {
		st := run.States[name]
		gen, err := strconv.Atoi(st.Vars["gen"])
		if err != nil {
			return fmt.Errorf("step %s: generation %q", name, st.Vars["gen"])
		}
		if st.Output != crashOutput(name, gen) {
			return fmt.Errorf("step %s: output is not that of generation %d (%d bytes)", name, gen, len(st.Output))
		}
		if len(st.ToolCalls) != 1 || st.ToolCalls[0].Result.Output != crashOutput(name+"/call", gen) {
			return fmt.Errorf("step %s: tool call output is not that of generation %d", name, gen)
		}
	}
	return nil
}

func countTemp(t *testing.T, dir string) int {
	n := 0
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && isTemp(d.Name()) {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCrashSafetyJournal is TestCrashSafety for an agent step saved by AppendStep, with a
// Save now and then as at step boundaries: after a SIGKILL at any moment, the run loads, every
// call reported saved is there (in flight or with its result), and every result is whole.
func TestCrashSafetyJournal(t *testing.T) {
	skipUnlessCrashTests(t)
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	acked := 0
	for kill := range crashKills {
		acks := 1 + rng.IntN(12)
		delay := time.Duration(rng.Int64N(int64(10 * time.Millisecond)))
		acked = max(acked, runChildUntilKilled(t, "TestCrashJournalChild", dir, acks, delay))
		s := newStore(t, dir, WithOutputThreshold(crashThresh))
		run, err := s.Load(t.Context(), crashRunID)
		if err != nil {
			t.Fatalf("after kill %d: Load: %v", kill, err)
		}
		if seq := crashJournalSeq(run); seq < acked {
			t.Errorf("after kill %d: the run is at save %d, but save %d was reported done", kill, seq, acked)
		}
		if err := crashJournalConsistent(run); err != nil {
			t.Errorf("after kill %d: %v", kill, err)
		}
		if t.Failed() {
			return
		}
	}
}

// TestCrashJournalChild is the child of TestCrashSafetyJournal: it goes on with the run as a
// resumed agent step does (a Save first), then makes calls, each saved in flight and with its
// result by AppendStep, and reports each save.
func TestCrashJournalChild(t *testing.T) {
	ctx := context.Background()
	s, run := crashChild(t, "TestCrashSafetyJournal", crashJournalConsistent, func() *state.RunState {
		run := &state.RunState{ID: crashRunID, Workflow: "crash", Status: state.Running, Inputs: map[string]any{}}
		run.Step("agent").Status = state.Running
		return run
	})
	st := run.States["agent"]
	save := func(append bool) {
		seq := crashJournalSeq(run) + 1
		st.Vars = map[string]string{"seq": strconv.Itoa(seq)}
		var err error
		if append {
			err = s.AppendStep(ctx, run, "agent")
		} else {
			err = s.Save(ctx, run)
		}
		if err != nil {
			t.Fatalf("child save: %v", err)
		}
	}
	save(false)
	for range 100000 {
		n := len(st.ToolCalls)
		if n > 0 && st.ToolCalls[n-1].InFlight {
			res := state.ToolCallResult{Success: true, Output: crashOutput("call", n-1)}
			st.ToolCalls[n-1].Result, st.ToolCalls[n-1].InFlight = &res, false
			stats := state.ToolStats{}
			if st.ToolStats != nil {
				stats = *st.ToolStats
			}
			stats.Add(res)
			st.ToolStats = &stats
		} else {
			st.ToolCalls = append(st.ToolCalls, state.ToolCallRecord{ID: fmt.Sprintf("call_%d", n), Tool: "shell",
				Arguments: map[string]any{"n": n}, InFlight: true})
		}
		save(n%25 != 24)
		if _, err := fmt.Printf("saved %s\n", st.Vars["seq"]); err != nil {
			return // the parent is gone
		}
	}
}

// crashJournalSeq is the number of saves made of the run, as its agent step records it.
func crashJournalSeq(run *state.RunState) int {
	st := run.States["agent"]
	if st == nil {
		return 0
	}
	seq, _ := strconv.Atoi(st.Vars["seq"]) //nolint:errcheck // written by this test
	return seq
}

// crashJournalConsistent checks the agent step: calls numbered from 0, only the last one in
// flight, every result that of its call, and the counters those of the results.
func crashJournalConsistent(run *state.RunState) error {
	st := run.States["agent"]
	if st == nil {
		return fmt.Errorf("no agent step")
	}
	done := 0
	for i, c := range st.ToolCalls {
		if c.ID != fmt.Sprintf("call_%d", i) || c.Arguments["n"] != i {
			return fmt.Errorf("call %d is %s with arguments %v", i, c.ID, c.Arguments)
		}
		switch {
		case c.InFlight && (c.Result != nil || i != len(st.ToolCalls)-1):
			return fmt.Errorf("call %d in flight, of %d, with result %v", i, len(st.ToolCalls), c.Result)
		case !c.InFlight && (c.Result == nil || c.Result.Output != crashOutput("call", i)):
			return fmt.Errorf("call %d: result is not its own", i)
		case !c.InFlight:
			done++
		}
	}
	if total := 0; st.ToolStats != nil || done > 0 {
		if st.ToolStats != nil {
			total = st.ToolStats.TotalCalls
		}
		if total != done {
			return fmt.Errorf("tool_stats counts %d calls, %d have results", total, done)
		}
	}
	return nil
}
