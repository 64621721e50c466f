package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// reviewerModel speaks OpenAI's chat completions: the first turn asks for one call of every
// kind a reviewer must be able to tell apart, the second answers.
func reviewerModel(t *testing.T) *httptest.Server {
	var mu sync.Mutex
	turn := 0
	call := func(id, name, args string) string {
		a, _ := json.Marshal(args)
		return fmt.Sprintf(`{"id":%q,"type":"function","function":{"name":%q,"arguments":%s}}`, id, name, a)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		turn++
		n := turn
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			calls := strings.Join([]string{
				call("c_ok", "read_file", `{"path":"notes.txt"}`),
				call("c_policy", "read_file", `{"path":"/etc/passwd"}`),
				call("c_approval", "write_file", `{"path":"out.txt","content":"x"}`),
				call("c_quota1", "list_dir", `{"path":"."}`),
				call("c_quota2", "list_dir", `{"path":"."}`),
				call("c_unknown", "READ_FILE", `{"path":"notes.txt"}`),
				call("c_malformed", "read_file", `[1, 2]`),
				call("c_cmd", "count_words", `{"text":"one two three"}`),
			}, ",")
			fmt.Fprintf(w, `{"id":"r1","model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"Let me look.","tool_calls":[%s]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}}`, calls)
			return
		}
		fmt.Fprint(w, `{"id":"r2","model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"Done reviewing."},"finish_reason":"stop"}],"usage":{"prompt_tokens":300,"completion_tokens":5,"total_tokens":305}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestReviewerCanReconstructTheRun: from the state file and the audit log alone, a reviewer
// sees one audit record per call the model made, allowed or not, the layer and rule of every
// denial, the command a command tool ran, the provider, model and usage of the agent step;
// and awf audit --decision deny lists exactly the denied calls.
func TestReviewerCanReconstructTheRun(t *testing.T) {
	srv := reviewerModel(t)
	e := newEnv(t)
	e.write("notes.txt", "alpha\n")
	e.write("child.yaml", "name: child\nsteps:\n  - {name: hello, type: shell, command: echo from-child}\noutput: \"{{states.hello.output}}\"\n")
	e.write("review.yaml", fmt.Sprintf(`name: review
providers:
  scripted: {type: openai, base_url: %q, model: gpt-test, api_key_env: SCRIPTED_KEY}
tools:
  - {name: read_file, builtin: true, approval: auto}
  - {name: list_dir, builtin: true, approval: auto, max_calls: 1}
  - {name: write_file, builtin: true}
  - name: count_words
    description: Count the words of a text
    command: "echo {{args.text}} | wc -w"
    approval: auto
    parameters:
      - {name: text, type: string, required: true}
steps:
  - {name: prepare, type: shell, command: echo prepared}
  - name: child
    type: workflow
    workflow: child.yaml
  - name: agent
    type: agent
    provider: scripted
    prompt: Review the notes.
    tools: [read_file, list_dir, write_file, count_words]
  - name: count
    type: tool
    tool: count_words
    args: {text: "four five six seven"}
`, srv.URL+"/v1"))
	cmd := e.cmd(t.Context(), "run", "review.yaml", "--non-interactive", "--output", "json")
	cmd.Env = append(cmd.Env, "SCRIPTED_KEY=k")
	r := e.capture(cmd, []string{"run", "review.yaml"})
	e.wantExit(r, 0, []string{"run", "review.yaml"})
	var res runResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	st := e.state(res.RunID)

	// One audit record per call, whatever happened to it.
	modelCalls := []string{"c_ok", "c_policy", "c_approval", "c_quota1", "c_quota2", "c_unknown", "c_malformed", "c_cmd"}
	records := agentAudit(e, res.RunID)
	perCall := map[string]int{}
	for _, l := range records {
		perCall[l.CallID]++
	}
	for _, id := range modelCalls {
		if perCall[id] != 1 {
			t.Errorf("call %s has %d audit records, want 1", id, perCall[id])
		}
	}
	byCall := auditByCall(records)

	// Each denial says which layer decided, under which rule.
	denied := map[string]func(l agentAuditLine) bool{
		"c_policy": func(l agentAuditLine) bool {
			return strings.HasPrefix(l.Verdict.Layer, "L1") && strings.Contains(l.Verdict.Rule, "paths")
		},
		"c_approval": func(l agentAuditLine) bool { return l.Verdict.By == "non_interactive" },
		"c_unknown":  func(l agentAuditLine) bool { return l.Verdict.Layer == "L0 gate" && l.Verdict.Rule == "tool name" },
		"c_malformed": func(l agentAuditLine) bool {
			return l.Verdict.Layer == "L0 gate" && l.Verdict.Rule == "arguments object"
		},
	}
	quota := 0
	for _, id := range []string{"c_quota1", "c_quota2"} {
		if l := byCall[id]; l.Outcome == "denied" && l.Verdict != nil && strings.Contains(l.Verdict.Rule, "max_calls") {
			quota++
			denied[id] = func(agentAuditLine) bool { return true }
		}
	}
	if quota != 1 {
		t.Errorf("%d list_dir calls denied by the quota, want 1 of 2", quota)
	}
	for id, ok := range denied {
		l := byCall[id]
		if l.Outcome != "denied" || l.Verdict == nil || l.Verdict.Decision != "deny" || !ok(l) {
			t.Errorf("denial %s recorded as outcome %q verdict %+v", id, l.Outcome, l.Verdict)
		}
	}

	// What ran: the command tool's command, in the audit log and the state.
	var cmdLine struct {
		Command any `json:"command"`
	}
	for line := range strings.Lines(e.read(".awf/audit.jsonl")) {
		if strings.Contains(line, `"call_id":"c_cmd"`) && !strings.Contains(line, `"outcome":"started"`) {
			_ = json.Unmarshal([]byte(line), &cmdLine)
		}
	}
	if !strings.Contains(fmt.Sprint(cmdLine.Command), "one two three") {
		t.Errorf("the audit record of the command tool has command %v, want the bound command", cmdLine.Command)
	}
	if prep := st.States["prepare"]; prep == nil || prep.ExitCode == nil || prep.Output != "prepared" {
		t.Errorf("shell step record = %+v", prep)
	}
	if child := st.States["child"]; child == nil || child.Output != "from-child" {
		t.Errorf("sub-workflow step record = %+v", child)
	}

	// The model: provider, model, usage per turn.
	ag := agentStep(t, st, "agent")
	if ag.Agent == nil || ag.Agent.Provider != "scripted" || ag.Agent.Model != "gpt-test" || !strings.Contains(ag.Agent.Endpoint, "127.0.0.1") {
		t.Errorf("agent record = %+v, want provider scripted, model gpt-test and the endpoint", ag.Agent)
	}
	if len(ag.Turns) != 2 || ag.Turns[0].Usage == nil || ag.Turns[1].Usage == nil || ag.Turns[0].Text != "Let me look." {
		t.Errorf("turns = %+v, want two with their usage and text", ag.Turns)
	}
	if got := callIDs(ag.ToolCalls); len(got) != len(modelCalls) {
		t.Errorf("state records calls %v, want %d", got, len(modelCalls))
	}

	// awf audit --decision deny lists exactly the denied calls.
	out := e.mustRun(0, "audit", "--run", res.RunID[:8], "--decision", "deny", "--output", "json").stdout
	var got, want []string
	for line := range strings.Lines(out) { // one JSON record a line, as in the log
		var l struct {
			CallID string `json:"call_id"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("awf audit --output json: %v\n%s", err, out)
		}
		got = append(got, l.CallID)
	}
	for id := range denied {
		want = append(want, id)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("awf audit --decision deny lists %v, want exactly %v", got, want)
	}
}
