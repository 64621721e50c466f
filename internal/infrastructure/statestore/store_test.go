package statestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/state"
)

func newStore(t *testing.T, dir string, opts ...Option) *Store {
	t.Helper()
	s, err := New(dir, opts...)
	if err != nil {
		t.Fatalf("New(%q): %v", dir, err)
	}
	return s
}

func TestStoreSuite(t *testing.T) {
	portstest.StateStoreSuite(t, func(t *testing.T) ports.StateStore { return newStore(t, t.TempDir()) })
}

func TestStoreJournalSuite(t *testing.T) {
	portstest.StepJournalSuite(t, func(t *testing.T) portstest.JournalStore { return newStore(t, t.TempDir()) })
}

// TestStoreSuiteEveryOutputInFiles runs the suite with every non-empty output stored beside
// the state file, so that renames, shrinking and growing outputs all go through files.
func TestStoreSuiteEveryOutputInFiles(t *testing.T) {
	portstest.StateStoreSuite(t, func(t *testing.T) ports.StateStore {
		return newStore(t, t.TempDir(), WithOutputThreshold(0))
	})
}

func TestNewEmptyDir(t *testing.T) {
	if _, err := New(""); fault.KindOf(err) != fault.Usage {
		t.Errorf("New(\"\") = %v, want a usage error", err)
	}
}

func TestCheckID(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"0b5d2c1e-6f7a-4b8c-9d0e-1f2a3b4c5d6e", true},
		{"run_1.retry-2", true},
		{strings.Repeat("a", maxIDLen), true},
		{strings.Repeat("a", maxIDLen+1), false},
		{"", false}, {".", false}, {"..", false}, {".hidden", false}, {"../x", false},
		{"a/b", false}, {`a\b`, false}, {"/abs", false}, {"a b", false}, {"a:b", false},
		{"nul\x00", false}, {"ünï", false}, {"a\nb", false},
	}
	for _, tc := range tests {
		err := CheckID(tc.id)
		if tc.ok && err != nil || !tc.ok && fault.KindOf(err) != fault.Usage {
			t.Errorf("CheckID(%q) = %v, want ok %v (a usage error otherwise)", tc.id, err, tc.ok)
		}
	}
}

// smallRun is a run whose state file is checked byte for byte in testdata/small-run.golden.
func smallRun() *state.RunState {
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	end := start.Add(90 * time.Second)
	exit := 0
	return &state.RunState{
		ID: "small", Workflow: "demo", WorkflowFile: "demo.yaml", Status: state.Completed,
		Inputs:    map[string]any{"feature": "add --verbose\nto the CLI\n", "count": 2, "ratio": 1e20},
		StartedAt: start, UpdatedAt: end, FinishedAt: &end,
		States: map[string]*state.StepState{
			"build": {Status: state.Completed, Output: "ok\nall good\n", ExitCode: &exit, StartedAt: &start, FinishedAt: &end, DurationMs: 90000},
			"logs": {Status: state.Completed, Output: strings.Repeat("log line\n", 20), ToolCalls: []state.ToolCallRecord{
				{ID: "call_001", Tool: "read_file", Arguments: map[string]any{"path": "a.txt"},
					Result: &state.ToolCallResult{Success: true, Output: strings.Repeat("data\n", 20), DurationMs: 3}},
				{ID: "call_002", Tool: "shell", Arguments: map[string]any{"command": " indented\r\nCRLF"},
					Result: &state.ToolCallResult{Success: true, Output: "short", DurationMs: 4}},
			}},
		},
		Order: []string{"build", "logs"},
	}
}

