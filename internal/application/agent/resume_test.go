package agent_test

import (
	"context"
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

// askedAgain is the resumed model asking for the calls of crashed() again (ids differ: a new
// conversation), then answering.
func askedAgain() []portstest.Reply {
	return []portstest.Reply{
		portstest.Calls(11, call("read_file", `{"limit": 10, "path": "a"}`), call("write_file", `{"path":"b"}`)),
		portstest.Calls(13, call("write_file", `{"path":"c"}`)),
		portstest.Text("done"),
	}
}

func TestResume(t *testing.T) {
	replay := askedAgain()
	tests := []struct {
		name       string
		idempotent bool
		invoked    []string
		third      state.ToolCallResult
		content    string
		outcome    string
		recovery   state.Recovery
	}{{
		name:    "in-flight call not idempotent",
		invoked: nil,
		third: state.ToolCallResult{Approval: "non_interactive", Error: "outcome unknown: the run stopped while this call was in flight (about to run, or running), " +
			"so it may or may not have taken effect, and awf could not check; it was not run again: check before trying it again"},
		content:  "Error: outcome unknown",
		outcome:  state.OutcomeUnknown,
		recovery: state.Recovery{Decision: "unknown", By: "non_interactive", Detail: "the tool declares no check and is not idempotent, and nobody could be asked"},
	}, {
		name:       "in-flight call idempotent",
		idempotent: true,
		invoked:    []string{"c"},
		third:      state.ToolCallResult{Success: true, Output: "write_file:c", Approval: "auto"},
		content:    "write_file:c",
		recovery:   state.Recovery{Decision: "rerun", By: "idempotent"},
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
			if third.Outcome != tc.outcome || third.Recovery == nil || *third.Recovery != tc.recovery {
				t.Errorf("third call: outcome %q, recovery %+v; want %q, %+v", third.Outcome, third.Recovery, tc.outcome, tc.recovery)
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

// checker is a tool.Checker whose check gives verdict, and which records the intent of a
// call as {"path": its path}.
type checker struct {
	verdict tool.Verdict
	checked []map[string]any
}

func (c *checker) Checks() bool { return true }

func (c *checker) Intent(_ context.Context, call tool.Invocation) map[string]any {
	return map[string]any{"path": call.Args["path"]}
}

func (c *checker) Check(_ context.Context, _ tool.Invocation, intent map[string]any) tool.Check {
	c.checked = append(c.checked, intent)
	return tool.Check{Verdict: c.verdict, Detail: "looked"}
}

// TestResumeSettlesTheCallInFlight: the call a crash cut off (not idempotent) is settled by
// its tool's check when it has one, else by the person, else reported to the model as of
// unknown outcome; it is run again only when the check or the person says so. The decision
// is recorded in the state and the audit log.
func TestResumeSettlesTheCallInFlight(t *testing.T) {
	replay := askedAgain()
	tests := []struct {
		name     string
		verdict  tool.Verdict // "" for a tool without a check
		answer   ports.Settlement
		askErr   error
		ran      bool
		success  bool
		recovery state.Recovery
		audit    string
	}{
		{name: "check: it took effect", verdict: tool.VerdictDone, success: true,
			recovery: state.Recovery{Decision: "done", By: "check", Detail: "looked"}, audit: "ok"},
		{name: "check: it did not", verdict: tool.VerdictNotDone, ran: true, success: true,
			recovery: state.Recovery{Decision: "rerun", By: "check", Detail: "looked"}, audit: "unknown"},
		{name: "check cannot tell, nobody to ask", verdict: tool.VerdictUnknown, askErr: ports.ErrNoApprover,
			recovery: state.Recovery{Decision: "unknown", By: "non_interactive",
				Detail: "its check could not tell: looked; the tool is not idempotent, and nobody could be asked"}, audit: "unknown"},
		{name: "the person: run again", answer: ports.SettleRerun, ran: true, success: true,
			recovery: state.Recovery{Decision: "rerun", By: "user"}, audit: "unknown"},
		{name: "the person: skip", answer: ports.SettleSkip,
			recovery: state.Recovery{Decision: "skip", By: "user"}, audit: "unknown"},
		{name: "the person: it is done", answer: ports.SettleDone, success: true,
			recovery: state.Recovery{Decision: "done", By: "user"}, audit: "ok"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, replay...)
			prev := crashed()
			prev.ToolCalls[2].Intent = map[string]any{"path": "c as intended"}
			h.previous = prev
			h.settler = settlerFunc(func(context.Context, ports.SettleRequest) (ports.Settlement, error) { return tc.answer, tc.askErr })
			h.tool("read_file", tool.Annotations{ReadOnly: true}, ok("read_file"))
			h.tool("write_file", tool.Annotations{}, ok("write_file"))
			c := &checker{verdict: tc.verdict}
			if tc.verdict != "" {
				info := h.catalog["write_file"]
				info.Checker = c
				h.catalog["write_file"] = info
			}
			if _, err := h.run(step("read_file", "write_file")); err != nil {
				t.Fatal(err)
			}
			if ran := len(h.tools.Requests()) == 1; ran != tc.ran {
				t.Errorf("the cut-off call ran again: %v, want %v", ran, tc.ran)
			}
			if tc.verdict != "" && (len(c.checked) != 1 || c.checked[0]["path"] != "c as intended") {
				t.Errorf("checks = %v, want one with the recorded intent", c.checked)
			}
			third := h.rec.state().ToolCalls[2]
			if third.Result == nil || third.Result.Success != tc.success || third.InFlight {
				t.Errorf("third call = %+v, want closed with success %v", third, tc.success)
			}
			if third.Recovery == nil || *third.Recovery != tc.recovery {
				t.Errorf("recovery = %+v, want %+v", third.Recovery, tc.recovery)
			}
			wantOutcome := ""
			if !tc.success {
				wantOutcome = state.OutcomeUnknown
			}
			if third.Outcome != wantOutcome {
				t.Errorf("outcome = %q, want %q", third.Outcome, wantOutcome)
			}
			if tc.ran && tc.verdict != "" && third.Intent["path"] != "c" {
				t.Errorf("intent of the new run = %v, want the one recorded before it ran", third.Intent)
			}
			if len(h.audit) != 1 || h.audit[0].CallID != "call_3" || h.audit[0].Outcome != tc.audit ||
				h.audit[0].Recovery == nil || *h.audit[0].Recovery != tc.recovery {
				t.Errorf("audit = %+v, want one record closing call_3 with outcome %s and the decision", h.audit, tc.audit)
			}
		})
	}
}

type settlerFunc func(context.Context, ports.SettleRequest) (ports.Settlement, error)

func (f settlerFunc) Settle(ctx context.Context, req ports.SettleRequest) (ports.Settlement, error) {
	return f(ctx, req)
}

// TestIntentRecordedBeforeTheCall: a tool with a check has its intent saved with the call's
// in-flight record, before the call runs.
func TestIntentRecordedBeforeTheCall(t *testing.T) {
	h := newHarness(t, portstest.Calls(1, call("write_file", `{"path":"a.go"}`)), portstest.Text("done"))
	h.tool("write_file", tool.Annotations{}, ok("write_file"))
	info := h.catalog["write_file"]
	info.Checker = &checker{}
	h.catalog["write_file"] = info
	if _, err := h.run(step("write_file")); err != nil {
		t.Fatal(err)
	}
	first := h.rec.snapshots[0]
	if len(first) != 1 || !first[0].InFlight || first[0].Intent["path"] != "a.go" {
		t.Errorf("first save = %+v, want the call in flight with its intent", first)
	}
}

// TestAbandonedCallIsStillChecked: a cut-off call the resumed model does not ask for again
// is not run, but its tool's check still says whether it took effect.
func TestAbandonedCallIsStillChecked(t *testing.T) {
	h := newHarness(t, portstest.Text("nothing more to do"))
	prev := crashed()
	prev.ToolCalls[2].Intent = map[string]any{"path": "c"}
	h.previous = prev
	h.tool("read_file", tool.Annotations{ReadOnly: true}, ok("read_file"))
	h.tool("write_file", tool.Annotations{}, ok("write_file"))
	info := h.catalog["write_file"]
	info.Checker = &checker{verdict: tool.VerdictDone}
	h.catalog["write_file"] = info
	if _, err := h.run(step("read_file", "write_file")); err != nil {
		t.Fatal(err)
	}
	c := h.rec.state().ToolCalls[2]
	want := state.Recovery{Decision: "done", By: "check", Detail: "looked"}
	if len(h.tools.Requests()) != 0 || c.Result == nil || !c.Result.Success || c.Recovery == nil || *c.Recovery != want {
		t.Errorf("abandoned call = %+v (recovery %+v), want it closed as done by its check, not run", c, c.Recovery)
	}
}
