package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// handledCalls are what an agent CLI's server recorded: one call allowed, one denied, one
// failed, one whose result was lost.
func handledCalls() []state.ToolCallRecord {
	return []state.ToolCallRecord{
		{ID: "u-1", Tool: "read_file", Arguments: map[string]any{"path": "a.go", "limit": json.Number("20")},
			Result: &state.ToolCallResult{Success: true, Output: "package a", DurationMs: 4, Approval: ports.ByAuto}},
		{ID: "u-2", Tool: "write_file", Arguments: map[string]any{"path": "b.go"},
			Result: &state.ToolCallResult{Error: "denied: approval required", Approval: ports.ByNonInteractive, Denied: true}},
		{ID: "u-3", Tool: "read_file", Arguments: map[string]any{"path": "gone.go"},
			Result: &state.ToolCallResult{Error: "no such file", DurationMs: 1, Approval: ports.ByAuto}},
		{ID: "u-4", Tool: "read_file"},
	}
}

// TestHandledCallsAreRecorded: the calls a provider's agent made through the governed path
// go into the step's tool_calls and tool_stats, in one save, with events, and are not run;
// the reply's text is the answer.
func TestHandledCallsAreRecorded(t *testing.T) {
	reply := portstest.Text("All done.")
	reply.Response.HandledCalls = handledCalls()
	h := newHarness(t, reply)
	ran := 0
	runs := func(name string) portstest.ToolFunc {
		f := ok(name)
		return func(ctx context.Context, req ports.ToolRequest) (tool.Result, error) {
			ran++
			return f(ctx, req)
		}
	}
	h.tool("read_file", tool.Annotations{ReadOnly: true}, runs("read_file"))
	h.tool("write_file", tool.Annotations{}, runs("write_file"))
	out, err := h.run(step("read_file", "write_file"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Output != "All done." || ran != 0 || len(h.prov.Requests()) != 1 {
		t.Errorf("output %q after %d tool runs and %d requests, want the reply's text, no run, one request",
			out.Output, ran, len(h.prov.Requests()))
	}
	st := h.rec.state()
	want := handledCalls()
	want[0].Arguments["limit"] = int64(20) // numbers as for the model's calls
	want[3].Arguments = map[string]any{}
	want[3].Result = &state.ToolCallResult{Error: "the provider reported this call without its result"}
	if diff := cmp.Diff(want, st.ToolCalls); diff != "" {
		t.Errorf("tool_calls (-want +got):\n%s", diff)
	}
	wantStats := &state.ToolStats{TotalCalls: 4, Successful: 1, Failed: 2, Denied: 1, TotalDurationMs: 5}
	if diff := cmp.Diff(wantStats, st.ToolStats); diff != "" {
		t.Errorf("tool_stats (-want +got):\n%s", diff)
	}
	if h.rec.saves != 1 {
		t.Errorf("%d saves, want one for the handled calls", h.rec.saves)
	}
	type ev struct{ Tool, CallID, Meta, Status, Message string }
	var got []ev
	for _, e := range h.events.Events() {
		if e.Kind == ports.ToolFinished {
			got = append(got, ev{e.Tool, e.CallID, e.Meta, e.Status, e.Message})
		}
		if e.Kind == ports.ToolStarted {
			t.Errorf("tool_started for %s: handled calls are finished already", e.CallID)
		}
	}
	wantEv := []ev{
		{"read_file", "u-1", "read_file a.go", "ok", ""},
		{"write_file", "u-2", "write_file b.go", "denied", "denied: approval required"},
		{"read_file", "u-3", "read_file gone.go", "error", "no such file"},
		{"read_file", "u-4", "read_file ", "error", "the provider reported this call without its result"},
	}
	if diff := cmp.Diff(wantEv, got); diff != "" {
		t.Errorf("tool_finished events (-want +got):\n%s", diff)
	}
}

// TestHandledCallsWithProviderError: an agent that fails after making calls still leaves
// them in the step's state, and the step fails with the provider's error.
func TestHandledCallsWithProviderError(t *testing.T) {
	reply := portstest.Reply{Err: fault.New(fault.Execution, "cli: claude exited with status 1")}
	reply.Response.HandledCalls = handledCalls()[:1]
	h := newHarness(t, reply)
	h.tool("read_file", tool.Annotations{ReadOnly: true}, ok("read_file"))
	_, err := h.run(step("read_file"))
	if fault.KindOf(err) != fault.Execution || !strings.Contains(err.Error(), "exited with status 1") {
		t.Errorf("err = %v, want the provider's error", err)
	}
	if st := h.rec.state(); len(st.ToolCalls) != 1 || st.ToolCalls[0].ID != "u-1" || st.ToolStats == nil || st.ToolStats.TotalCalls != 1 {
		t.Errorf("tool_calls = %+v, stats %+v; want the handled call recorded", st.ToolCalls, st.ToolStats)
	}
}

// TestHandledCallsNextToModelCalls: a reply may carry both; the handled calls are recorded
// first, and the model's calls run as usual, after them in tool_calls.
func TestHandledCallsNextToModelCalls(t *testing.T) {
	first := portstest.Calls(1, call("read_file", `{"path":"b"}`))
	first.Response.HandledCalls = handledCalls()[:1]
	h := newHarness(t, first, portstest.Text("done"))
	h.tool("read_file", tool.Annotations{ReadOnly: true}, ok("read_file"))
	if _, err := h.run(step("read_file")); err != nil {
		t.Fatal(err)
	}
	st := h.rec.state()
	if ids := callIDs(st.ToolCalls); !cmp.Equal(ids, []string{"u-1", "call_1"}) {
		t.Errorf("tool_calls ids = %v, want the handled call, then the model's", ids)
	}
	if st.ToolStats.TotalCalls != 2 || st.ToolStats.Successful != 2 {
		t.Errorf("tool_stats = %+v, want 2 successful calls", st.ToolStats)
	}
	if msgs := toolMessages(h.prov.Requests()[1]); len(msgs) != 1 || msgs[0].ToolCallID != "call_1" {
		t.Errorf("tool results sent to the model = %+v, want only call_1's", msgs)
	}
}

func callIDs(calls []state.ToolCallRecord) []string {
	ids := make([]string, len(calls))
	for i, c := range calls {
		ids[i] = c.ID
	}
	return ids
}
