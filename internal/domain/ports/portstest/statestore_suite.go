package portstest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// StateStoreSuite checks that a [ports.StateStore] keeps the port's contract: every field of a
// run survives a Save and Load (multi-line, unicode and non-UTF-8 text, megabyte outputs,
// nested dynamic values), Save neither keeps nor changes the caller's value, unknown and
// invalid ids are fault.Usage errors, List is newest first, and concurrent Saves are safe.
// newStore must return an empty store each time it is called.
//
// Times are compared as instants, and a nil map or slice equals an empty one. Dynamic values
// use the types a YAML or JSON round trip gives (map[string]any, []any, int, float64, string,
// bool, nil); a store may return other types as those.
func StateStoreSuite(t *testing.T, newStore func(t *testing.T) ports.StateStore) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, s ports.StateStore)
	}{
		{"RoundTripEveryField", testRoundTripEveryField},
		{"RoundTripMinimal", testRoundTripMinimal},
		{"SaveDoesNotModify", testSaveDoesNotModify},
		{"NoAliasing", testNoAliasing},
		{"Overwrite", testOverwrite},
		{"UnknownID", testUnknownID},
		{"InvalidID", testInvalidID},
		{"ListNewestFirst", testListNewestFirst},
		{"ListEmpty", testListEmpty},
		{"ConcurrentSaves", testConcurrentSaves},
		{"Lock", testLock},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

// suiteTime is when the suite's runs start. Some times are in another zone on purpose: a
// store may return an instant in any zone.
var suiteTime = time.Date(2026, 3, 1, 10, 0, 0, 123456789, time.UTC)

func at(d time.Duration) *time.Time {
	t := suiteTime.Add(d)
	return &t
}

// bigText returns about n bytes of multi-line unicode text.
func bigText(n int, tag string) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s line %06d: ünïcödé 漢字 🎉 {\"k\": [1, 2]} # not a comment\n", tag, i)
	}
	return b.String()
}

// trickyText is output a YAML writer must not change: leading blanks, CRLF, tabs, trailing
// spaces, YAML syntax, control characters and wide unicode.
const trickyText = "  starts indented\r\nthen CRLF\n\tand a tab\ntrailing spaces   \n" +
	"key: value\n- item\n# comment\n---\n...\n\"quoted\" 'single' \\backslash\n" +
	"nul\x00 bell\a esc\x1b del\x7f nel\u0085 ls\u2028 bom\ufeff\n" +
	"emoji 🎉 zwj 👩‍💻 combining é rtl עברית cjk 漢字\n\n\n"

// fullRun returns a run in which every field of every state type is set.
func fullRun(id string) *state.RunState {
	exit0, exit2 := 0, 2
	return &state.RunState{
		ID: id, Workflow: "suite", WorkflowFile: "workflows/suite.yaml", Status: state.Running,
		Inputs: map[string]any{
			"feature": "add a flag\nwith two lines\n", "count": 3, "ratio": 0.5, "negative": -7,
			"big": 1e20, "whole": 2.0, "yes": "yes", "empty": "", "flags": []any{true, false, nil},
			"nested": map[string]any{"list": []any{1, "two", 3.5, map[string]any{"deep": "x"}}},
		},
		StartedAt:  suiteTime,
		UpdatedAt:  suiteTime.Add(time.Minute).In(time.FixedZone("CEST", 2*60*60)),
		FinishedAt: at(2 * time.Minute),
		Error:      "step \"tests\" failed: exit status 2",
		Output:     "final output\nover two lines\n",
		Resumed:    2,
		Parent:     "parent-run",
		Segments:   []state.Segment{{StartedAt: suiteTime, EndedAt: at(time.Minute)}, {StartedAt: suiteTime.Add(90 * time.Second)}},
		WorkDir:    "/work/ünï dir",
		States: map[string]*state.StepState{
			"plan":    fullStep(&exit0),
			"big":     bigStep(),
			"binary":  {Status: state.Completed, Output: "raw \xff\xfe bytes\x00\x80 not UTF-8\n", ExitCode: &exit2},
			"skipped": {Status: state.Skipped},
		},
		Order:   []string{"plan", "big", "binary", "skipped"},
		Sources: map[string]string{"/work/ünï dir/wf.yaml": "sha256:00ff", "/work/ünï dir/.awf/wrapped-tools/x.tool": state.SourceMissing},
		Overrides: []state.Override{
			{At: suiteTime.Add(time.Hour), Flag: state.ForceFlag, Changed: []string{"/work/wf.yaml (changed)"}},
			{At: suiteTime.Add(2 * time.Hour), Flag: state.FromLastValidFlag, Dropped: "journal line 7: bad"},
		},
	}
}

