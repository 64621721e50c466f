package agent_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

func conversation(opts workflow.ConversationOptions) *workflow.AgentStep {
	a := step("read_file")
	a.Prompt = "Review the code."
	a.Mode = "conversation"
	a.Conversation = &opts
	return a
}

func TestConversationStops(t *testing.T) {
	tests := []struct {
		name      string
		opts      workflow.ConversationOptions
		replies   []portstest.Reply
		stoppedBy string
		turns     int
		output    string
	}{{
		name:    "stop_condition",
		opts:    workflow.ConversationOptions{StopCondition: `response contains "APPROVED" && turn >= 2`},
		replies: []portstest.Reply{portstest.Text("APPROVED too early"), portstest.Text("fixed; APPROVED")},
		// Turn 1 says APPROVED but turn >= 2 does not hold: the prompt is sent again.
		stoppedBy: "stop_condition", turns: 2, output: "fixed; APPROVED",
	}, {
		name:      "stop_condition on a reply with calls",
		opts:      workflow.ConversationOptions{StopCondition: `tokens > 100`},
		replies:   []portstest.Reply{withUsage(portstest.Calls(1, call("read_file", `{"path":"a"}`)), 150)},
		stoppedBy: "stop_condition", turns: 1,
	}, {
		name:      "max_turns",
		opts:      workflow.ConversationOptions{MaxTurns: 2, StopCondition: `response == "never"`},
		replies:   []portstest.Reply{portstest.Text("one"), portstest.Text("two")},
		stoppedBy: "max_turns", turns: 2, output: "two",
	}, {
		name:      "no stop condition: the first answer",
		opts:      workflow.ConversationOptions{},
		replies:   []portstest.Reply{portstest.Calls(1, call("read_file", `{"path":"a"}`)), portstest.Text("looks good")},
		stoppedBy: "no_tool_calls", turns: 2, output: "looks good",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.replies...)
			h.tool("read_file", tool.Annotations{ReadOnly: true}, ok("read_file"))
			out, err := h.run(conversation(tc.opts))
			if err != nil {
				t.Fatal(err)
			}
			if out.Conversation == nil {
				t.Fatal("no conversation recorded")
			}
			if out.Conversation.StoppedBy != tc.stoppedBy || out.Conversation.Turns != tc.turns {
				t.Errorf("stopped_by %q after %d turns, want %q after %d", out.Conversation.StoppedBy, out.Conversation.Turns, tc.stoppedBy, tc.turns)
			}
			if out.Output != tc.output {
				t.Errorf("Output = %q, want %q", out.Output, tc.output)
			}
			if h.prov.Remaining() != 0 {
				t.Errorf("%d scripted replies unused", h.prov.Remaining())
			}
			msgs := out.Conversation.Messages
			if msgs[0].Role != "system" || msgs[0].Content != "You are careful." {
				t.Errorf("first message = %+v, want the system prompt", msgs[0])
			}
		})
	}
}

func withUsage(r portstest.Reply, total int) portstest.Reply {
	r.Response.Usage = state.Tokens{Input: total - 10, Output: 10, Total: total}
	return r
}

func TestConversationRefinementResendsThePrompt(t *testing.T) {
	h := newHarness(t, portstest.Text("draft"), portstest.Text("DONE"))
	h.tool("read_file", tool.Annotations{}, ok("read_file"))
	out, err := h.run(conversation(workflow.ConversationOptions{StopCondition: `response == "DONE"`}))
	if err != nil {
		t.Fatal(err)
	}
	want := []state.Message{
		{Role: "user", Content: "Review the code."},
		{Role: "assistant", Content: "draft"},
		{Role: "user", Content: "Review the code."},
	}
	if diff := cmp.Diff(want, h.prov.Requests()[1].Messages); diff != "" {
		t.Errorf("second request (-want +got):\n%s", diff)
	}
	if got := len(out.Conversation.Messages); got != 5 {
		t.Errorf("conversation has %d messages, want system + 4", got)
	}
	if saved := h.rec.state().Conversation; saved == nil || saved.Turns != 1 {
		t.Errorf("saved conversation = %+v, want the first turn saved before the second request", saved)
	}
}

func TestContinueFrom(t *testing.T) {
	h := newHarness(t, portstest.Text("also handled"))
	h.lookup["review"] = state.StepState{Status: state.Completed, Conversation: &state.Conversation{
		Turns: 3, StoppedBy: "stop_condition",
		Messages: []state.Message{
			{Role: "system", Content: "You review code."},
			{Role: "user", Content: "Review this."},
			{Role: "assistant", ToolCalls: []state.CallRef{{ID: "call_1", Name: "read_file", Arguments: `{"path":"a"}`}}},
			{Role: "tool", ToolCallID: "call_1", Name: "read_file", Content: "package a"},
			{Role: "assistant", Content: "APPROVED"},
		},
	}}
	a := step()
	a.SystemPrompt = ""
	a.Prompt = "Also consider: {{inputs.feature}}"
	a.Mode, a.ContinueFrom = "conversation", "review"
	out, err := h.run(a)
	if err != nil {
		t.Fatal(err)
	}
	req := h.prov.Requests()[0]
	if req.System != "You review code." {
		t.Errorf("System = %q, want the continued conversation's", req.System)
	}
	if n := len(req.Messages); n != 5 || req.Messages[4].Content != "Also consider: greet in French" {
		t.Errorf("messages = %+v, want the 4 earlier ones and the new prompt", req.Messages)
	}
	if out.Conversation.Turns != 4 {
		t.Errorf("Turns = %d, want 3 earlier + 1", out.Conversation.Turns)
	}
	// A new call's id must not collide with the continued conversation's.
	h2 := newHarness(t, portstest.Calls(1, call("read_file", `{"path":"b"}`)), portstest.Text("ok"))
	h2.lookup = h.lookup
	h2.tool("read_file", tool.Annotations{}, ok("read_file"))
	a.Tools = []string{"read_file"}
	if _, err := h2.run(a); err != nil {
		t.Fatal(err)
	}
	if id := h2.rec.state().ToolCalls[0].ID; id == "call_1" {
		t.Errorf("new call id %q repeats one of the continued conversation", id)
	}
}

