package statestore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/state"
)

// TestRunEncoderMatchesEncodeYAML checks that assembling a state file from cached steps gives
// exactly the YAML of the whole run, as the run changes in place between encodings.
func TestRunEncoderMatchesEncodeYAML(t *testing.T) {
	run := smallRun()
	run.States["tricky"] = &state.StepState{Status: state.Failed, Output: " lead\r\n\n\nx\n\n", Response: map[string]any{"n": 1.5, "l": []any{"a\nb", nil}}}
	run.States["n"] = nil
	changes := []func(){
		func() {},
		func() { run.States["build"].Output = "changed\n\nin place\n" },
		func() { run.States["logs"].ToolCalls[0].Arguments["path"] = "b.txt" },
		func() { run.Step("new step").Output = "added" },
		func() { delete(run.States, "build"); run.Status = state.Completed },
		func() { run.States["tricky"].Response.(map[string]any)["l"].([]any)[1] = "nested change" },
		func() { run.States = map[string]*state.StepState{} },
		func() { run.States = nil },
		func() { run.Step("again").Output = "x" },
		func() { run.Order = append(run.Order, "multi\nline name", " spaced", "yes") },
		func() { run.Order = run.Order[:1] },
		func() { run.Order[0] = "changed in place" },
		func() { run.Order = nil },
		func() { run.Order = []string{} },
	}
	var enc runEncoder
	for i, change := range changes {
		change()
		parts, err := enc.encode(run)
		if err != nil {
			t.Fatalf("change %d: encode: %v", i, err)
		}
		got := strings.Join(parts, "")
		want, err := encodeYAML(run)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("change %d: runEncoder.encode differs from encodeYAML (-want +got):\n%s", i, d)
		}
		if back, err := decodeRun([]byte(got)); err != nil || len(back.States) != len(run.States) {
			t.Errorf("change %d: decode: %v", i, err)
		}
	}
}

func TestRunEncoderMatchesEncodeYAMLBig(t *testing.T) {
	run := benchRun(50, 0)
	var enc runEncoder
	for i := range 3 {
		run.States[fmt.Sprintf("step%04d", i)].Output = fmt.Sprintf("now %d\n", i)
		parts, err := enc.encode(run)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(parts, "")
		want, _ := encodeYAML(run)
		if got != want {
			t.Fatalf("encode %d differs from encodeYAML:\n%s", i, cmp.Diff(want, got))
		}
	}
}

func TestDeepCopySharesNothing(t *testing.T) {
	exit, wantExit := 1, 1
	st := &state.StepState{ExitCode: &exit, Response: map[string]any{"l": []any{map[string]any{"k": "v"}}},
		ToolCalls: []state.ToolCallRecord{{Arguments: map[string]any{"a": 1}, Result: &state.ToolCallResult{Output: "o"}}},
		Vars:      map[string]string{"k": "v"}}
	c := deepCopy(st)
	if d := cmp.Diff(st, c); d != "" {
		t.Fatalf("deepCopy differs (-orig +copy):\n%s", d)
	}
	*st.ExitCode = 2
	st.Response.(map[string]any)["l"].([]any)[0].(map[string]any)["k"] = "changed"
	st.ToolCalls[0].Arguments["a"] = 2
	st.ToolCalls[0].Result.Output = "changed"
	st.Vars["k"] = "changed"
	want := &state.StepState{ExitCode: &wantExit, Response: map[string]any{"l": []any{map[string]any{"k": "v"}}},
		ToolCalls: []state.ToolCallRecord{{Arguments: map[string]any{"a": 1}, Result: &state.ToolCallResult{Output: "o"}}},
		Vars:      map[string]string{"k": "v"}}
	if d := cmp.Diff(want, c); d != "" {
		t.Errorf("changing the original changed the copy (-want +got):\n%s", d)
	}
}