// TestStateFileGolden pins the file format: literal blocks, quoted strings a block cannot
// hold, and large outputs referred to by output_file and output_size.
func TestStateFileGolden(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir, WithOutputThreshold(64))
	if err := s.Save(t.Context(), smallRun()); err != nil {
		t.Fatalf("Save: %v", err)
	}
	got, err := os.ReadFile(s.Path("small"))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "small-run.golden")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (UPDATE_GOLDEN=1 writes it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("state file (-want +got):\n%s", d)
	}
	for _, name := range []string{"logs.output", "logs.call_001.output"} {
		if _, err := os.Stat(filepath.Join(dir, "small", name)); err != nil {
			t.Errorf("large output file: %v", err)
		}
	}
}

func TestFileModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	dir := filepath.Join(t.TempDir(), "runs")
	s := newStore(t, dir, WithOutputThreshold(64))
	if err := s.Save(t.Context(), smallRun()); err != nil {
		t.Fatalf("Save: %v", err)
	}
	want := map[string]os.FileMode{
		dir: dirMode | os.ModeDir, s.Path("small"): fileMode,
		filepath.Join(dir, "small"): dirMode | os.ModeDir, filepath.Join(dir, "small", "logs.output"): fileMode,
	}
	for p, mode := range want {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode() & (os.ModeDir | os.ModePerm); got != mode {
			t.Errorf("mode of %s = %v, want %v", p, got, mode)
		}
	}
}

// TestLargeOutputWrittenOnce saves a run many times; its large output file must keep its
// inode (a rewrite renames a new file over it) until the output changes.
func TestLargeOutputWrittenOnce(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := newStore(t, dir, WithOutputThreshold(1024))
	run := &state.RunState{ID: "r", Workflow: "w", Status: state.Running}
	run.Step("big").Output = strings.Repeat("x", 4096)
	run.Step("big").ToolCalls = []state.ToolCallRecord{{ID: "c1", Result: &state.ToolCallResult{Output: strings.Repeat("y", 2048)}}}
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	stepFile, callFile := filepath.Join(dir, "r", "big.output"), filepath.Join(dir, "r", "big.c1.output")
	first := []os.FileInfo{stat(t, stepFile), stat(t, callFile)}
	for i := range 5 {
		run.Step("step" + string(rune('a'+i))).Output = "small"
		run.UpdatedAt = run.UpdatedAt.Add(time.Second)
		if err := s.Save(ctx, run); err != nil {
			t.Fatal(err)
		}
	}
	if !os.SameFile(first[0], stat(t, stepFile)) || !os.SameFile(first[1], stat(t, callFile)) {
		t.Fatal("an unchanged large output was written again")
	}

	// A changed output goes to the other name, and the old file goes.
	run.Step("big").Output = strings.Repeat("z", 4096)
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	assertFiles(t, filepath.Join(dir, "r"), "big.c1.output", "big.output.1")
	if !os.SameFile(first[1], stat(t, callFile)) {
		t.Error("the unchanged tool call output was written again")
	}
	assertLoads(t, s, run)

	// Outputs that shrink below the threshold leave no files behind.
	run.Step("big").Output = "small"
	run.Step("big").ToolCalls[0].Result.Output = "small"
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "r")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the run's output directory is still there: %v", err)
	}
	assertLoads(t, s, run)
}

// TestLoadThenSaveKeepsOutputFiles continues a run in a new store, as resume does: the large
// output loaded must not be written again.
func TestLoadThenSaveKeepsOutputFiles(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	run := &state.RunState{ID: "r", Workflow: "w", Status: state.Interrupted}
	run.Step("big").Output = strings.Repeat("x\n", 1000)
	if err := newStore(t, dir, WithOutputThreshold(100)).Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "r", "big.output")
	before := stat(t, file)

	resumed := newStore(t, dir, WithOutputThreshold(100))
	loaded, err := resumed.Load(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	loaded.Status = state.Running
	loaded.Step("next").Output = "more"
	if err := resumed.Save(ctx, loaded); err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, stat(t, file)) {
		t.Error("a large output loaded and saved unchanged was written again")
	}
	assertLoads(t, newStore(t, dir), loaded)
}

