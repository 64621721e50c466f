//go:build unix

package main

// End-to-end tests of agent outcomes that are not a success (issue 13, items 5 and 6): a
// refusal or a cut-off answer fails the step, and Anthropic's thinking blocks go back to the
// API with the turn they came with.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/awf-dev/awf/cmd/awf/internal/ptytest"
	"github.com/awf-dev/awf/internal/domain/state"
)

// outcomeWorkflow is a one-step agent workflow on an OpenAI-compatible server at base, with
// extra lines under the step's options.
func outcomeWorkflow(base, options string) string {
	return `name: outcome
providers:
  local: {type: openai, base_url: ` + base + `, model: gpt-e2e}
steps:
  - name: ask
    type: agent
    provider: local
    prompt: Tell me a story.
    options:
      temperature: 0` + options + `
output: "{{states.ask.output}}"
`
}

func completion(message, finish string) string {
	return `{"id":"chatcmpl-o","object":"chat.completion","created":1767225600,"model":"gpt-e2e","choices":[{"index":0,` +
		`"message":` + message + `,"logprobs":null,"finish_reason":"` + finish + `"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`
}

// TestAgentRefusalAndTruncationFailTheStep: a refusal and an answer cut off at the token limit
// fail the step (exit 3) with what happened, instead of completing it with an empty or cut-off
// output; options.allow_truncated accepts the cut-off answer and is not sent to the server.
func TestAgentRefusalAndTruncationFailTheStep(t *testing.T) {
	tests := []struct {
		name    string
		reply   string
		options string
		code    int
		err     string
	}{
		{"refusal", completion(`{"role":"assistant","content":null,"refusal":"I'm sorry, I cannot help with that."}`, "stop"), "", 3,
			"the model refused: I'm sorry, I cannot help with that."},
		{"cut off", completion(`{"role":"assistant","content":"Once upon a"}`, "length"), "", 3,
			"the model's answer was cut off at the token limit"},
		{"cut off, accepted", completion(`{"role":"assistant","content":"Once upon a"}`, "length"), "\n      allow_truncated: true", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			srv := &fakeOpenAI{replies: []string{tc.reply}}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			e.write("wf.yaml", outcomeWorkflow(ts.URL+"/v1", tc.options))
			r := e.mustRun(tc.code, "run", "wf.yaml")
			id := agentRunID(e)
			st := agentStep(t, e.state(id), "ask")
			if tc.code == 0 {
				if st.Status != state.Completed || st.Output != "Once upon a" {
					t.Errorf("step %s, output %q", st.Status, st.Output)
				}
				if got := srv.got(); len(got) != 1 || strings.Contains(fmt.Sprint(got[0].Body), "allow_truncated") {
					t.Errorf("requests %+v: allow_truncated must not reach the server", got)
				}
				return
			}
			if !strings.Contains(r.stderr, tc.err) || st.Status != state.Failed || !strings.Contains(st.Error, tc.err) {
				t.Errorf("stderr %q; step %s, error %q; want it failed with %q", r.stderr, st.Status, st.Error, tc.err)
			}
		})
	}
}

// fakeAnthropic is a Messages API server for a model with extended thinking. Its first reply
// thinks (a thinking block with a signature and a redacted_thinking block) and calls
// read_file; its second answers. Like the real API, it refuses (400) a request whose last
// assistant turn with tool_use does not start with that turn's thinking blocks, unmodified.
type fakeAnthropic struct {
	mu       sync.Mutex
	requests int
	rejected []string
}

var fakeThinking = []map[string]any{
	{"type": "thinking", "thinking": "Read the note before answering.", "signature": "EuYBCkQYAiJAe2e"},
	{"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw"},
}

