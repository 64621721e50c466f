package statestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/awf-dev/awf/internal/domain/state"
)

// appendStep calls AppendStep for the agent step of agentRun.
func appendStep(t *testing.T, s *Store, run *state.RunState) {
	t.Helper()
	if err := s.AppendStep(t.Context(), run, "implement"); err != nil {
		t.Fatalf("AppendStep: %v", err)
	}
}

// savedAgentRun returns agentRun(n), saved by s.
func savedAgentRun(t *testing.T, s *Store, n int) *state.RunState {
	t.Helper()
	run := agentRun(n)
	if err := s.Save(t.Context(), run); err != nil {
		t.Fatalf("Save: %v", err)
	}
	return run
}

// journalLines returns the lines of run id's journal.
func journalLines(t *testing.T, s *Store, id string) []string {
	t.Helper()
	data, err := os.ReadFile(s.journalPath(id))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	return lines[:len(lines)-1] // after the last newline: ""
}

// onDisk decodes a state file as it is, without its journal.
func onDisk(t *testing.T, s *Store, id string) (*state.RunState, int64) {
	t.Helper()
	data, err := os.ReadFile(s.Path(id))
	if err != nil {
		t.Fatal(err)
	}
	run, seq, err := decodeRun(data)
	if err != nil {
		t.Fatal(err)
	}
	return run, seq
}

// TestJournalAppendsOnlyWhatChanged checks the journal's lines: numbered from 1, each holding
// the changed call, message and counters only, so that a line does not grow with the step;
// the state file is not written.
func TestJournalAppendsOnlyWhatChanged(t *testing.T) {
	s := newStore(t, t.TempDir())
	s.noSync, s.compactFloor = true, 1<<30
	run := savedAgentRun(t, s, 3)
	before, err := os.ReadFile(s.Path(run.ID))
	if err != nil {
		t.Fatal(err)
	}
	st := run.States["implement"]
	var sizes []int
	for i := 3; i < 503; i++ {
		beginAgentCall(st, i)
		appendStep(t, s, run)
		finishAgentCall(st, i)
		appendStep(t, s, run)
	}
	lines := journalLines(t, s, run.ID)
	if len(lines) != 1000 {
		t.Fatalf("journal has %d lines, want 1000 (two per call)", len(lines))
	}
	for n, line := range lines {
		var en map[string]any
		if err := json.Unmarshal([]byte(line), &en); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", n+1, err, line)
		}
		if en["seq"] != float64(n+1) || en["step"] != "implement" || en["updated_at"] == nil {
			t.Fatalf("line %d: seq %v, step %v, updated_at %v; want seq %d of step implement", n+1, en["seq"], en["step"], en["updated_at"], n+1)
		}
		sizes = append(sizes, len(line))
	}
	want := `"tool_calls":{"len":4,"set":[{"at":3,"value":{"id":"call_3","tool":"read_file","arguments":{"path":"src/pkg3/file.go"},"in_flight":true}}]}`
	if !strings.Contains(lines[0], want) || strings.Contains(lines[0], "call_2") {
		t.Errorf("first line holds more or less than the call in flight:\n%s\nwant it to hold %s", lines[0], want)
	}
	if !strings.Contains(lines[1], `"record":`) || !strings.Contains(lines[1], `"total_calls":4`) {
		t.Errorf("second line does not hold the step's new counters:\n%s", lines[1])
	}
	if first, last := sizes[0]+sizes[1], sizes[998]+sizes[999]; last > first+100 {
		t.Errorf("the lines of call 500 take %d bytes, those of call 3 %d: lines grow with the step", last, first)
	}
	if after, _ := os.ReadFile(s.Path(run.ID)); !bytes.Equal(after, before) {
		t.Error("AppendStep rewrote the state file")
	}
	assertLoads(t, newStore(t, s.Dir()), run)

	if err := s.Save(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	if fi := stat(t, s.journalPath(run.ID)); fi.Size() != 0 {
		t.Errorf("journal holds %d bytes after Save, want it emptied", fi.Size())
	}
	if disk, seq := onDisk(t, s, run.ID); seq != 1000 || len(disk.States["implement"].ToolCalls) != 503 {
		t.Errorf("state file after Save: journal_seq %d, %d calls; want 1000 and 503", seq, len(disk.States["implement"].ToolCalls))
	}
	beginAgentCall(st, 503)
	appendStep(t, s, run)
	if lines := journalLines(t, s, run.ID); len(lines) != 1 || !strings.HasPrefix(lines[0], `{"seq":1001,`) {
		t.Errorf("journal after Save and an append = %q, want one line numbered 1001", lines)
	}
	assertLoads(t, newStore(t, s.Dir()), run)
}

func TestJournalFileMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	s := newStore(t, t.TempDir())
	run := savedAgentRun(t, s, 1)
	beginAgentCall(run.States["implement"], 1)
	appendStep(t, s, run)
	if m := stat(t, s.journalPath(run.ID)).Mode().Perm(); m != fileMode {
		t.Errorf("journal mode = %v, want %v", m, fileMode)
	}
}

// TestJournalRemovedWhenRunEnds checks that a finished run leaves no journal.
func TestJournalRemovedWhenRunEnds(t *testing.T) {
	s := newStore(t, t.TempDir())
	run := savedAgentRun(t, s, 1)
	beginAgentCall(run.States["implement"], 1)
	appendStep(t, s, run)
	end := run.StartedAt.Add(time.Minute)
	run.Status, run.FinishedAt = state.Completed, &end
	if err := s.Save(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.journalPath(run.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal of a finished run: %v, want it deleted", err)
	}
	appendStep(t, s, run) // a finished run is saved whole
	if _, err := os.Stat(s.journalPath(run.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("AppendStep of a finished run made a journal: %v", err)
	}
	assertLoads(t, newStore(t, s.Dir()), run)
}

// TestJournalTornTail has a crash cut the last line short: Load ignores it, and the next
// Save clears it, so that later lines follow a whole one.
func TestJournalTornTail(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := newStore(t, dir)
	run := savedAgentRun(t, s, 2)
	st := run.States["implement"]
	beginAgentCall(st, 2)
	appendStep(t, s, run)
	want := cloneRun(t, run)
	finishAgentCall(st, 2)
	appendStep(t, s, run)
	lines := journalLines(t, s, run.ID)
	torn := lines[0] + lines[1][:len(lines[1])/2]
	for _, tail := range []string{torn, lines[0] + "\x00\x00\x00\x00"} {
		write(t, s.journalPath(run.ID), tail)
		s2 := newStore(t, dir)
		got, err := s2.Load(ctx, run.ID)
		if err != nil {
			t.Fatalf("Load with a torn last line: %v", err)
		}
		assertSame(t, got, want)
		// The loaded run goes on in the new store, as a resumed run does.
		if err := s2.Save(ctx, got); err != nil {
			t.Fatal(err)
		}
		finishAgentCall(got.States["implement"], 2)
		if err := s2.AppendStep(ctx, got, "implement"); err != nil {
			t.Fatal(err)
		}
		assertLoads(t, newStore(t, dir), got)
	}
}

// TestJournalCorruptLine checks that a damaged line before the last is an error naming the
// journal's file and line.
func TestJournalCorruptLine(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir)
	run := savedAgentRun(t, s, 1)
	for i := 1; i < 4; i++ {
		beginAgentCall(run.States["implement"], i)
		appendStep(t, s, run)
	}
	lines := journalLines(t, s, run.ID)
	p := s.journalPath(run.ID)
	tests := []struct {
		name, journal, want string
	}{
		{"not JSON", lines[0] + "{garbage\n" + lines[2], p + ":2:"},
		{"unknown field", lines[0] + strings.Replace(lines[1], `"step"`, `"stpe"`, 1) + lines[2], p + ":2:"},
		{"sequence goes back", lines[0] + lines[1] + lines[0], p + ":3: sequence number 1 after 2"},
		{"gap", lines[0] + lines[2], p + ":2: the journal does not continue the state file"},
		{"bad index", lines[0] + strings.Replace(lines[1], `"at":2`, `"at":9`, 1) + lines[2], p + ":2:"},
		{"unknown step", lines[0] + strings.Replace(lines[1], `"step":"implement"`, `"step":"other"`, 1), p + ":2:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			write(t, p, tc.journal)
			_, err := newStore(t, dir).Load(t.Context(), run.ID)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestJournalCrashBetweenRenameAndClear has a crash come after a Save renamed its state file
// into place and before it emptied the journal: the lines left are already in the state file
// and must not be applied again (here they would make the completed step running again and
// take back the calls the Save cut).
func TestJournalCrashBetweenRenameAndClear(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := newStore(t, dir)
	run := savedAgentRun(t, s, 2)
	st := run.States["implement"]
	for i := 2; i < 5; i++ {
		beginAgentCall(st, i)
		appendStep(t, s, run)
		finishAgentCall(st, i)
		appendStep(t, s, run)
	}
	left, err := os.ReadFile(s.journalPath(run.ID))
	if err != nil {
		t.Fatal(err)
	}
	st.Status, st.Output, st.ToolCalls = state.Completed, "done", st.ToolCalls[:1]
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	write(t, s.journalPath(run.ID), string(left)) // the emptying never happened
	assertLoads(t, newStore(t, dir), run)

	// The next process goes on from there: its lines follow the ones left, and count.
	s2 := newStore(t, dir)
	got, err := s2.Load(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Save(ctx, got); err != nil {
		t.Fatal(err)
	}
	got.Step("implement").Status = state.Running
	beginAgentCall(got.States["implement"], 9)
	if err := s2.AppendStep(ctx, got, "implement"); err != nil {
		t.Fatal(err)
	}
	if lines := journalLines(t, s2, run.ID); !strings.HasPrefix(lines[0], `{"seq":7,`) {
		t.Errorf("first line after the crash = %s, want sequence number 7", lines[0])
	}
	assertLoads(t, newStore(t, dir), got)
}

// TestJournalLargeOutputs checks that outputs and message contents over the threshold go to
// files beside the state file, as with Save, and that the journal's lines refer to them.
func TestJournalLargeOutputs(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := newStore(t, dir, WithOutputThreshold(300))
	run := savedAgentRun(t, s, 1)
	st := run.States["implement"]
	big := func(tag string) string { return strings.Repeat(tag+" is a large output\n", 40) }
	beginAgentCall(st, 1)
	appendStep(t, s, run)
	res := state.ToolCallResult{Success: true, Output: big("first"), DurationMs: 1}
	st.ToolCalls[1].Result, st.ToolCalls[1].InFlight = &res, false
	st.Conversation.Messages = append(st.Conversation.Messages, state.Message{Role: "tool", ToolCallID: "call_1", Content: big("first")})
	appendStep(t, s, run)
	assertFiles(t, filepath.Join(dir, run.ID), "implement.call_1.output", "implement.message-3.content")
	lines := journalLines(t, s, run.ID)
	if last := lines[len(lines)-1]; strings.Contains(last, "large output") || !strings.Contains(last, `"output_file":"agent/implement.call_1.output"`) {
		t.Errorf("line with a large output holds it, or no reference to its file:\n%s", last)
	}
	assertLoads(t, newStore(t, dir), run)

	// A call after it: its line does not hold the call with the large output again.
	beginAgentCall(st, 2)
	appendStep(t, s, run)
	lines = journalLines(t, s, run.ID)
	if last := lines[len(lines)-1]; strings.Contains(last, "call_1") {
		t.Errorf("the next call's line holds the call with a large output again:\n%s", last)
	}
	st.ToolCalls = st.ToolCalls[:2]
	st.Conversation.Messages = st.Conversation.Messages[:4]
	appendStep(t, s, run)

	// A large output replaced by another: the new one goes to the other name, the old file
	// is deleted once the line that replaces it is written.
	res2 := res
	res2.Output = big("second")
	st.ToolCalls[1].Result = &res2
	appendStep(t, s, run)
	assertFiles(t, filepath.Join(dir, run.ID), "implement.call_1.output.1", "implement.message-3.content")
	assertLoads(t, newStore(t, dir), run)

	// Small again, and the message cut: after the next Save no file is left.
	res3 := res
	res3.Output = "small"
	st.ToolCalls[1].Result = &res3
	st.Conversation.Messages = st.Conversation.Messages[:3]
	appendStep(t, s, run)
	assertLoads(t, newStore(t, dir), run)
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, run.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("output directory after Save: %v, want it gone", err)
	}
	assertLoads(t, newStore(t, dir), run)
}

// TestJournalFallsBackToSave lists what AppendStep cannot journal: it saves the whole run
// instead, and Load returns the run either way.
func TestJournalFallsBackToSave(t *testing.T) {
	tests := []struct {
		name    string
		change  func(run *state.RunState)
		journal bool // whether the change is journaled
	}{
		{"a call", func(run *state.RunState) { beginAgentCall(run.States["implement"], 2) }, true},
		{"updated_at only", func(run *state.RunState) { run.UpdatedAt = run.UpdatedAt.Add(time.Second) }, true},
		{"run status", func(run *state.RunState) { run.Status = state.Failed }, false},
		{"inputs", func(run *state.RunState) { run.Inputs["feature"] = "other" }, false},
		// Steps added at the end of the order since the last save (a parallel step's children
		// start together) go in the same append, before the step saved.
		{"a step added", func(run *state.RunState) { run.Step("next").Status = state.Pending }, true},
		{"steps added", func(run *state.RunState) { run.Step("next").Status = state.Running; run.Step("after") }, true},
		{"a step added before the others", func(run *state.RunState) {
			run.Step("first")
			run.Order = append([]string{"first"}, run.Order[:len(run.Order)-1]...)
		}, false},
		{"a step without a place in the order", func(run *state.RunState) { run.States["nowhere"] = &state.StepState{} }, false},
		{"NaN argument", func(run *state.RunState) {
			beginAgentCall(run.States["implement"], 2)
			run.States["implement"].ToolCalls[2].Arguments = map[string]any{"x": math.NaN()}
		}, false},
		{"text not UTF-8", func(run *state.RunState) { run.States["implement"].Error = "bad \xff byte" }, false},
		{"a value JSON writes otherwise", func(run *state.RunState) {
			run.States["implement"].Response = map[string]any{"when": time.Unix(0, 0).UTC()}
		}, false},
		{"a step encoded whole", func(run *state.RunState) { run.States["implement"].Response = callPlaceholder }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := newStore(t, dir)
			run := agentRun(2)
			if err := s.Save(t.Context(), run); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(s.Path(run.ID))
			tc.change(run)
			appendStep(t, s, run)
			after, _ := os.ReadFile(s.Path(run.ID))
			_, err := os.Stat(s.journalPath(run.ID))
			if journaled := err == nil && bytes.Equal(before, after); journaled != tc.journal {
				t.Errorf("journaled = %v, want %v", journaled, tc.journal)
			}
			// As the state file gives it: some of these values do not read back as they were.
			assertSameLoad(t, newStore(t, dir), run)
			// The journal goes on after a fallback.
			beginAgentCall(run.States["implement"], 7)
			appendStep(t, s, run)
			assertSameLoad(t, newStore(t, dir), run)
		})
	}
}

// TestJournalStaleFileDeleted has a journal left by an earlier process of the same run id:
// the first Save of a store that did not load the run deletes it before writing the state.
func TestJournalStaleFileDeleted(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir)
	run := savedAgentRun(t, s, 1)
	beginAgentCall(run.States["implement"], 1)
	appendStep(t, s, run)
	fresh := agentRun(1) // the same id, started again
	if err := newStore(t, dir).Save(t.Context(), fresh); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.journalPath(run.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale journal: %v, want it deleted", err)
	}
	assertLoads(t, newStore(t, dir), fresh)
}

// TestLoadWhileJournaling has another store save the run and append to it between Load's
// reading of the state file and of the journal: the journal then skips numbers, and Load
// reads again.
func TestLoadWhileJournaling(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	writer := newStore(t, dir)
	run := savedAgentRun(t, writer, 1)
	st := run.States["implement"]
	beginAgentCall(st, 1)
	appendStep(t, writer, run)
	reader := newStore(t, dir)
	moves := 0
	reader.beforeJournal = func() {
		if moves < maxLoadAttempts-1 {
			moves++
			finishAgentCall(st, moves)
			appendStep(t, writer, run)
			if err := writer.Save(ctx, run); err != nil {
				t.Error(err)
			}
			beginAgentCall(st, moves+1)
			appendStep(t, writer, run)
		}
	}
	got, err := reader.Load(ctx, run.ID)
	if err != nil {
		t.Fatalf("Load while the run is journaled: %v", err)
	}
	assertSame(t, got, run)
}

// TestJournalRandomMutations journals a step through random changes, saving the run whole
// for the changes AppendStep does not take (in place, or to other steps), and checks what a
// new store loads.
func TestJournalRandomMutations(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			g := storeMutator(rand.New(rand.NewPCG(seed, 13)))
			dir := t.TempDir()
			s := newStore(t, dir, WithOutputThreshold(128))
			s.noSync = true
			run := agentRun(2)
			if err := s.Save(t.Context(), run); err != nil {
				t.Fatal(err)
			}
			for i := range 200 {
				what := g.mutate(run)
				var err error
				switch what {
				case "change last result in place", "change earlier arguments in place", "other step":
					err = s.Save(t.Context(), run)
				default:
					err = s.AppendStep(t.Context(), run, "implement")
				}
				if err != nil {
					t.Fatalf("mutation %d (%s): %v", i, what, err)
				}
				if i%10 == 9 {
					assertLoads(t, newStore(t, dir), run)
					if t.Failed() {
						t.Fatalf("after mutation %d (%s)", i, what)
					}
				}
			}
		})
	}
}