// TestLoadAfterConcurrentRewrite has another store (another process, in life) replace a large
// output between Load's reading of the state file and of the output: Load reads again.
func TestLoadAfterConcurrentRewrite(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	writer := newStore(t, dir, WithOutputThreshold(10))
	run := &state.RunState{ID: "r", Workflow: "w"}
	run.Step("s").Output = "first version, long"
	if err := writer.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	reader := newStore(t, dir)
	rewrites := 0
	reader.beforeRestore = func() {
		if rewrites < maxLoadAttempts-1 { // the last attempt must succeed
			rewrites++
			run.Step("s").Output = strings.Repeat("new version ", rewrites)
			if err := writer.Save(ctx, run); err != nil {
				t.Error(err)
			}
		}
	}
	got, err := reader.Load(ctx, "r")
	if err != nil {
		t.Fatalf("Load while the run changes: %v", err)
	}
	if got.States["s"].Output != run.States["s"].Output {
		t.Errorf("Load() output = %q, want the latest, %q", got.States["s"].Output, run.States["s"].Output)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string // in the error
	}{
		{"garbage", func(t *testing.T, dir string) { write(t, filepath.Join(dir, "r.yaml"), "id: [unclosed\n") }, "r.yaml"},
		{"other run", func(t *testing.T, dir string) { write(t, filepath.Join(dir, "r.yaml"), "id: other\n") }, `holds run "other"`},
		{"missing output", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "r.yaml"), "id: r\nstates:\n  s:\n    status: completed\n    output_file: r/s.output\n    output_size: 5\n")
		}, "s.output"},
		{"output outside", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "secret"), "12345")
			write(t, filepath.Join(dir, "r.yaml"), "id: r\nstates:\n  s:\n    output_file: ../secret\n    output_size: 5\n")
		}, "outside the run's directory"},
		{"output of another run", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "x", "s.output"), "12345")
			write(t, filepath.Join(dir, "r.yaml"), "id: r\nstates:\n  s:\n    output_file: x/s.output\n    output_size: 5\n")
		}, "outside the run's directory"},
		{"truncated output", func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "r", "s.output"), "123")
			write(t, filepath.Join(dir, "r.yaml"), "id: r\nstates:\n  s:\n    output_file: r/s.output\n    output_size: 5\n")
		}, "holds 3 bytes, the state file says 5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, dir)
			_, err := newStore(t, dir).Load(t.Context(), "r")
			if err == nil || !strings.Contains(err.Error(), tc.want) || fault.KindOf(err) == fault.Usage {
				t.Errorf("Load() = %v, want a non-usage error containing %q", err, tc.want)
			}
		})
	}
}

// TestLeftoverTempFiles puts garbage where a crashed Save leaves its temporary files: nothing
// that reads the store may notice.
func TestLeftoverTempFiles(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := newStore(t, dir, WithOutputThreshold(64))
	run := smallRun()
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, ".small.yaml.123456"+tempSuffix), "id: [garbage")
	write(t, filepath.Join(dir, ".other.yaml.42"+tempSuffix), "\x00\x01")
	write(t, filepath.Join(dir, "small", ".logs.output.1.99"+tempSuffix), "garbage")
	assertLoads(t, s, run)
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 || list[0].ID != "small" || list[0].Unreadable != "" {
		t.Errorf("List() = %+v, %v; want the one run", list, err)
	}

	// The first Save of the run in a new store deletes its leftovers, not other runs'.
	write(t, filepath.Join(dir, "small", "stale.output.1"), "a file a crash kept from deletion")
	write(t, filepath.Join(dir, ".small.yaml.x.yaml.7"+tempSuffix), "run small.yaml.x's")
	if err := newStore(t, dir, WithOutputThreshold(64)).Save(ctx, run); err != nil {
		t.Fatalf("Save over leftovers: %v", err)
	}
	assertFiles(t, dir, ".other.yaml.42"+tempSuffix, ".small.yaml.x.yaml.7"+tempSuffix, summariesFile, "small", "small.yaml")
	assertFiles(t, filepath.Join(dir, "small"), "logs.call_001.output", "logs.output")
}

