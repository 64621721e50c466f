package agent_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/awf-dev/awf/internal/bom/bomtest"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

func step(tools ...string) *workflow.AgentStep {
	return &workflow.AgentStep{Provider: "scripted", Prompt: "Implement: {{inputs.feature}}", Tools: tools,
		SystemPrompt: "You are careful.", Options: map[string]any{"temperature": 0}}
}

func TestAnswerWithoutTools(t *testing.T) {
	reply := portstest.Text("Bonjour!")
	reply.Response.Usage = state.Tokens{Input: 12, Output: 3, Total: 15}
	h := newHarness(t, reply)
	out, err := h.run(step())
	if err != nil {
		t.Fatal(err)
	}
	if out.Output != "Bonjour!" {
		t.Errorf("Output = %q, want %q", out.Output, "Bonjour!")
	}
	if diff := cmp.Diff(&state.Tokens{Input: 12, Output: 3, Total: 15}, out.Tokens); diff != "" {
		t.Errorf("Tokens (-want +got):\n%s", diff)
	}
	if out.Conversation != nil {
		t.Errorf("Conversation = %+v outside conversation mode, want nil", out.Conversation)
	}
	reqs := h.prov.Requests()
	want := ports.ChatRequest{
		Model: "test-model", System: "You are careful.",
		Messages: []state.Message{{Role: "user", Content: "Implement: greet in French"}},
		Options:  map[string]any{"temperature": 0},
	}
	if diff := cmp.Diff([]ports.ChatRequest{want}, reqs, cmpRequests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

var cmpRequests = cmp.FilterPath(func(p cmp.Path) bool {
	return p.Last().String() == ".OnDelta"
}, cmp.Ignore())

func TestParallelReadOnlyCalls(t *testing.T) {
	h := newHarness(t,
		portstest.Calls(1, call("read_file", `{"path":"a.go"}`), call("grep", `{"path":"b.go"}`), call("read_file", `{"path":"c.go"}`)),
		portstest.Text("done"))
	// Every call waits until all three have started: sequential execution never gets there.
	var arrived sync.WaitGroup
	arrived.Add(3)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	barrier := func(name string) portstest.ToolFunc {
		return func(ctx context.Context, req ports.ToolRequest) (tool.Result, error) {
			arrived.Done()
			select {
			case <-all:
			case <-time.After(10 * time.Second): // a safety net, not a timing assertion
				return tool.Errorf("the calls did not run concurrently"), nil
			}
			return ok(name)(ctx, req)
		}
	}
	h.tool("read_file", tool.Annotations{ReadOnly: true}, barrier("read_file"))
	h.tool("grep", tool.Annotations{ReadOnly: true}, barrier("grep"))
	out, err := h.run(step("read_file", "grep"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Output != "done" {
		t.Errorf("Output = %q, want done", out.Output)
	}
	got := toolMessages(h.prov.Requests()[1])
	want := []state.Message{
		{Role: "tool", ToolCallID: "call_1", Name: "read_file", Content: "read_file:a.go"},
		{Role: "tool", ToolCallID: "call_2", Name: "grep", Content: "grep:b.go"},
		{Role: "tool", ToolCallID: "call_3", Name: "read_file", Content: "read_file:c.go"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool results (-want +got):\n%s", diff)
	}
	s := h.rec.state()
	var ids []string
	for _, c := range s.ToolCalls {
		ids = append(ids, c.ID)
	}
	if diff := cmp.Diff([]string{"call_1", "call_2", "call_3"}, ids); diff != "" {
		t.Errorf("recorded calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&state.ToolStats{TotalCalls: 3, Successful: 3}, s.ToolStats); diff != "" {
		t.Errorf("ToolStats (-want +got):\n%s", diff)
	}
}

func TestSequentialCalls(t *testing.T) {
	no := false
	tests := []struct {
		name     string
		parallel *bool
		ann      tool.Annotations
	}{
		{"a call that writes", nil, tool.Annotations{}},
		{"parallel: false", &no, tool.Annotations{ReadOnly: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t,
				portstest.Calls(1, call("read_file", `{"path":"a"}`), call("write_file", `{"path":"b"}`), call("read_file", `{"path":"c"}`)),
				portstest.Text("done"))
			var running, overlaps atomic.Int32
			var mu sync.Mutex
			var order []string
			track := func(name string) portstest.ToolFunc {
				return func(ctx context.Context, req ports.ToolRequest) (tool.Result, error) {
					if running.Add(1) > 1 {
						overlaps.Add(1)
					}
					defer running.Add(-1)
					mu.Lock()
					order = append(order, str(req.Args["path"]))
					mu.Unlock()
					return ok(name)(ctx, req)
				}
			}
			h.tool("read_file", tool.Annotations{ReadOnly: true}, track("read_file"))
			h.tool("write_file", tc.ann, track("write_file"))
			a := step("read_file", "write_file")
			a.ToolOptions.Parallel = tc.parallel
			if _, err := h.run(a); err != nil {
				t.Fatal(err)
			}
			if n := overlaps.Load(); n != 0 {
				t.Errorf("%d calls overlapped, want them one after another", n)
			}
			if diff := cmp.Diff([]string{"a", "b", "c"}, order); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMaxCalls(t *testing.T) {
	t.Run("fail", func(t *testing.T) {
		h := newHarness(t,
			portstest.Calls(1, call("read_file", `{"path":"a"}`)),
			portstest.Calls(2, call("read_file", `{"path":"b"}`), call("read_file", `{"path":"c"}`)))
		h.tool("read_file", tool.Annotations{ReadOnly: true}, ok("read_file"))
		a := step("read_file")
		a.ToolOptions.MaxCalls = 2
		_, err := h.run(a)
		if err == nil || !strings.Contains(err.Error(), "tool_options.max_calls") || fault.KindOf(err) != fault.Execution {
			t.Fatalf("err = %v (kind %v), want an execution error about tool_options.max_calls", err, fault.KindOf(err))
		}
		if n := len(h.tools.Requests()); n != 1 {
			t.Errorf("%d tools ran, want 1: the reply that passes the limit runs none", n)
		}
	})
	t.Run("stop", func(t *testing.T) {
		h := newHarness(t,
			portstest.Calls(1, call("read_file", `{"path":"a"}`), call("read_file", `{"path":"b"}`), call("read_file", `{"path":"c"}`)),
			portstest.Text("partial answer"))
		h.tool("read_file", tool.Annotations{ReadOnly: true}, ok("read_file"))
		a := step("read_file")
		a.ToolOptions.MaxCalls, a.ToolOptions.OnMaxCalls = 2, "stop"
		out, err := h.run(a)
		if err != nil {
			t.Fatal(err)
		}
		if out.Output != "partial answer" {
			t.Errorf("Output = %q, want the final answer", out.Output)
		}
		if n := len(h.tools.Requests()); n != 2 {
			t.Errorf("%d tools ran, want 2", n)
		}
		last := h.prov.Requests()[1]
		if last.Tools != nil {
			t.Errorf("final request offers %d tools, want none", len(last.Tools))
		}
		res := toolMessages(last)
		if len(res) != 3 || !res[2].IsError || !strings.Contains(res[2].Content, "max_calls") {
			t.Errorf("third result = %+v, want an error about max_calls", res)
		}
		if n := len(h.rec.state().ToolCalls); n != 2 {
			t.Errorf("%d calls recorded, want 2 (the refused one never ran)", n)
		}
	})
}

func TestErrorResultsGoBackToTheModel(t *testing.T) {
	tests := []struct {
		name    string
		call    [2]string
		invoke  portstest.ToolFunc
		want    state.ToolCallResult
		content string
		rule    string // the call gate's rule when the loop refuses the call itself
		invoked int
	}{{
		name: "denied with an error",
		call: call("write_file", `{"path":"x"}`),
		invoke: func(context.Context, ports.ToolRequest) (tool.Result, error) {
			return tool.Result{}, fault.New(fault.Denied, "denied by the user")
		},
		want:    state.ToolCallResult{Error: "denied by the user", Denied: true},
		content: "Denied: denied by the user", invoked: 1,
	}, {
		name: "denied as a result",
		call: call("write_file", `{"path":"x"}`),
		invoke: func(context.Context, ports.ToolRequest) (tool.Result, error) {
			return tool.Result{Status: tool.StatusError, Error: "denied by policy: outside src/", Denied: true, Approval: ports.ByPolicy}, nil
		},
		want:    state.ToolCallResult{Error: "denied by policy: outside src/", Denied: true, Approval: "policy"},
		content: "Denied: denied by policy: outside src/", invoked: 1,
	}, {
		name: "tool error with output",
		call: call("write_file", `{"path":"x"}`),
		invoke: func(context.Context, ports.ToolRequest) (tool.Result, error) {
			return tool.Result{Status: tool.StatusError, Output: "FAIL TestGreet\n", Error: "exit status 1", Approval: ports.ByUser}, nil
		},
		want:    state.ToolCallResult{Output: "FAIL TestGreet\n", Error: "exit status 1", Approval: "user"},
		content: "FAIL TestGreet\n\nError: exit status 1", invoked: 1,
	}, {
		name: "invalid arguments from the registry",
		call: call("write_file", `{"path":1}`),
		invoke: func(context.Context, ports.ToolRequest) (tool.Result, error) {
			return tool.Result{}, fault.New(fault.Invalid, "write_file: $.path: want string, got integer")
		},
		want:    state.ToolCallResult{Error: "write_file: $.path: want string, got integer"},
		content: "Error: write_file: $.path: want string, got integer", invoked: 1,
	}, {
		name: "unknown tool",
		call: call("delete_everything", `{}`),
		want: state.ToolCallResult{Error: `unknown tool "delete_everything": this step's tools are write_file`, Denied: true, Approval: "gate",
			Layer: "L0 gate", Rule: ports.RuleUnknownTool},
		content: `Denied: unknown tool "delete_everything": this step's tools are write_file`, rule: ports.RuleUnknownTool,
	}, {
		name: "arguments that are not JSON",
		call: call("write_file", `{"path": "x"`),
		want: state.ToolCallResult{Error: "invalid arguments for write_file: arguments are not valid JSON: unexpected EOF; send the arguments as one JSON object", Denied: true, Approval: "gate",
			Layer: "L0 gate", Rule: ports.RuleArgsObject},
		content: "Denied: invalid arguments for write_file: arguments are not valid JSON: unexpected EOF; send the arguments as one JSON object", rule: ports.RuleArgsObject,
	}, {
		name: "arguments that are not an object",
		call: call("write_file", `["x"]`),
		want: state.ToolCallResult{Error: "invalid arguments for write_file: arguments must be a JSON object, got an array; send the arguments as one JSON object", Denied: true, Approval: "gate",
			Layer: "L0 gate", Rule: ports.RuleArgsObject},
		content: "Denied: invalid arguments for write_file: arguments must be a JSON object, got an array; send the arguments as one JSON object", rule: ports.RuleArgsObject,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, portstest.Calls(1, tc.call), portstest.Text("understood"))
			h.tool("write_file", tool.Annotations{}, tc.invoke)
			out, err := h.run(step("write_file"))
			if err != nil {
				t.Fatal(err)
			}
			if out.Output != "understood" {
				t.Errorf("Output = %q, want the model's answer after the error", out.Output)
			}
			if n := len(h.tools.Requests()); n != tc.invoked {
				t.Errorf("invoker called %d times, want %d", n, tc.invoked)
			}
			got := toolMessages(h.prov.Requests()[1])
			want := []state.Message{{Role: "tool", ToolCallID: "call_1", Name: tc.call[0], Content: tc.content, IsError: true}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("result sent back (-want +got):\n%s", diff)
			}
			calls := h.rec.state().ToolCalls
			if len(calls) != 1 || calls[0].Result == nil {
				t.Fatalf("recorded calls = %+v, want one with a result", calls)
			}
			if diff := cmp.Diff(tc.want, *calls[0].Result); diff != "" {
				t.Errorf("recorded result (-want +got):\n%s", diff)
			}
			if tc.rule != "" && (len(h.refused) != 1 || h.refused[0].Rule != tc.rule || h.refused[0].Tool != tc.call[0]) {
				t.Errorf("audited refusals = %+v, want one of %s under %q", h.refused, tc.call[0], tc.rule)
			}
			if tc.rule == "" && len(h.refused) != 0 {
				t.Errorf("audited refusals = %+v, want none (the invoker audits)", h.refused)
			}
		})
	}
}

func TestInvalidArgumentsAreRecordedVerbatim(t *testing.T) {
	h := newHarness(t, portstest.Calls(1, call("write_file", `{"path": "x"`)), portstest.Text("ok"))
	h.tool("write_file", tool.Annotations{}, ok("write_file"))
	if _, err := h.run(step("write_file")); err != nil {
		t.Fatal(err)
	}
	got := h.rec.state().ToolCalls[0].Arguments
	if diff := cmp.Diff(map[string]any{"_raw": `{"path": "x"`}, got); diff != "" {
		t.Errorf("Arguments (-want +got):\n%s", diff)
	}
}

func TestAbortingErrorsEndTheStep(t *testing.T) {
	tests := []struct {
		name string
		err  error
		kind fault.Kind
	}{
		{"ErrAbortStep", fault.New(fault.Denied, "approval needed and --non-interactive=fail: %w", ports.ErrAbortStep), fault.Denied},
		{"system fault", fault.New(fault.System, "audit log: disk full"), fault.System},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, portstest.Calls(1, call("write_file", `{}`)))
			h.tool("write_file", tool.Annotations{}, func(context.Context, ports.ToolRequest) (tool.Result, error) {
				return tool.Result{}, tc.err
			})
			_, err := h.run(step("write_file"))
			if !errors.Is(err, tc.err) || fault.KindOf(err) != tc.kind {
				t.Fatalf("err = %v (kind %v), want %v of kind %v", err, fault.KindOf(err), tc.err, tc.kind)
			}
			calls := h.rec.state().ToolCalls
			if len(calls) != 1 || calls[0].InFlight || calls[0].Result == nil || calls[0].Result.Success {
				t.Errorf("recorded = %+v, want the failed call with its result", calls)
			}
		})
	}
}

func TestBreaker(t *testing.T) {
	same := call("read_file", `{"path":"a.go"}`)
	sameReordered := call("read_file", `{ "path" : "a.go" }`)
	h := newHarness(t,
		portstest.Calls(1, same), portstest.Calls(2, sameReordered), portstest.Calls(3, same),
		portstest.Calls(4, same), portstest.Calls(5, call("read_file", `{"path":"b.go"}`)),
		portstest.Text("done"))
	h.tool("read_file", tool.Annotations{ReadOnly: true}, ok("read_file"))
	if _, err := h.run(step("read_file")); err != nil {
		t.Fatal(err)
	}
	if n := len(h.tools.Requests()); n != 4 {
		t.Errorf("invoker called %d times, want 4 (3 identical calls, then another)", n)
	}
	res := toolMessages(h.prov.Requests()[5])
	if !res[3].IsError || !strings.Contains(res[3].Content, "4 times in a row") {
		t.Errorf("4th result = %+v, want the breaker's message", res[3])
	}
	if res[4].IsError {
		t.Errorf("5th result = %+v, want a call with other arguments to run", res[4])
	}
}

func TestDuplicateAndMissingCallIDs(t *testing.T) {
	r1 := portstest.Calls(1, call("read_file", `{"path":"a"}`), call("read_file", `{"path":"b"}`))
	r1.Response.ToolCalls[1].ID = ""
	r2 := portstest.Calls(1, call("read_file", `{"path":"c"}`)) // reuses call_1
	h := newHarness(t, r1, r2, portstest.Text("done"))
	h.tool("read_file", tool.Annotations{ReadOnly: true}, ok("read_file"))
	if _, err := h.run(step("read_file")); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range h.rec.state().ToolCalls {
		ids = append(ids, c.ID)
	}
	want := []string{"call_1", "call_2", "call_3"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	last := h.prov.Requests()[2].Messages
	if got := last[len(last)-1].ToolCallID; got != "call_3" {
		t.Errorf("last result answers %q, want call_3", got)
	}
}

// TestSavesSayWhatChanged checks that every save says which records already saved it changes
// (ports.StepChanges), so that the store compares those only: none when it adds a call in
// flight, the call's own when it records its result.
func TestSavesSayWhatChanged(t *testing.T) {
	h := newHarness(t,
		portstest.Calls(1, call("read_file", `{"path":"a"}`), call("write_file", `{"path":"b"}`)),
		portstest.Calls(3, call("read_file", `{"path":"c"}`)),
		portstest.Text("done"))
	h.tool("read_file", tool.Annotations{ReadOnly: true}, ok("read_file"))
	h.tool("write_file", tool.Annotations{}, ok("write_file"))
	if _, err := h.run(step("read_file", "write_file")); err != nil {
		t.Fatal(err)
	}
	var got [][]int
	for _, ch := range h.rec.changes {
		got = append(got, ch.Calls)
	}
	want := [][]int{nil, {0}, nil, {1}, nil, {2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes said by the saves (-want +got):\n%s", diff)
	}
}

func TestStatePersistedAroundEveryCall(t *testing.T) {
	h := newHarness(t,
		portstest.Calls(1, call("read_file", `{"path":"a"}`), call("write_file", `{"path":"b"}`)),
		portstest.Calls(3, call("read_file", `{"path":"c"}`)),
		portstest.Text("done"))
	h.tool("read_file", tool.Annotations{ReadOnly: true}, ok("read_file"))
	h.tool("write_file", tool.Annotations{}, ok("write_file"))
	if _, err := h.run(step("read_file", "write_file")); err != nil {
		t.Fatal(err)
	}
	// 2 saves per call run one after the other, which carry the tokens and conversation too.
	if h.rec.saves != 2*3 {
		t.Errorf("%d saves, want %d", h.rec.saves, 2*3)
	}
	// Each call appears in flight in one snapshot, and with its result in a later one.
	for _, id := range []string{"call_1", "call_2", "call_3"} {
		inFlight, done := -1, -1
		for i, snap := range h.rec.snapshots {
			for _, c := range snap {
				if c.ID != id {
					continue
				}
				if c.InFlight && c.Result == nil && inFlight < 0 {
					inFlight = i
				}
				if !c.InFlight && c.Result != nil && done < 0 {
					done = i
				}
			}
		}
		if inFlight < 0 || done <= inFlight {
			t.Errorf("%s: in flight at save %d, done at save %d; want in flight saved before done", id, inFlight, done)
		}
	}
}

func TestProviderErrorFailsTheStep(t *testing.T) {
	h := newHarness(t, portstest.Reply{Err: fault.New(fault.Usage, "anthropic: no API key: set ANTHROPIC_API_KEY")})
	_, err := h.run(step())
	if fault.KindOf(err) != fault.Usage || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("err = %v (kind %v), want the provider's usage error", err, fault.KindOf(err))
	}
}

func TestUnknownStepToolIsAWorkflowError(t *testing.T) {
	h := newHarness(t)
	h.tool("read_file", tool.Annotations{}, ok("read_file"))
	_, err := h.run(step("raed_file"))
	if fault.KindOf(err) != fault.Invalid || !strings.Contains(err.Error(), `did you mean "read_file"`) {
		t.Errorf("err = %v, want an invalid-workflow error suggesting read_file", err)
	}
}

func TestTimeoutStopsTheLoop(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	h := newHarness(t, portstest.Calls(1, call("slow", `{}`)))
	h.tool("slow", tool.Annotations{}, func(ctx context.Context, _ ports.ToolRequest) (tool.Result, error) {
		cancel()
		<-ctx.Done()
		return tool.Result{}, fault.Wrap(fault.Execution, ctx.Err())
	})
	_, err := h.runCtx(ctx, step("slow"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the context's error", err)
	}
	calls := h.rec.state().ToolCalls
	if len(calls) != 1 || !calls[0].InFlight {
		t.Errorf("recorded = %+v, want the interrupted call left in flight", calls)
	}
}

func TestToolRequestCarriesTheStepContext(t *testing.T) {
	h := newHarness(t, portstest.Calls(7, call("read_file", `{"path":"a","n":3,"f":1.5}`)), portstest.Text("done"))
	h.tool("read_file", tool.Annotations{}, ok("read_file"))
	a := step("read_file")
	a.ToolOptions.TimeoutPerCall = 30 * time.Second
	if _, err := h.run(a); err != nil {
		t.Fatal(err)
	}
	want := ports.ToolRequest{RunID: "run-1", Step: "implement", CallID: "call_7", Name: "read_file",
		Args: map[string]any{"path": "a", "n": int64(3), "f": 1.5}, Timeout: 30 * time.Second}
	got := h.tools.Requests()
	if diff := cmp.Diff([]ports.ToolRequest{want}, got, cmpopts.IgnoreFields(ports.ToolRequest{}, "Scope")); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	// Command tools render {{inputs.x}} from the call's scope: it is the step's.
	if len(got) == 1 && got[0].Scope["inputs"] == nil {
		t.Errorf("request scope = %v, want the step's scope with inputs", got[0].Scope)
	}
	kinds := fmt.Sprint(h.events.Kinds())
	if kinds != "[model_response tool_started tool_finished model_response]" {
		t.Errorf("events = %s", kinds)
	}
	if ev := h.events.Events()[1]; ev.Meta != "read_file a" {
		t.Errorf("tool_started meta = %q, want the tool's summary", ev.Meta)
	}
}

func TestPromptFile(t *testing.T) {
	h := newHarness(t, portstest.Text("ok"))
	if err := os.MkdirAll(filepath.Join(h.wfDir, "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.wfDir, "prompts", "task.md"), []byte("Task: {{inputs.feature}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := step()
	a.Prompt, a.PromptFile = "", "prompts/task.md"
	if _, err := h.run(a); err != nil {
		t.Fatal(err)
	}
	if got := h.prov.Requests()[0].Messages[0].Content; got != "Task: greet in French\n" {
		t.Errorf("prompt = %q, want the file rendered", got)
	}

	a.PromptFile = "prompts/missing.md"
	if _, err := newHarness(t).run(a); fault.KindOf(err) != fault.Invalid || !strings.Contains(err.Error(), "prompt_file") {
		t.Errorf("missing prompt_file: err = %v, want an invalid-workflow error naming prompt_file", err)
	}
}

// A prompt file saved with a byte order mark is sent without it; a UTF-16 one is refused with
// what to do, not sent as bytes the model cannot read.
func TestPromptFileByteOrderMark(t *testing.T) {
	bomtest.Test(t, []bomtest.Case{{Name: "prompt", Doc: "Task: {{inputs.feature}}\n"}}, func(t *testing.T, data []byte) (string, error) {
		h := newHarness(t, portstest.Text("ok"))
		if err := os.WriteFile(filepath.Join(h.wfDir, "task.md"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		a := step()
		a.Prompt, a.PromptFile = "", "task.md"
		if _, err := h.run(a); err != nil {
			return "", err
		}
		return h.prov.Requests()[0].Messages[0].Content, nil
	})
}

// TestRefusedCallsAreAudited: calls the loop answers without the invoker (a tool outside the
// step's tools, a near miss of a name, arguments that are not an object) are each audited
// once as the call gate's denial, with the arguments as sent.
func TestRefusedCallsAreAudited(t *testing.T) {
	h := newHarness(t, portstest.Calls(1,
		call("shell", `{"command":"ls"}`), call("Shell ", `{}`), call("WRITE_FILE", `{}`), call("write_file", `"x"`)),
		portstest.Text("done"))
	h.tool("write_file", tool.Annotations{}, ok("write_file"))
	h.tool("shell", tool.Annotations{}, ok("shell")) // registered, but not one of the step's tools
	if _, err := h.run(step("write_file")); err != nil {
		t.Fatal(err)
	}
	want := []refusal{
		{"shell", ports.RuleStepTools, map[string]any{"command": "ls"}},
		{"Shell ", ports.RuleUnknownTool, map[string]any{}},
		{"WRITE_FILE", ports.RuleUnknownTool, map[string]any{}},
		{"write_file", ports.RuleArgsObject, map[string]any{state.RawArgsKey: `"x"`}},
	}
	if diff := cmp.Diff(want, h.refused); diff != "" {
		t.Errorf("audited refusals (-want +got):\n%s", diff)
	}
	if n := len(h.tools.Requests()); n != 0 {
		t.Errorf("invoker called %d times, want 0", n)
	}
}

// TestSavesBatchedNeverLate checks that batching the saves of a reply's calls drops no
// durability: when a tool runs, the last save holds it in flight and every call before it
// with its result; when the model is asked again, the last save holds every result. Calls run
// one after another are saved twice each; read-only calls run concurrently, twice in all.
func TestSavesBatchedNeverLate(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		t.Run(fmt.Sprint("parallel=", parallel), func(t *testing.T) {
			var h *harness
			saved := func(name string) portstest.ToolFunc {
				return func(ctx context.Context, req ports.ToolRequest) (tool.Result, error) {
					h.rec.mu.Lock()
					last := h.rec.snapshots[len(h.rec.snapshots)-1]
					h.rec.mu.Unlock()
					for _, c := range last {
						if c.ID == req.CallID && !c.InFlight || c.ID != req.CallID && !parallel && c.Result == nil {
							t.Errorf("call %s runs while the last save holds %s with result %v, in flight %v", req.CallID, c.ID, c.Result, c.InFlight)
						}
					}
					if !slices.ContainsFunc(last, func(c state.ToolCallRecord) bool { return c.ID == req.CallID }) {
						t.Errorf("call %s runs before a save holds it in flight", req.CallID)
					}
					return ok(name)(ctx, req)
				}
			}
			h = newHarness(t,
				portstest.Calls(1, call("read_file", `{"path":"a"}`), call("read_file", `{"path":"b"}`), call("read_file", `{"path":"c"}`)),
				portstest.Text("done"))
			h.tool("read_file", tool.Annotations{ReadOnly: true}, saved("read_file"))
			a := step("read_file")
			a.ToolOptions.Parallel = &parallel
			if _, err := h.run(a); err != nil {
				t.Fatal(err)
			}
			want := 2 * 3
			if parallel {
				want = 2
			}
			if h.rec.saves != want {
				t.Errorf("%d saves, want %d", h.rec.saves, want)
			}
			for _, c := range h.rec.snapshots[len(h.rec.snapshots)-1] {
				if c.Result == nil || c.InFlight {
					t.Errorf("before the model is asked again, the last save holds %s without its result", c.ID)
				}
			}
		})
	}
}