// TestJSONValuesReadBackAsTheStateFile checks that a dynamic value written to the journal
// reads back as the state file would give it.
func TestJSONValuesReadBackAsTheStateFile(t *testing.T) {
	values := []any{
		nil, true, "text", "multi\nline", 3, int64(-4), uint64(math.MaxUint64), 2.0, 0.5, 1e20, 1e-7,
		math.Copysign(0, -1), json.Number("123456789012345678901234567890"),
		map[string]any{"a": []any{1, 2.5, "x", nil, map[string]any{}}, "b": []any{}},
	}
	for _, v := range values {
		j, err := jsonValue(v)
		if err != nil {
			t.Errorf("jsonValue(%#v): %v", v, err)
			continue
		}
		data, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var back any
		if err := dec.Decode(&back); err != nil {
			t.Fatal(err)
		}
		got, err := fromJSON(back)
		if err != nil {
			t.Fatalf("fromJSON(%s): %v", data, err)
		}
		text, err := encodeYAML(map[string]any{"v": v})
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
			t.Fatal(err)
		}
		want := normalize(doc["v"])
		if !sameJSONValue(got, want) {
			t.Errorf("%#v: journal gives %#v (%s), state file %#v", v, got, data, want)
		}
	}
}

// sameJSONValue compares decoded values, their types and the sign of zeros included.
func sameJSONValue(a, b any) bool {
	if fa, ok := a.(float64); ok {
		fb, ok := b.(float64)
		return ok && math.Float64bits(fa) == math.Float64bits(fb)
	}
	return fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b)
}