// TestNewRunDoesNotReadTheRunsDirectory: the first Save of a run whose state file does not
// exist yet looks for no leftovers in the runs directory, whose size is that of every run kept
// (no earlier process can have left any of a new run); a later store saving the same run
// (a resume) does, and deletes them.
func TestNewRunDoesNotReadTheRunsDirectory(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	run := smallRun()
	leftover := ".small.yaml.77" + tempSuffix
	write(t, filepath.Join(dir, leftover), "a leftover that only a scan of the directory finds")
	if err := newStore(t, dir, WithOutputThreshold(64)).Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, leftover)); err != nil {
		t.Fatalf("the first save of a new run read the runs directory and swept %s: %v", leftover, err)
	}
	if err := newStore(t, dir, WithOutputThreshold(64)).Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, leftover)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a resumed run's first save left %s: %v", leftover, err)
	}
}

// TestListWithBadFiles is `awf history` in a directory with a corrupt and an empty state
// file, and things that are not state files: the good runs come first, the bad ones are
// listed with what is wrong, nothing fails.
func TestListWithBadFiles(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := newStore(t, dir)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"old", "new"} {
		run := &state.RunState{ID: id, Workflow: "w", Status: state.Completed, StartedAt: start.Add(time.Duration(i) * time.Hour)}
		if err := s.Save(ctx, run); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(dir, "corrupt.yaml"), "id: corrupt\nstatus: [\n")
	write(t, filepath.Join(dir, "empty.yaml"), "")
	write(t, filepath.Join(dir, "notes.txt"), "not a run")
	if err := os.Mkdir(filepath.Join(dir, "dir.yaml"), 0o700); err != nil {
		t.Fatal(err)
	}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	var ids, bad []string
	for _, r := range list {
		ids = append(ids, r.ID)
		if r.Unreadable != "" {
			bad = append(bad, r.ID)
		}
	}
	if want := []string{"new", "old", "corrupt", "empty"}; !slices.Equal(ids, want) {
		t.Errorf("List ids = %q, want %q", ids, want)
	}
	if want := []string{"corrupt", "empty"}; !slices.Equal(bad, want) {
		t.Errorf("runs listed with an error = %q, want %q", bad, want)
	}
	if !strings.Contains(list[2].Unreadable, "corrupt.yaml") || list[2].StateFile != s.Path("corrupt") {
		t.Errorf("corrupt run summary = %+v, want its error to name the file", list[2])
	}
}

// TestListReadsOnlyTheHead checks the assumption List rests on: every field of a summary is
// written before the steps. It also hides the outputs and puts text that looks like the
// steps' key inside a value, and a line longer than the reader's buffer before it.
func TestListReadsOnlyTheHead(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := newStore(t, dir, WithOutputThreshold(100))
	end := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	run := &state.RunState{
		ID: "r", Workflow: "w", Status: state.Failed, Error: "boom", StartedAt: end.Add(-time.Hour),
		Inputs: map[string]any{"long": strings.Repeat("x", 10000)}, Output: "a\nstates: fake\n", Parent: "p",
		UpdatedAt: end.Add(-55 * time.Minute),
	}
	run.StartSegment(end.Add(-50 * time.Minute)) // the first process died 5 minutes in
	run.UpdatedAt = end.Add(-40 * time.Minute)
	run.StartSegment(end.Add(-10 * time.Minute)) // ran 10 minutes, then waited 30
	run.UpdatedAt, run.FinishedAt = end, &end
	run.Step("big").Output = strings.Repeat("big\n", 100)
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.Path("r"))
	if err != nil {
		t.Fatal(err)
	}
	head, _, found := strings.Cut(string(data), "\n"+statesKey)
	for _, key := range []string{"id:", "workflow:", "status:", "started_at:", "updated_at:", "finished_at:", "error:", "parent:", "segments:"} {
		if !found || !strings.HasPrefix(head, key) && !strings.Contains(head, "\n"+key) {
			t.Errorf("%s is not written before %s: List would miss it", key, statesKey)
		}
	}
	if err := os.RemoveAll(filepath.Join(dir, "r")); err != nil {
		t.Fatal(err)
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("List() = %+v, %v; want one run", list, err)
	}
	want := ports.RunSummary{ID: "r", Workflow: "w", Status: state.Failed, StartedAt: run.StartedAt, FinishedAt: &end, Error: "boom", StateFile: s.Path("r"),
		Parent: "p", DurationMs: (25 * time.Minute).Milliseconds()}
	// Counts come from the index of finished runs (TestListReadsOnlyChangedStateFiles).
	if d := cmp.Diff(want, list[0], cmpopts.IgnoreFields(ports.RunSummary{}, "Counts")); d != "" {
		t.Errorf("List()[0] (-want +got):\n%s", d)
	}
}

