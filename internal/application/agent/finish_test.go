package agent_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
)

func reply(r ports.ChatResponse) portstest.Reply { return portstest.Reply{Response: r} }

// TestFinishReasons: a reply without calls is the step's answer only when the model ended it;
// a refusal, a content filter and a cut-off answer fail the step, unless the step accepts a
// cut-off answer (options.allow_truncated, which is not sent to the provider).
func TestFinishReasons(t *testing.T) {
	tests := []struct {
		name    string
		resp    ports.ChatResponse
		options map[string]any
		err     string
	}{
		{"refusal with its explanation", ports.ChatResponse{FinishReason: ports.FinishRefusal, Refusal: "I can't help with that."}, nil,
			"the model refused: I can't help with that."},
		{"refusal in the content", ports.ChatResponse{FinishReason: ports.FinishRefusal, Content: "No."}, nil, "the model refused: No."},
		{"refusal without a word", ports.ChatResponse{FinishReason: ports.FinishRefusal}, nil, "the model refused: (it gave no explanation)"},
		{"content filter", ports.ChatResponse{FinishReason: ports.FinishContentFilter, Content: "Sure, here"}, nil,
			"the provider's content filter withheld the model's answer (finish reason content_filter)"},
		{"cut off", ports.ChatResponse{FinishReason: ports.FinishLength, Content: "Once upon"}, nil,
			"the model's answer was cut off at the token limit (finish reason length, 9 characters): raise options.max_tokens, or set options.allow_truncated: true to accept a cut-off answer"},
		{"cut off, accepted", ports.ChatResponse{FinishReason: ports.FinishLength, Content: "Once upon"}, map[string]any{"allow_truncated": true}, ""},
		{"allow_truncated that is not a boolean", ports.ChatResponse{FinishReason: ports.FinishStop, Content: "x"}, map[string]any{"allow_truncated": "yes"},
			"options.allow_truncated: want true or false, got yes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, reply(tc.resp))
			a := step()
			for k, v := range tc.options {
				a.Options[k] = v
			}
			out, err := h.run(a)
			if tc.err == "" {
				if err != nil || out.Output != tc.resp.Content {
					t.Fatalf("run = %q, %v; want %q", out.Output, err, tc.resp.Content)
				}
				if _, sent := h.prov.Requests()[0].Options["allow_truncated"]; sent {
					t.Errorf("allow_truncated was sent to the provider")
				}
				return
			}
			if err == nil || !strings.HasSuffix(err.Error(), tc.err) {
				t.Fatalf("run = %v, want an error ending %q", err, tc.err)
			}
			if k := fault.KindOf(err); k != fault.Execution && k != fault.Invalid {
				t.Errorf("kind %v", k)
			}
		})
	}
}

// TestTruncatedArguments: a call whose arguments the token limit cut off goes back to the
// model as an error result that says so, and the step goes on.
func TestTruncatedArguments(t *testing.T) {
	cut := portstest.Calls(1, call("write_file", `{"path":"a.go","content":"package ma`))
	cut.Response.FinishReason = ports.FinishLength
	h := newHarness(t, cut, portstest.Text("I will write less."))
	h.tool("write_file", tool.Annotations{}, ok("write_file"))
	out, err := h.run(step("write_file"))
	if err != nil || out.Output != "I will write less." {
		t.Fatalf("run = %q, %v", out.Output, err)
	}
	res := toolMessages(h.prov.Requests()[1])
	if len(res) != 1 || !res[0].IsError || !strings.Contains(res[0].Content, "cut off at the token limit inside these arguments") {
		t.Errorf("tool result = %+v, want an error saying the arguments were cut off", res)
	}
	if len(h.tools.Requests()) != 0 {
		t.Errorf("the cut-off call ran")
	}
}

// TestThinkingGoesBack: the reasoning blocks of a reply stay with its assistant message, so
// the next request carries them unchanged (the provider sends them back).
func TestThinkingGoesBack(t *testing.T) {
	first := portstest.Calls(1, call("read_file", `{"path":"a.go"}`))
	first.Response.Thinking = []state.Thinking{{Text: "Read it first.", Signature: "sig"}, {Redacted: "xyz"}}
	h := newHarness(t, first, portstest.Text("done"))
	h.tool("read_file", tool.Annotations{ReadOnly: true}, ok("read_file"))
	if _, err := h.run(step("read_file")); err != nil {
		t.Fatal(err)
	}
	msgs := h.prov.Requests()[1].Messages
	if diff := cmp.Diff(first.Response.Thinking, msgs[1].Thinking); msgs[1].Role != "assistant" || diff != "" {
		t.Errorf("assistant message %+v: thinking (-want +got):\n%s", msgs[1], diff)
	}
}

// TestTurnsRecordFinishReasons: every reply's finish reason is recorded, also for a reply
// that fails the step, after the turns of an earlier attempt.
func TestTurnsRecordFinishReasons(t *testing.T) {
	cut := ports.ChatResponse{FinishReason: ports.FinishLength, Content: "Once"}
	h := newHarness(t, portstest.Calls(1, call("read_file", `{"path":"a"}`)), reply(cut))
	h.previous = &state.StepState{Turns: []state.Turn{{FinishReason: "stop"}}}
	h.tool("read_file", tool.Annotations{ReadOnly: true}, ok("read_file"))
	out, err := h.run(step("read_file"))
	if err == nil {
		t.Fatal("a cut-off answer did not fail the step")
	}
	want := []state.Turn{{FinishReason: "stop"}, {FinishReason: "tool_calls", Calls: []string{"call_1"}}, {FinishReason: "length", Text: "Once"}}
	if diff := cmp.Diff(want, out.Turns); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[:2], h.rec.state().Turns); diff != "" {
		t.Errorf("turns saved before the call (-want +got):\n%s", diff)
	}
}