func TestContinueFromAStepWithoutConversation(t *testing.T) {
	h := newHarness(t)
	h.lookup["plain"] = state.StepState{Status: state.Completed, Output: "x"}
	a := step()
	a.ContinueFrom = "plain"
	_, err := h.run(a)
	if err == nil || !strings.Contains(err.Error(), "recorded no conversation") {
		t.Errorf("err = %v, want it to say the step has no conversation", err)
	}
}

// longHistory is a conversation to continue: a task, then four exchanges with a tool.
func longHistory() []state.Message {
	msgs := []state.Message{{Role: "system", Content: "SYSTEM"}, {Role: "user", Content: "TASK " + strings.Repeat("t", 40)}}
	for i := range 4 {
		id := string(rune('a' + i))
		msgs = append(msgs,
			state.Message{Role: "assistant", ToolCalls: []state.CallRef{{ID: id, Name: "read_file", Arguments: `{}`}}},
			state.Message{Role: "tool", ToolCallID: id, Name: "read_file", Content: strings.Repeat(id, 400)},
			state.Message{Role: "assistant", Content: "step " + id},
		)
	}
	return msgs
}

func TestContextWindowStrategies(t *testing.T) {
	tests := []struct {
		strategy  string
		keepTask  bool
		summary   bool
		requests  int
		firstRole string
	}{
		{strategy: "sliding_window", requests: 1},
		{strategy: "truncate_middle", keepTask: true, requests: 1},
		{strategy: "summarize", keepTask: true, summary: true, requests: 2},
	}
	for _, tc := range tests {
		t.Run(tc.strategy, func(t *testing.T) {
			replies := []portstest.Reply{portstest.Text("final")}
			if tc.summary {
				replies = append([]portstest.Reply{portstest.Text("SUMMARY: read a, b, c")}, replies...)
			}
			h := newHarness(t, replies...)
			h.lookup["earlier"] = state.StepState{Conversation: &state.Conversation{Turns: 8, Messages: longHistory()}}
			a := step()
			a.SystemPrompt, a.Prompt = "", "NEXT"
			a.Mode, a.ContinueFrom = "conversation", "earlier"
			a.Conversation = &workflow.ConversationOptions{MaxContextTokens: 300, Strategy: tc.strategy}
			out, err := h.run(a)
			if err != nil {
				t.Fatal(err)
			}
			reqs := h.prov.Requests()
			if len(reqs) != tc.requests {
				t.Fatalf("%d requests, want %d", len(reqs), tc.requests)
			}
			req := reqs[len(reqs)-1]
			if req.System != "SYSTEM" {
				t.Errorf("System = %q, want it preserved", req.System)
			}
			text := transcriptOf(req.Messages)
			if got := strings.Contains(text, "TASK"); got != tc.keepTask {
				t.Errorf("task kept = %v, want %v:\n%s", got, tc.keepTask, text)
			}
			if strings.Contains(text, "aaaa") {
				t.Errorf("the oldest exchange is still there:\n%s", text)
			}
			if !strings.Contains(text, "step d") || !strings.HasSuffix(text, "user: NEXT") {
				t.Errorf("the latest messages are missing:\n%s", text)
			}
			if got := strings.Contains(text, "SUMMARY: read a, b, c"); got != tc.summary {
				t.Errorf("summary present = %v, want %v:\n%s", got, tc.summary, text)
			}
			if tc.summary && !strings.Contains(transcriptOf(reqs[0].Messages), "aaaa") {
				t.Errorf("the summary request does not hold the dropped messages")
			}
			if first := req.Messages[0]; first.Role != "user" {
				t.Errorf("first message is %q, want a user message", first.Role)
			}
			for i, m := range req.Messages {
				if m.Role == "tool" && (i == 0 || len(req.Messages[i-1].ToolCalls) == 0 && req.Messages[i-1].Role != "tool") {
					t.Errorf("message %d is a tool result without its call", i)
				}
			}
			if out.Conversation.Messages[0].Content != "SYSTEM" {
				t.Errorf("recorded conversation lost its system prompt")
			}
		})
	}
}

func transcriptOf(msgs []state.Message) string {
	var parts []string
	for _, m := range msgs {
		parts = append(parts, m.Role+": "+m.Content)
	}
	return strings.Join(parts, "\n")
}

func TestStopConditionMustBeBoolean(t *testing.T) {
	h := newHarness(t, portstest.Text("x"))
	h.tool("read_file", tool.Annotations{}, ok("read_file"))
	_, err := h.run(conversation(workflow.ConversationOptions{StopCondition: `turn + 1`}))
	if err == nil || !strings.Contains(err.Error(), "want a boolean") {
		t.Errorf("err = %v, want a type error", err)
	}
}
