package agent_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// crashed is a step record left by a run killed while its third call ran. The arguments are
// what a state file gives back: integers as uint64, not as the model wrote them.
func crashed() *state.StepState {
	return &state.StepState{
		Status: state.Interrupted,
		ToolCalls: []state.ToolCallRecord{
			{ID: "call_1", Tool: "read_file", Arguments: map[string]any{"path": "a", "limit": uint64(10)},
				Result: &state.ToolCallResult{Success: true, Output: "A as recorded", DurationMs: 5, Approval: "auto"}},
			{ID: "call_2", Tool: "write_file", Arguments: map[string]any{"path": "b"},
				Result: &state.ToolCallResult{Success: true, Output: "written", DurationMs: 7, Approval: "user"}},
			{ID: "call_3", Tool: "write_file", Arguments: map[string]any{"path": "c"}, InFlight: true},
		},
		ToolStats: &state.ToolStats{TotalCalls: 2, Successful: 2, TotalDurationMs: 12},
		Tokens:    &state.Tokens{Input: 100, Output: 10, Total: 110},
	}
}

func TestResume(t *testing.T) {
	replay := []portstest.Reply{
		// The model asks for the same calls again (ids differ: a new conversation).
		portstest.Calls(11, call("read_file", `{"limit": 10, "path": "a"}`), call("write_file", `{"path":"b"}`)),
		portstest.Calls(13, call("write_file", `{"path":"c"}`)),
		portstest.Text("done"),
	}
	tests := []struct {
		name       string
		idempotent bool
		invoked    []string
		third      state.ToolCallResult
		content    string
	}{{
		name:    "in-flight call not idempotent",
		invoked: nil,
		third:   state.ToolCallResult{Error: "interrupted; not re-run because not idempotent: the run stopped while this call was running, so it may or may not have taken effect; check before trying it again"},
		content: "Error: interrupted; not re-run because not idempotent",
	}, {
		name:       "in-flight call idempotent",
		idempotent: true,
		invoked:    []string{"c"},
		third:      state.ToolCallResult{Success: true, Output: "write_file:c", Approval: "auto"},
		content:    "write_file:c",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, replay...)
			h.previous = crashed()
			h.tool("read_file", tool.Annotations{ReadOnly: true}, ok("read_file"))
			h.tool("write_file", tool.Annotations{Idempotent: tc.idempotent}, ok("write_file"))
			out, err := h.run(step("read_file", "write_file"))
			if err != nil {
				t.Fatal(err)
			}
			var invoked []string
			for _, r := range h.tools.Requests() {
				invoked = append(invoked, str(r.Args["path"]))
			}
			if diff := cmp.Diff(tc.invoked, invoked); diff != "" {
				t.Errorf("tools run (-want +got):\n%s", diff)
			}
			res := toolMessages(h.prov.Requests()[2])
			if res[0].Content != "A as recorded" || res[1].Content != "written" {
				t.Errorf("replayed results = %+v, want the recorded outputs", res[:2])
			}
			if !strings.HasPrefix(res[2].Content, tc.content) {
				t.Errorf("in-flight call's result = %q, want %q...", res[2].Content, tc.content)
			}
			s := h.rec.state()
			if len(s.ToolCalls) != 3 {
				t.Fatalf("%d calls recorded, want the 3 of before, not duplicated", len(s.ToolCalls))
			}
			third := s.ToolCalls[2]
			if third.InFlight || third.Result == nil {
				t.Fatalf("third call = %+v, want it closed", third)
			}
			if diff := cmp.Diff(tc.third, *third.Result); diff != "" {
				t.Errorf("third result (-want +got):\n%s", diff)
			}
			if s.ToolStats.TotalCalls != 3 {
				t.Errorf("ToolStats = %+v, want the 2 of before plus the closed one", s.ToolStats)
			}
			if out.Tokens.Total != 110 {
				t.Errorf("Tokens = %+v, want the earlier count kept", out.Tokens)
			}
			var warned bool
			for _, ev := range h.events.Events() {
				if ev.Kind == ports.Warning && strings.Contains(ev.Message, "call_3 (write_file) was in flight") {
					warned = true
				}
			}
			if !warned {
				t.Errorf("no warning about the in-flight call in %+v", h.events.Events())
			}
		})
	}
}

func TestResumeWhenTheModelGoesAnotherWay(t *testing.T) {
	h := newHarness(t,
		portstest.Calls(1, call("read_file", `{"limit": 10, "path": "a"}`), call("read_file", `{"path":"z"}`)),
		portstest.Calls(3, call("write_file", `{"path":"b"}`)),
		portstest.Text("done"))
	h.previous = crashed()
	h.tool("read_file", tool.Annotations{ReadOnly: true}, ok("read_file"))
	h.tool("write_file", tool.Annotations{}, ok("write_file"))
	if _, err := h.run(step("read_file", "write_file")); err != nil {
		t.Fatal(err)
	}
	var invoked []string
	for _, r := range h.tools.Requests() {
		invoked = append(invoked, str(r.Args["path"]))
	}
	// a is replayed; z differs, so matching ends there and b runs as a new call.
	if diff := cmp.Diff([]string{"z", "b"}, invoked); diff != "" {
		t.Errorf("tools run (-want +got):\n%s", diff)
	}
	s := h.rec.state()
	if len(s.ToolCalls) != 5 {
		t.Fatalf("%d calls recorded, want 3 earlier + 2 new", len(s.ToolCalls))
	}
	if c := s.ToolCalls[2]; c.InFlight || c.Result == nil || !strings.Contains(c.Result.Error, "did not ask for it again") {
		t.Errorf("abandoned in-flight call = %+v, want it closed as interrupted", c)
	}
}