func TestComponent(t *testing.T) {
	long := strings.Repeat("é", 60)
	tests := map[string]string{
		"build": "build", "call_01-x": "call_01-x", "": "%", "a.b": "a%2Eb", "../x": "%2E%2E%2Fx", "a b": "a%20b",
	}
	for in, want := range tests {
		if got := component(in); got != want {
			t.Errorf("component(%q) = %q, want %q", in, got, want)
		}
	}
	if got := component(long); len(got) > maxNameLen || got == component(long+"x") {
		t.Errorf("component(long) = %q: want at most %d bytes, distinct from a longer name", got, maxNameLen)
	}
}

func TestCallNamesDistinct(t *testing.T) {
	calls := []state.ToolCallRecord{{ID: "a"}, {ID: "a"}, {ID: ""}, {ID: "a~1"}, {ID: "b"}}
	got := callNames(calls)
	want := []string{"a", "a~1", "%~2", "a%7E1", "b"}
	if !slices.Equal(got, want) {
		t.Errorf("callNames = %q, want %q", got, want)
	}
}

func stat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func assertFiles(t *testing.T, dir string, want ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, want) {
		t.Errorf("files in %s = %q, want %q", dir, got, want)
	}
}

func assertLoads(t *testing.T, s *Store, want *state.RunState) {
	t.Helper()
	got, err := s.Load(t.Context(), want.ID)
	if err != nil {
		t.Fatalf("Load(%q): %v", want.ID, err)
	}
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("Load(%q) (-want +got):\n%s", want.ID, d)
	}
}

// TestListSeesTheJournal checks that List gives a running run's duration up to its last save,
// which is in its journal once its steps are saved there: the state file's updated_at is that
// of the last time it was written. A torn last line is left out.
func TestListSeesTheJournal(t *testing.T) {
	ctx := t.Context()
	s := newStore(t, t.TempDir())
	start := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	run := &state.RunState{ID: "r", Workflow: "w", Status: state.Running, StartedAt: start, UpdatedAt: start}
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		name := fmt.Sprint("step", i)
		run.Step(name).Status = state.Completed
		run.UpdatedAt = start.Add(time.Duration(i+1) * time.Minute)
		if err := s.AppendStep(ctx, run, name); err != nil {
			t.Fatal(err)
		}
	}
	if sizeOf(s.journalPath("r")) == 0 {
		t.Fatal("the steps were not journaled")
	}
	f, err := os.OpenFile(s.journalPath("r"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"seq":4,"updated_at":"2026-01-01T02:00:00Z","st`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("List() = %+v, %v; want one run", list, err)
	}
	if got, want := list[0].DurationMs, (3 * time.Minute).Milliseconds(); got != want {
		t.Errorf("duration of the running run = %d ms, want %d (its last journaled save)", got, want)
	}
}