func fullStep(exit *int) *state.StepState {
	return &state.StepState{
		Status: state.Completed,
		Output: trickyText,
		Response: map[string]any{
			"files": []any{"a.go", "b.go"}, "count": 2, "score": 0.75, "ok": true, "none": nil,
			"text": "multi\nline\n", "meta": map[string]any{"deeper": map[string]any{"list": []any{1, "two", 3.5}}},
		},
		ExitCode: exit, Command: [][]string{{"go", "test", "./..."}, {"echo", "a b; c"}},
		Stderr: "warning: something\nsecond line\n", Error: "attempt 1: timeout",
		Attempts: 2, StartedAt: at(10 * time.Second), FinishedAt: at(20 * time.Second), DurationMs: 10000,
		ToolCalls: []state.ToolCallRecord{
			{ID: "call_001", Tool: "read_file", Arguments: map[string]any{"path": "src/index.ts", "offset": 10},
				Result: &state.ToolCallResult{Success: true, Output: "file contents...\nline 2\n", DurationMs: 15, Approval: "auto", Cached: true,
					Command: [][]string{{"rg", "--", "x y"}}, Changes: []state.FileChange{
						{Path: "a.txt", After: "sha256:ab", Diff: "--- a.txt\n+++ a.txt\n@@ -0,0 +1 @@\n+x\n"},
						{Path: "b.bin", Before: "sha256:cd", After: "sha256:ef", DiffOmitted: "binary"}}}},
			{ID: "call_002", Tool: "write_file", Arguments: map[string]any{"path": "src/feature.ts", "content": "package main\n\nfunc main() {}\n", "append": false},
				Result: &state.ToolCallResult{Error: "denied by policy", DurationMs: 23, Approval: "user", Denied: true, Truncated: true,
					Layer: "L1 os.Root", Rule: "protect"},
				Intent: map[string]any{"sha256": "9f86d081884c7d65", "size_before": "12"}, Outcome: state.OutcomeUnknown,
				Recovery: &state.Recovery{Decision: state.RecoveryUnknown, By: state.RecoveredByNonInteractive, Detail: "no check"}},
			{ID: "call_003", Tool: "shell", Arguments: map[string]any{"command": "go test ./..."}, InFlight: true},
		},
		ToolStats: &state.ToolStats{TotalCalls: 3, Successful: 1, Failed: 1, Denied: 1, TotalDurationMs: 38},
		Tokens:    &state.Tokens{Input: 100, Output: 50, Total: 150},
		Turns: []state.Turn{{FinishReason: "tool_calls", Divergence: "messages[3]: the call failed now",
			Usage: &state.Tokens{Input: 10, Output: 5, Total: 15}, Text: "Let me read it.", Calls: []string{"call_001"}},
			{FinishReason: "length"}},
		Agent: &state.AgentRecord{Provider: "claude", Model: "m-1", Endpoint: "api.example.com", Cassette: "c.yaml"},
		Conversation: &state.Conversation{Turns: 2, StoppedBy: "stop_condition", Messages: []state.Message{
			{Role: "system", Content: "You are a careful engineer.\nUse tools."},
			{Role: "user", Content: "Implement the feature."},
			{Role: "assistant", Content: "Reading first.", ToolCalls: []state.CallRef{{ID: "call_001", Name: "read_file", Arguments: `{"path":"src/index.ts"}`}},
				Thinking: []state.Thinking{{Text: "Read the entry point.\nThen decide.", Signature: "EqQBCgIYAhIM"}, {Redacted: "EmwKAhgBEgy3"}}},
			{Role: "tool", ToolCallID: "call_001", Name: "read_file", Content: "file contents...", IsError: true},
		}},
		Vars: map[string]string{"NAME": "value\nwith a newline", "EMPTY": ""},
	}
}