func (f *fakeAnthropic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	data, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(data, &req); err != nil {
		f.reject(w, "invalid JSON")
		return
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "assistant" || !hasToolUse(m.Content) {
			continue
		}
		if len(m.Content) < len(fakeThinking) || !reflect.DeepEqual(m.Content[:len(fakeThinking)], fakeThinking) {
			f.reject(w, fmt.Sprintf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%v`. "+
				"When `thinking` is enabled, a final `assistant` message must start with a thinking block", i, m.Content[0]["type"]))
			return
		}
		break
	}
	f.mu.Lock()
	f.requests++
	n := f.requests
	f.mu.Unlock()
	content := []map[string]any{{"type": "text", "text": "The note says alpha."}}
	stop := "end_turn"
	if n == 1 {
		content = append(append([]map[string]any{}, fakeThinking...),
			map[string]any{"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": map[string]any{"path": "notes/a.txt"}})
		stop = "tool_use"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant",
		"model": "claude-e2e", "content": content, "stop_reason": stop, "usage": map[string]int{"input_tokens": 10, "output_tokens": 5}})
}

func hasToolUse(blocks []map[string]any) bool {
	for _, b := range blocks {
		if b["type"] == "tool_use" {
			return true
		}
	}
	return false
}

func (f *fakeAnthropic) reject(w http.ResponseWriter, msg string) {
	f.mu.Lock()
	f.rejected = append(f.rejected, msg)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}})
}

// TestAgentThinkingRoundTrip: with options.thinking, the second turn carries the first turn's
// thinking blocks back exactly (the server refuses it otherwise), and the state keeps them in
// the conversation.
func TestAgentThinkingRoundTrip(t *testing.T) {
	e := agentEnv(t)
	srv := &fakeAnthropic{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	e.write("wf.yaml", `name: thinking
providers:
  claude: {type: anthropic, base_url: `+ts.URL+`, model: claude-e2e, api_key_env: E2E_ANTHROPIC_KEY}
tools:
  - {name: read_file, builtin: true, approval: auto}
steps:
  - name: ask
    type: agent
    provider: claude
    mode: conversation
    prompt: What does notes/a.txt say?
    tools: [read_file]
    options:
      max_tokens: 16000
      thinking: {type: enabled, budget_tokens: 10000}
output: "{{states.ask.output}}"
`)
	r := agentRun(e, []string{"E2E_ANTHROPIC_KEY=sk-ant-e2e"}, "run", "wf.yaml")
	if r.code != 0 || len(srv.rejected) > 0 {
		t.Fatalf("exit %d, rejected %v\n%s", r.code, srv.rejected, r.stderr)
	}
	st := agentStep(t, e.state(agentRunID(e)), "ask")
	if st.Output != "The note says alpha." || st.Conversation == nil {
		t.Fatalf("output %q, conversation %+v", st.Output, st.Conversation)
	}
	want := []state.Thinking{{Text: "Read the note before answering.", Signature: "EuYBCkQYAiJAe2e"},
		{Redacted: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw"}}
	var got []state.Thinking
	for _, m := range st.Conversation.Messages {
		if len(m.ToolCalls) > 0 {
			got = m.Thinking
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("thinking in the state's conversation = %+v, want %+v", got, want)
	}
}

// TestAgentKillThenResumeSettledByCheck kills awf inside a call that is not idempotent but
// whose tool declares verify:, after the call's effect happened; on resume the check settles
// it: the call is not run again (the message is sent once), the model gets a success, and the
// state and the audit log say the check decided.
func TestAgentKillThenResumeSettledByCheck(t *testing.T) {
	e := agentEnv(t, "verify.yaml", "verify.cassette.yaml")
	id := killInCall(e, "agent/verify.yaml", "agent/verify.cassette.yaml", 1)
	r := e.mustRun(0, "resume", id, "--replay", "agent/verify.cassette.yaml")
	if !strings.Contains(r.stderr, "call_1 (send) was in flight when the run stopped: it took effect") {
		t.Errorf("resume did not report how the call was settled:\n%s", r.stderr)
	}
	if got := e.read("sent.log"); got != "bob\n" {
		t.Errorf("sent.log = %q, want the message sent once", got)
	}
	s := e.state(id)
	st := agentStep(t, s, "work")
	if s.Status != state.Completed || st.Output != "Sent to bob, once." || len(st.ToolCalls) != 1 {
		t.Fatalf("after resume: run %s, output %q, calls %v", s.Status, st.Output, callIDs(st.ToolCalls))
	}
	c := st.ToolCalls[0]
	if c.Result == nil || !c.Result.Success || c.Outcome != "" || c.Recovery == nil ||
		c.Recovery.Decision != state.RecoveryDone || c.Recovery.By != state.RecoveredByCheck {
		t.Errorf("settled call: result %+v, outcome %q, recovery %+v; want a success decided by the check", c.Result, c.Outcome, c.Recovery)
	}
	audit := agentAuditAll(e, id)
	var outcomes []string
	for _, l := range audit {
		outcomes = append(outcomes, l.Outcome+"/"+l.Recovery.By)
	}
	if want := []string{"started/", "ok/check"}; !reflect.DeepEqual(outcomes, want) {
		t.Errorf("audit records of the run = %v, want %v: started by the first run, closed by the check, never run again", outcomes, want)
	}
}

// TestAgentKillThenResumeSettledByThePerson: on a terminal, resume asks the person what to do
// with a cut-off call whose tool has no check; marked done, it is not run again and the model
// gets a success where the cassette recorded a failure, which the replay plays on and records
// as the turn's divergence.
func TestAgentKillThenResumeSettledByThePerson(t *testing.T) {
	e := agentEnv(t, "resume.yaml", "resume.cassette.yaml")
	id := killInCall(e, "agent/resume.yaml", "agent/resume.cassette.yaml", 3)
	p := ptytest.Open(t)
	cmd := e.cmd(t.Context(), "resume", id, "--replay", "agent/resume.cassette.yaml")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.Term, p.Term, p.Term
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if screen, ok := p.WaitFor("mark it [d]one", 1); !ok {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("resume did not ask about the cut-off call:\n%s", screen)
	}
	if err := p.Type("d"); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("resume: %v\n%s", err, p.Text())
	}
	if got := e.read("calls.log"); got != "a\nb\n" {
		t.Errorf("calls.log = %q, want the slow call not run again", got)
	}
	st := agentStep(t, e.state(id), "work")
	c := st.ToolCalls[2]
	if c.Result == nil || !c.Result.Success || c.Recovery == nil || c.Recovery.Decision != state.RecoveryDone || c.Recovery.By != state.RecoveredByUser {
		t.Errorf("settled call: result %+v, recovery %+v; want a success marked done by the person", c.Result, c.Recovery)
	}
	if n := len(st.Turns); n == 0 || !strings.Contains(st.Turns[n-1].Divergence, "the call succeeded now but failed when recorded") {
		t.Errorf("turns = %+v, want the last one to record the divergence from the cassette", st.Turns)
	}
	if l, ok := auditByCall(agentAudit(e, id))["call_3"]; !ok || l.Outcome != "ok" || l.Recovery.By != "user" {
		t.Errorf("audit record closing call_3 = %+v, %v; want ok, decided by the person", l, ok)
	}
}