// TestListReadsOnlyChangedStateFiles: a run that ends is indexed with its state file's
// identity, so that List reads a state file only when it changed since (or has no line: a
// running run, one written by an older awf); what it shows is what reading gives; a damaged
// index costs reads, never a wrong summary; List itself writes nothing.
func TestListReadsOnlyChangedStateFiles(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := newStore(t, dir)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.Add(time.Minute)
	for i, id := range []string{"a", "b", "c", "live"} {
		run := &state.RunState{ID: id, Workflow: "w", Status: state.Completed, StartedAt: start.Add(time.Duration(i) * time.Hour),
			FinishedAt: &end, Parent: "p", Segments: []state.Segment{{StartedAt: start, EndedAt: &end}}}
		if id == "live" {
			run.Status, run.FinishedAt = state.Running, nil
		}
		if id == "a" {
			run.States = map[string]*state.StepState{"agent": {Status: state.Completed, ToolCalls: []state.ToolCallRecord{
				{ID: "c1", Tool: "shell", Result: &state.ToolCallResult{Success: true}},
				{ID: "c2", Tool: "read_file", Result: &state.ToolCallResult{Denied: true}},
			}}}
		}
		if err := s.Save(ctx, run); err != nil {
			t.Fatal(err)
		}
	}
	index := filepath.Join(dir, summariesFile)
	list := func(wantReads int64) []ports.RunSummary {
		t.Helper()
		before, _ := os.ReadFile(index)
		l := newStore(t, dir) // another process
		got, err := l.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n := l.summaryReads.Load(); n != wantReads {
			t.Errorf("List read %d state files, want %d", n, wantReads)
		}
		if after, _ := os.ReadFile(index); string(after) != string(before) {
			t.Error("List wrote the index")
		}
		return got
	}
	indexed := list(1)
	for i, r := range indexed {
		want := &state.CallCounts{}
		if r.ID == "a" {
			want = &state.CallCounts{Calls: 2, Allowed: 1, Denials: 1, Tools: []string{"read_file", "shell"}}
		}
		if r.ID == "live" {
			want = nil // read, not indexed: the head does not hold the calls
		}
		if d := cmp.Diff(want, r.Counts, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("run %s: calls (-want +indexed):\n%s", r.ID, d)
		}
		indexed[i].Counts = nil
	}
	if err := os.Rename(index, index+".off"); err != nil {
		t.Fatal(err)
	}
	read := list(4)
	if d := cmp.Diff(read, indexed, cmpopts.EquateApproxTime(0)); d != "" {
		t.Errorf("the indexed summaries differ from the state files' (-read +indexed):\n%s", d)
	}
	if err := os.Rename(index+".off", index); err != nil {
		t.Fatal(err)
	}

	resumed := &state.RunState{ID: "b", Workflow: "w", Status: state.Failed, Error: "broke", StartedAt: start.Add(time.Hour), FinishedAt: &end}
	if err := newStore(t, dir).Save(ctx, resumed); err != nil {
		t.Fatal(err)
	}
	for _, r := range list(1) {
		if r.ID == "b" && (r.Status != state.Failed || r.Error != "broke") {
			t.Errorf("after a resume, List shows run b as %s %q, want failed", r.Status, r.Error)
		}
	}
	later := time.Now().Add(time.Hour) // rewritten by something that did not index it
	if err := os.Chtimes(s.Path("a"), later, later); err != nil {
		t.Fatal(err)
	}
	list(2)

	data, _ := os.ReadFile(index)
	write(t, index, "not json\n"+string(data)+`{"v":1,"file":{"ino":`)
	list(2)
	if err := os.Remove(s.Path("c")); err != nil {
		t.Fatal(err)
	}
	for _, r := range list(2) {
		if r.ID == "c" {
			t.Errorf("List shows the deleted run c: %+v", r)
		}
	}
}