// bigStep has a 1 MB output, a 100 KB tool call output and a message repeating it, more than
// a store keeps inline.
func bigStep() *state.StepState {
	return &state.StepState{
		Status: state.Completed, Output: bigText(1<<20, "step"),
		ToolCalls: []state.ToolCallRecord{
			{ID: "call_big", Tool: "shell", Arguments: map[string]any{"command": "cat big.log"},
				Result: &state.ToolCallResult{Success: true, Output: bigText(100<<10, "call"), DurationMs: 5}},
			{ID: "call_small", Tool: "shell", Arguments: map[string]any{},
				Result: &state.ToolCallResult{Success: true, Output: "small\n", DurationMs: 1}},
		},
		// The tool's reply repeats its large output, as in conversation mode.
		Conversation: &state.Conversation{Turns: 1, Messages: []state.Message{
			{Role: "tool", ToolCallID: "call_big", Name: "shell", Content: bigText(100<<10, "call")},
		}},
	}
}

func testRoundTripEveryField(t *testing.T, s ports.StateStore) {
	want := fullRun("run-full")
	if err := s.Save(t.Context(), want); err != nil {
		t.Fatalf("Save: %v", err)
	}
	got, err := s.Load(t.Context(), want.ID)
	if err != nil {
		t.Fatalf("Load(%q): %v", want.ID, err)
	}
	if d := diffValues(got, want); d != "" {
		t.Errorf("Load(%q) differs from the run saved: %s", want.ID, d)
	}
}

func testRoundTripMinimal(t *testing.T, s ports.StateStore) {
	want := &state.RunState{ID: "run-min", Workflow: "w", Status: state.Pending, StartedAt: suiteTime}
	if err := s.Save(t.Context(), want); err != nil {
		t.Fatalf("Save: %v", err)
	}
	got, err := s.Load(t.Context(), want.ID)
	if err != nil {
		t.Fatalf("Load(%q): %v", want.ID, err)
	}
	if d := diffValues(got, want); d != "" {
		t.Errorf("Load(%q) differs from the run saved: %s", want.ID, d)
	}
}

func testSaveDoesNotModify(t *testing.T, s ports.StateStore) {
	run := fullRun("run-unmodified")
	before := fullRun("run-unmodified") // built afresh: a copy could share what Save changes
	if err := s.Save(t.Context(), run); err != nil {
		t.Fatalf("Save: %v", err)
	}
	if d := diffValues(run, before); d != "" {
		t.Errorf("Save changed the run it was given: %s", d)
	}
	if big := run.States["big"]; big.OutputFile != "" || big.ToolCalls[0].Result.OutputFile != "" {
		t.Errorf("Save set OutputFile on the caller's run: %q, %q", big.OutputFile, big.ToolCalls[0].Result.OutputFile)
	}
}

// testNoAliasing changes a saved run and a loaded one in place; neither change may reach the
// store.
func testNoAliasing(t *testing.T, s ports.StateStore) {
	ctx := t.Context()
	run := fullRun("run-alias")
	want := fullRun("run-alias")
	if err := s.Save(ctx, run); err != nil {
		t.Fatalf("Save: %v", err)
	}
	mutate(run)
	first, err := s.Load(ctx, run.ID)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if d := diffValues(first, want); d != "" {
		t.Fatalf("changing the run after Save changed what Load returns: %s", d)
	}
	mutate(first)
	second, err := s.Load(ctx, run.ID)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if d := diffValues(second, want); d != "" {
		t.Errorf("changing a loaded run changed what the next Load returns: %s", d)
	}
}

// mutate changes r in place, down to nested dynamic values.
func mutate(r *state.RunState) {
	r.Inputs["nested"].(map[string]any)["list"].([]any)[0] = "changed"
	r.Order[0] = "changed"
	plan := r.States["plan"]
	plan.Response.(map[string]any)["meta"].(map[string]any)["deeper"].(map[string]any)["list"].([]any)[1] = "changed"
	plan.ToolCalls[0].Arguments["path"] = "changed"
	plan.ToolCalls[0].Result.Output = "changed"
	plan.Conversation.Messages[2].ToolCalls[0].Name = "changed"
	plan.Vars["NAME"] = "changed"
	*plan.ExitCode = 99
	*plan.StartedAt = plan.StartedAt.AddDate(1, 0, 0)
	plan.Tokens.Total = 99
	delete(r.States, "skipped")
}