// assertSameLoad checks that s loads run as a store that saved it whole gives it back.
func assertSameLoad(t *testing.T, s *Store, run *state.RunState) {
	t.Helper()
	got, err := s.Load(t.Context(), run.ID)
	if err != nil {
		t.Fatalf("Load(%q): %v", run.ID, err)
	}
	ref := newStore(t, t.TempDir())
	if err := ref.Save(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	want, err := ref.Load(t.Context(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	assertSame(t, got, want)
}

func cloneRun(t *testing.T, run *state.RunState) *state.RunState {
	t.Helper()
	return deepCopy(run)
}

func assertSame(t *testing.T, got, want *state.RunState) {
	t.Helper()
	wantFile, err := encodeYAML(want)
	if err != nil {
		t.Fatal(err)
	}
	gotFile, err := encodeYAML(got)
	if err != nil {
		t.Fatal(err)
	}
	if gotFile != wantFile {
		t.Errorf("loaded run differs:\n--- want\n%s\n--- got\n%s", wantFile, gotFile)
	}
}

// TestJournalFoldedWhenLargerThanStateFile runs steps saved by AppendStep only, as the runner
// saves them: the journal never grows much past the state file (a reader reads at most about
// twice the state), the state file is rewritten a number of times that grows with the
// logarithm of the number of steps (so each step's share of the rewrites does not grow with
// the run), every version loads as the run, and once the run has ended the state file alone
// holds it, with no journal beside it.
func TestJournalFoldedWhenLargerThanStateFile(t *testing.T) {
	s := newStore(t, t.TempDir())
	s.noSync = true
	run := benchRun(10, 0)
	if err := s.Save(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	const steps = 1000
	rewrites, lastSize := 0, sizeOf(s.Path(run.ID))
	for i := range steps {
		start := run.UpdatedAt.Add(time.Second)
		name := fmt.Sprintf("next%05d", i)
		st := run.Step(name)
		st.Status, st.StartedAt, run.UpdatedAt = state.Running, &start, start
		if err := s.AppendStep(t.Context(), run, name); err != nil {
			t.Fatal(err)
		}
		endBenchStep(st, i, start)
		run.UpdatedAt = *st.FinishedAt
		if err := s.AppendStep(t.Context(), run, name); err != nil {
			t.Fatal(err)
		}
		size := sizeOf(s.Path(run.ID))
		if size != lastSize {
			rewrites++
			lastSize = size
		}
		if j := sizeOf(s.journalPath(run.ID)); j > max(size, minCompact)+4096 {
			t.Fatalf("step %d: journal of %d bytes beside a state file of %d", i, j, size)
		}
		if i%300 == 0 {
			assertSameLoad(t, s, run)
		}
	}
	t.Logf("%d steps rewrote the state file %d times", steps, rewrites)
	if rewrites == 0 || rewrites > 20 {
		t.Errorf("%d steps rewrote the state file %d times, want a few (about log2 of the steps)", steps, rewrites)
	}
	end := run.UpdatedAt.Add(time.Second)
	run.Status, run.FinishedAt = state.Completed, &end
	if err := s.Save(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.journalPath(run.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal of the ended run: %v, want none", err)
	}
	alone, _ := onDisk(t, s, run.ID)
	assertSame(t, alone, run)
}

// TestJournalTurnsInTheRecord reads a journal line written by an earlier awf, which held an
// agent step's turns in its record rather than as a list of their own.
func TestJournalTurnsInTheRecord(t *testing.T) {
	s := newStore(t, t.TempDir())
	run := savedAgentRun(t, s, 1)
	line := `{"seq":1,"updated_at":"2026-03-01T10:00:05Z","step":"implement","record":{"status":"running",` +
		`"turns":[{"text":"one","calls":["call_0"],"finish_reason":"tool_calls"},{"finish_reason":"stop"}]}}` + "\n"
	if err := os.WriteFile(s.journalPath(run.ID), []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := newStore(t, s.Dir()).Load(t.Context(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []state.Turn{{Text: "one", Calls: []string{"call_0"}, FinishReason: "tool_calls"}, {FinishReason: "stop"}}
	if turns := got.States["implement"].Turns; !slices.EqualFunc(turns, want, func(a, b state.Turn) bool {
		return a.Text == b.Text && slices.Equal(a.Calls, b.Calls) && a.FinishReason == b.FinishReason
	}) {
		t.Errorf("turns = %+v, want %+v", turns, want)
	}
}

// TestJournalStepsAddedBetweenSaves drives a run as a parallel block does: steps start
// (added, not saved at once), end in any order, with outputs small and large, and each save is
// of one step while others were added since the last; what a new store loads is the run, and
// no save rewrites the state file.
func TestJournalStepsAddedBetweenSaves(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 29))
			dir := t.TempDir()
			s := newStore(t, dir, WithOutputThreshold(128))
			s.noSync = true
			run := agentRun(1)
			if err := s.Save(t.Context(), run); err != nil {
				t.Fatal(err)
			}
			stateFile, _ := os.ReadFile(s.Path(run.ID))
			var running []string
			next := 0
			for i := range 300 {
				run.UpdatedAt = run.UpdatedAt.Add(time.Millisecond)
				at := run.UpdatedAt
				if len(running) < 8 && (len(running) == 0 || rng.IntN(2) == 0) {
					name := fmt.Sprintf("c%03d", next)
					next++
					st := run.Step(name)
					st.Status, st.StartedAt = state.Running, &at
					running = append(running, name)
					if rng.IntN(3) > 0 {
						continue // its start is not saved yet
					}
					if err := s.AppendStep(t.Context(), run, name); err != nil {
						t.Fatal(err)
					}
					continue
				}
				k := rng.IntN(len(running))
				name := running[k]
				running = slices.Delete(running, k, k+1)
				st := run.States[name]
				st.Status, st.FinishedAt = state.Completed, &at
				st.Output = strings.Repeat(name, 1+rng.IntN(100)) // past the threshold at times
				if err := s.AppendStep(t.Context(), run, name); err != nil {
					t.Fatalf("save %d of %s: %v", i, name, err)
				}
				if i%25 == 24 {
					assertLoads(t, newStore(t, dir), run)
					if t.Failed() {
						t.Fatalf("after save %d", i)
					}
				}
				if i == 20 { // the journal is still smaller than minCompact
					if now, _ := os.ReadFile(s.Path(run.ID)); !bytes.Equal(now, stateFile) {
						t.Fatalf("the state file was rewritten by save %d, while the journal was small", i)
					}
				}
			}
			for _, name := range running {
				if err := s.AppendStep(t.Context(), run, name); err != nil {
					t.Fatal(err)
				}
			}
			assertLoads(t, newStore(t, dir), run)
		})
	}
}