// testOverwrite saves three versions of a run whose outputs grow, shrink and change; Load
// must return the last.
func testOverwrite(t *testing.T, s ports.StateStore) {
	ctx := t.Context()
	run := fullRun("run-over")
	versions := []func(r *state.RunState){
		func(r *state.RunState) {},
		func(r *state.RunState) { // big becomes small, small becomes big, a step goes, one comes
			r.Status = state.Failed
			r.States["big"].Output = "now small\n"
			r.States["plan"].Output = bigText(200<<10, "grown")
			r.States["big"].ToolCalls[0].Result.Output = "small too"
			delete(r.States, "skipped")
			r.States["added"] = &state.StepState{Status: state.Running, Output: bigText(70<<10, "added")}
			r.Order = []string{"plan", "big", "binary", "added"}
		},
		func(r *state.RunState) { // a large output changes to another large one of the same size
			r.Status = state.Completed
			r.States["plan"].Output = strings.Replace(r.States["plan"].Output, "grown", "GROWN", 1)
			r.States["added"].Output = bigText(70<<10, "added")
		},
	}
	for i, change := range versions {
		change(run)
		if err := s.Save(ctx, run); err != nil {
			t.Fatalf("Save version %d: %v", i, err)
		}
		got, err := s.Load(ctx, run.ID)
		if err != nil {
			t.Fatalf("Load version %d: %v", i, err)
		}
		if d := diffValues(got, run); d != "" {
			t.Errorf("Load after Save of version %d: %s", i, d)
		}
	}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(list) != 1 || list[0].ID != run.ID || list[0].Status != state.Completed {
		t.Errorf("List after overwrites = %+v, want one completed run %q", list, run.ID)
	}
}

func testUnknownID(t *testing.T, s ports.StateStore) {
	_, err := s.Load(t.Context(), "no-such-run")
	if fault.KindOf(err) != fault.Usage || !strings.Contains(fmt.Sprint(err), "no-such-run") {
		t.Errorf("Load(unknown) = %v (kind %v), want a usage error naming the id", err, fault.KindOf(err))
	}
}

func testInvalidID(t *testing.T, s ports.StateStore) {
	for _, id := range []string{"", ".", "..", "../escape", "a/b", `a\b`, "/abs"} {
		err := s.Save(t.Context(), &state.RunState{ID: id, Workflow: "w", StartedAt: suiteTime})
		if fault.KindOf(err) != fault.Usage {
			t.Errorf("Save(id %q) = %v (kind %v), want a usage error", id, err, fault.KindOf(err))
		}
		if _, err := s.Load(t.Context(), id); fault.KindOf(err) != fault.Usage {
			t.Errorf("Load(%q) = %v (kind %v), want a usage error", id, err, fault.KindOf(err))
		}
	}
}

func testListNewestFirst(t *testing.T, s ports.StateStore) {
	ctx := t.Context()
	starts := map[string]time.Duration{"run-a": time.Hour, "run-b": 3 * time.Hour, "run-c": 2 * time.Hour}
	for _, id := range []string{"run-c", "run-a", "run-b"} {
		run := &state.RunState{ID: id, Workflow: "wf-" + id, Status: state.Completed, StartedAt: suiteTime.Add(starts[id])}
		if id == "run-b" {
			run.Status, run.Error, run.FinishedAt = state.Failed, "it broke", at(4*time.Hour)
			run.States = map[string]*state.StepState{"big": {Status: state.Failed, Output: bigText(100<<10, "b")}}
		}
		if err := s.Save(ctx, run); err != nil {
			t.Fatalf("Save(%s): %v", id, err)
		}
	}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	var ids []string
	for _, r := range list {
		ids = append(ids, r.ID)
	}
	if want := []string{"run-b", "run-c", "run-a"}; !slices.Equal(ids, want) {
		t.Fatalf("List ids = %q, want %q", ids, want)
	}
	want := ports.RunSummary{ID: "run-b", Workflow: "wf-run-b", Status: state.Failed, StartedAt: suiteTime.Add(3 * time.Hour),
		FinishedAt: at(4 * time.Hour), Error: "it broke", StateFile: s.Path("run-b"), DurationMs: time.Hour.Milliseconds()}
	// Counts are what a store may add from an index of finished runs: when there, they are
	// the run's.
	if c := list[0].Counts; c != nil && (c.Calls != 0 || c.Allowed != 0 || c.Denials != 0 || len(c.Tools) != 0) {
		t.Errorf("List()[0].Counts = %+v, want no calls", *c)
	}
	got := list[0]
	got.Counts = nil
	if d := diffValues(got, want); d != "" {
		t.Errorf("List()[0]: %s", d)
	}
	if p := s.Path("run-b"); p == "" || !strings.Contains(p, "run-b") || p == s.Path("run-a") {
		t.Errorf("Path(%q) = %q, want a path naming the run", "run-b", p)
	}
	if got, err := s.IDs(ctx); err != nil || !slices.Equal(got, []string{"run-a", "run-b", "run-c"}) {
		t.Errorf("IDs() = %q, %v; want the ids in order", got, err)
	}
}

func testListEmpty(t *testing.T, s ports.StateStore) {
	list, err := s.List(t.Context())
	if err != nil || len(list) != 0 {
		t.Errorf("List() on an empty store = %v, %v; want nothing", list, err)
	}
	if ids, err := s.IDs(t.Context()); err != nil || len(ids) != 0 {
		t.Errorf("IDs() on an empty store = %v, %v; want nothing", ids, err)
	}
}

// testConcurrentSaves saves several runs from several goroutines, and one run from several
// goroutines at once (as parallel steps do); run it with -race.
func testConcurrentSaves(t *testing.T, s ports.StateStore) {
	ctx := t.Context()
	shared := fullRun("run-shared")
	const workers, saves = 4, 5
	var wg sync.WaitGroup
	errs := make(chan error, 2*workers*saves)
	for w := range workers {
		wg.Go(func() {
			own := &state.RunState{ID: fmt.Sprintf("run-w%d", w), Workflow: "w", StartedAt: suiteTime}
			for i := range saves {
				own.Step(fmt.Sprintf("s%d", i)).Output = bigText(i*30<<10, "w")
				errs <- s.Save(ctx, own)
				errs <- s.Save(ctx, shared)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent Save: %v", err)
		}
	}
	got, err := s.Load(ctx, shared.ID)
	if err != nil {
		t.Fatalf("Load(%q): %v", shared.ID, err)
	}
	if d := diffValues(got, shared); d != "" {
		t.Errorf("Load(%q) after concurrent Saves: %s", shared.ID, d)
	}
	for w := range workers {
		id := fmt.Sprintf("run-w%d", w)
		got, err := s.Load(ctx, id)
		if err != nil {
			t.Errorf("Load(%q): %v", id, err)
		} else if len(got.States) != saves {
			t.Errorf("Load(%q) has %d steps, want %d", id, len(got.States), saves)
		}
	}
}

// diffValues describes the first difference between got and want, or returns "" if they are
// the same. Times are compared as instants and a nil map or slice equals an empty one; dynamic
// values must have the same types. The domain takes no go-cmp, so this is small and stdlib.
func diffValues(got, want any) string {
	return firstDiff("", reflect.ValueOf(got), reflect.ValueOf(want))
}

var timeType = reflect.TypeFor[time.Time]()

func firstDiff(path string, got, want reflect.Value) string {
	if !got.IsValid() || !want.IsValid() {
		if got.IsValid() != want.IsValid() {
			return fmt.Sprintf("%s: got %s, want %s", orRoot(path), describe(got), describe(want))
		}
		return ""
	}
	if got.Type() != want.Type() {
		return fmt.Sprintf("%s: got %s, want %s", orRoot(path), describe(got), describe(want))
	}
	if got.Type() == timeType {
		if g, w := got.Interface().(time.Time), want.Interface().(time.Time); !g.Equal(w) {
			return fmt.Sprintf("%s: got %v, want %v", orRoot(path), g, w)
		}
		return ""
	}
	switch got.Kind() {
	case reflect.Pointer, reflect.Interface:
		if got.IsNil() || want.IsNil() {
			if got.IsNil() != want.IsNil() {
				return fmt.Sprintf("%s: got %s, want %s", orRoot(path), describe(got), describe(want))
			}
			return ""
		}
		return firstDiff(path, got.Elem(), want.Elem())
	case reflect.Struct:
		for i := range got.NumField() {
			if d := firstDiff(path+"."+got.Type().Field(i).Name, got.Field(i), want.Field(i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		return mapDiff(path, got, want)
	case reflect.Slice, reflect.Array:
		if got.Len() != want.Len() {
			return fmt.Sprintf("%s: got %d elements, want %d", orRoot(path), got.Len(), want.Len())
		}
		for i := range got.Len() {
			if d := firstDiff(fmt.Sprintf("%s[%d]", path, i), got.Index(i), want.Index(i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.String:
		return stringDiff(path, got.String(), want.String())
	}
	if !got.Equal(want) {
		return fmt.Sprintf("%s: got %s, want %s", orRoot(path), describe(got), describe(want))
	}
	return ""
}

func mapDiff(path string, got, want reflect.Value) string {
	keys := want.MapKeys()
	slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	for _, k := range keys {
		p := fmt.Sprintf("%s[%q]", path, fmt.Sprint(k))
		g := got.MapIndex(k)
		if !g.IsValid() {
			return p + ": missing"
		}
		if d := firstDiff(p, g, want.MapIndex(k)); d != "" {
			return d
		}
	}
	for _, k := range got.MapKeys() {
		if !want.MapIndex(k).IsValid() {
			return fmt.Sprintf("%s[%q]: unexpected, %s", path, fmt.Sprint(k), describe(got.MapIndex(k)))
		}
	}
	return ""
}

// stringDiff shows where two strings part, without printing a megabyte of output.
func stringDiff(path, got, want string) string {
	if got == want {
		return ""
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(i-20, 0)
	return fmt.Sprintf("%s: strings of %d and %d bytes differ at byte %d: got %q, want %q",
		orRoot(path), len(got), len(want), i, excerpt(got, from), excerpt(want, from))
}

func excerpt(s string, from int) string {
	return s[min(from, len(s)):min(from+60, len(s))]
}

func describe(v reflect.Value) string {
	if !v.IsValid() {
		return "nothing"
	}
	if v.Kind() == reflect.String {
		return fmt.Sprintf("%q", excerpt(v.String(), 0))
	}
	return fmt.Sprintf("%#v", v.Interface())
}

func orRoot(path string) string {
	if path == "" {
		return "value"
	}
	return strings.TrimPrefix(path, ".")
}

// testLock checks that a run has one owner at a time: a second Lock is a *ports.RunBusyError
// of kind fault.Usage naming the owner, and unlocking frees the run.
func testLock(t *testing.T, s ports.StateStore) {
	ctx := t.Context()
	if _, ok := s.Owner("run-lock"); ok {
		t.Fatal("Owner of a run never locked: ok")
	}
	unlock, err := s.Lock(ctx, "run-lock")
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	o, ok := s.Owner("run-lock")
	if !ok || o.PID == 0 || o.Host == "" {
		t.Errorf("Owner of a locked run = %+v, %v; want its pid and host", o, ok)
	}
	_, err = s.Lock(ctx, "run-lock")
	var busy *ports.RunBusyError
	if !errors.As(err, &busy) || fault.KindOf(err) != fault.Usage {
		t.Fatalf("second Lock: %v (%T); want a *ports.RunBusyError of kind usage", err, err)
	}
	if busy.Owner.PID != o.PID || !strings.Contains(err.Error(), fmt.Sprint(o.PID)) || !strings.Contains(err.Error(), o.Host) {
		t.Errorf("second Lock: %v; want the owner %+v named", err, o)
	}
	other, err := s.Lock(ctx, "run-other")
	if err != nil {
		t.Fatalf("Lock of another run: %v", err)
	}
	other()
	unlock()
	unlock() // twice is harmless
	if _, ok := s.Owner("run-lock"); ok {
		t.Error("Owner after unlock: ok")
	}
	again, err := s.Lock(ctx, "run-lock")
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	again()
	if _, err := s.Lock(ctx, "../x"); fault.KindOf(err) != fault.Usage {
		t.Errorf("Lock(\"../x\") = %v; want a usage error", err)
	}
}
