//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/awf-dev/awf/internal/domain/state"
)

// agentApproval is a workflow whose agent step's only call needs a person's approval; %s
// names it (the cassette's interactions are by workflow).
const agentApproval = `name: %s
tools:
  - name: write_file
    builtin: true
    approval: prompt
steps:
  - name: edit
    type: agent
    provider: openai
    options:
      model: test-model
    prompt: Write hello to out.txt.
    tools: [write_file]
output: "{{states.edit.output}}"
`

// agentApprovalCassette: the model asks for the write, then answers; the approved run's
// call succeeded, the denied run's was denied.
const agentApprovalCassette = `version: 1
interactions:
%s`

const agentApprovalTurns = `  - workflow: %[1]s
    step: edit
    request:
      model: test-model
      messages:
        - {role: user, content: "Write hello to out.txt."}
      tools: [write_file]
    response:
      content: Writing it.
      tool_calls:
        - {id: call_1, name: write_file, arguments: "{\"path\":\"out.txt\",\"content\":\"hello\\n\"}"}
  - workflow: %[1]s
    step: edit
    request:
      model: test-model
      messages:
        - {role: user, content: "Write hello to out.txt."}
        - role: assistant
          content: Writing it.
          tool_calls:
            - {id: call_1, name: write_file, arguments: "{\"path\":\"out.txt\",\"content\":\"hello\\n\"}"}
        - {role: tool, tool_call_id: call_1, name: write_file, is_error: %[2]t, content: "-"}
      tools: [write_file]
    response:
      content: %[3]s
`

// startAgentRun submits an agent workflow to the temporal engine and waits until its call
// waits for approval; it returns the client (to Wait for), its stdout, the run and the call.
func startAgentRun(t *testing.T, e *env, addr, file string) (wait func() runResult, runID, callID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	client := e.cmd(ctx, "run", file, "--replay", "approval.cassette.yaml", "--engine", "temporal", "--temporal", addr, "--output", "json")
	stderr, err := client.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout lockedBuffer
	client.Stdout = &stdout
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	m := waitLine(t, stderr, regexp.MustCompile(`waits for approval: awf approve (\S+) (\S+)`))
	return func() runResult {
		t.Helper()
		defer cancel()
		if err := client.Wait(); err != nil {
			t.Fatalf("awf run %s: %v\n%s", file, err, stdout.String())
		}
		var res runResult
		if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil {
			t.Fatalf("run result %q: %v", stdout.String(), err)
		}
		return res
	}, m[1], m[2]
}

// TestTemporalAgentDurableApproval: the call of an agent step that needs a person waits on
// the server (the worker is killed and another started while it waits); awf status shows it
// with its arguments; awf approve releases it, the write happens once and the audit says who
// approved it from where. awf deny gives the model the denial, with the reason.
func TestTemporalAgentDurableApproval(t *testing.T) {
	addr := startTemporal(t)
	e := newEnv(t)
	e.write("approve.yaml", fmt.Sprintf(agentApproval, "agent-approve"))
	e.write("deny.yaml", fmt.Sprintf(agentApproval, "agent-deny"))
	e.write("approval.cassette.yaml", fmt.Sprintf(agentApprovalCassette,
		fmt.Sprintf(agentApprovalTurns, "agent-approve", false, "Written.")+fmt.Sprintf(agentApprovalTurns, "agent-deny", true, "Not written.")))
	w := e.startWorker(addr)

	wait, runID, callID := startAgentRun(t, e, addr, "approve.yaml")
	w.kill()
	e.startWorker(addr)
	st := e.mustRun(0, "status", "--engine", "temporal", "--temporal", addr, runID)
	if !strings.Contains(st.stdout, "waiting for approval") || !strings.Contains(st.stdout, `"content":"hello\\n"`) || !strings.Contains(st.stdout, callID) {
		t.Errorf("status does not show the agent step's waiting call with its arguments:\n%s", st.stdout)
	}
	e.mustRun(0, "approve", runID, callID, "--temporal", addr)
	res := wait()
	if res.Status != "completed" || res.Output != "Written." {
		t.Fatalf("approved run: %+v", res)
	}
	if data, err := os.ReadFile(filepath.Join(e.dir, "out.txt")); err != nil || string(data) != "hello\n" {
		t.Errorf("out.txt = %q, %v", data, err)
	}
	host, _ := os.Hostname()
	var decided int
	for _, l := range agentAudit(e, runID) {
		if l.CallID != callID {
			continue
		}
		decided++
		if l.Approval.By != "user" || l.Approval.User == "" || l.Approval.TTY != "host "+host || l.Outcome != "ok" {
			t.Errorf("the audit record does not say who approved the call and from where: %+v", l)
		}
	}
	if decided != 1 {
		t.Errorf("call %s has %d audit records, want 1", callID, decided)
	}
	calls := e.state(runID).States["edit"].ToolCalls
	if len(calls) != 1 || calls[0].ID != callID || calls[0].Result == nil || !calls[0].Result.Success {
		t.Errorf("tool calls = %+v, want the approved write", calls)
	}

	if err := os.Remove(filepath.Join(e.dir, "out.txt")); err != nil {
		t.Fatal(err)
	}
	wait, runID, callID = startAgentRun(t, e, addr, "deny.yaml")
	e.mustRun(0, "deny", runID, callID, "--reason", "not today", "--temporal", addr)
	res = wait()
	if res.Status != "completed" || res.Output != "Not written." {
		t.Fatalf("denied run: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "out.txt")); err == nil {
		t.Error("the denied write happened")
	}
	calls = e.state(runID).States["edit"].ToolCalls
	if len(calls) != 1 || calls[0].Result == nil || !calls[0].Result.Denied || !strings.Contains(calls[0].Result.Error, "not today") {
		t.Errorf("tool calls = %+v, want the write denied with the reason", calls)
	}
}

// agentTurns is an agent step of four model turns and three calls; hold waits for the file
// go, so that the test can kill the worker running it. It is idempotent: the worker taking
// over runs it again. Each call appends to calls.log only once it is done.
const agentTurns = `name: agent-turns
tools:
  - name: log_a
    description: Append a to calls.log
    command: "echo a >> calls.log; echo logged a"
    approval: auto
  - name: hold
    description: Wait for the file go, then append h to calls.log
    command: "while [ ! -f go ]; do sleep 0.05; done; echo h >> calls.log; echo held"
    approval: auto
    idempotent: true
  - name: log_b
    description: Append b to calls.log
    command: "echo b >> calls.log; echo logged b"
    approval: auto
steps:
  - name: work
    type: agent
    provider: openai
    mode: conversation
    options:
      model: test-model
    prompt: Log a, hold, then log b.
    tools: [log_a, hold, log_b]
output: "{{states.work.output}}"
`

// agentTurnsCassette: one call per reply, then the answer.
var agentTurnsCassette = func() string {
	type call struct{ id, name string }
	calls := []call{{"call_1", "log_a"}, {"call_2", "hold"}, {"call_3", "log_b"}}
	var b strings.Builder
	b.WriteString("version: 1\ninteractions:\n")
	history := "        - {role: user, content: \"Log a, hold, then log b.\"}\n"
	for i := 0; i <= len(calls); i++ {
		fmt.Fprintf(&b, "  - workflow: agent-turns\n    step: work\n    request:\n      model: test-model\n      messages:\n%s      tools: [log_a, hold, log_b]\n", history)
		fmt.Fprintf(&b, "    response:\n      usage: {input: %d, output: 10, total: %d}\n", 100*(i+1), 100*(i+1)+10)
		if i == len(calls) {
			b.WriteString("      content: All done.\n")
			break
		}
		c := calls[i]
		fmt.Fprintf(&b, "      content: Calling %s.\n      tool_calls:\n        - {id: %s, name: %s, arguments: \"{}\"}\n", c.name, c.id, c.name)
		history += fmt.Sprintf("        - role: assistant\n          content: Calling %s.\n          tool_calls:\n            - {id: %s, name: %s, arguments: \"{}\"}\n", c.name, c.id, c.name)
		history += fmt.Sprintf("        - {role: tool, tool_call_id: %s, name: %s, content: \"-\"}\n", c.id, c.name)
	}
	return b.String()
}()

// agentShape is what an agent step records, without what differs between two runs (times,
// durations, the ids of audit records).
func agentShape(t *testing.T, st *state.RunState, step string) string {
	t.Helper()
	s := agentStep(t, st, step)
	type msg struct {
		Role, Content, CallID string
		Calls                 int
		IsError               bool
	}
	var conv []msg
	stopped := ""
	if s.Conversation != nil {
		stopped = s.Conversation.StoppedBy
		for _, m := range s.Conversation.Messages {
			conv = append(conv, msg{m.Role, m.Content, m.ToolCallID, len(m.ToolCalls), m.IsError})
		}
	}
	var turns []string
	for _, tr := range s.Turns {
		turns = append(turns, fmt.Sprintf("%s %s %v", tr.FinishReason, tr.Text, tr.Calls))
	}
	b, _ := json.MarshalIndent(struct {
		Normalized string
		Tokens     *state.Tokens
		Turns      []string
		Messages   []msg
		StoppedBy  string
	}{normalized(st), s.Tokens, turns, conv, stopped}, "", "  ")
	return string(b)
}

// TestTemporalWorkerLostBetweenTurns: an agent step of several turns with a shared
// workspace; the worker running its second call is killed (-9). The other worker continues
// the step from the workflow's history: no completed call or model turn runs again (calls.log
// has each call once), the call cut off runs again (idempotent), and the state exported from
// the workflow (tool_calls, tool_stats, tokens, turns, conversation) equals a local run's.
func TestTemporalWorkerLostBetweenTurns(t *testing.T) {
	addr := startTemporal(t)
	e := newEnv(t)
	e.write("turns.yaml", agentTurns)
	e.write("turns.cassette.yaml", agentTurnsCassette)
	e.write("go", "")
	local := e.runJSON(0, "run", "turns.yaml", "--replay", "turns.cassette.yaml")
	for _, f := range []string{"go", "calls.log"} {
		if err := os.Remove(filepath.Join(e.dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	workers := []*worker{e.startWorker(addr), e.startWorker(addr)}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	client := e.cmd(ctx, "run", "turns.yaml", "--replay", "turns.cassette.yaml", "--engine", "temporal",
		"--temporal", addr, "--shared-workspace", "--output", "json")
	var stdout, stderr lockedBuffer
	client.Stdout, client.Stderr = &stdout, &stderr
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	var running *worker
	waitFor(t, func() bool { running = workerOfHelper(workers, "sleep"); return running != nil })
	running.kill()
	e.write("go", "")
	if err := client.Wait(); err != nil {
		t.Fatalf("awf run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var res runResult
	if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil || res.Status != "completed" || res.Output != "All done." {
		t.Fatalf("run result %q: %v\n%s", stdout.String(), err, stderr.String())
	}
	if b, _ := os.ReadFile(filepath.Join(e.dir, "calls.log")); string(b) != "a\nh\nb\n" {
		t.Errorf("calls.log = %q, want each call once", b)
	}
	exported := e.mustRun(0, "status", "--engine", "temporal", "--temporal", addr, res.RunID, "--output", "yaml")
	var st state.RunState
	if err := yaml.Unmarshal([]byte(exported.stdout), &st); err != nil {
		t.Fatalf("exported state: %v\n%s", err, exported.stdout)
	}
	if got, want := agentShape(t, &st, "work"), agentShape(t, e.state(local.RunID), "work"); got != want {
		t.Errorf("exported state differs from the local run's:\n%s\nlocal:\n%s", got, want)
	}
	calls := st.States["work"].ToolCalls
	if len(calls) != 3 || calls[1].Recovery == nil || calls[1].Recovery.Decision != state.RecoveryRerun {
		t.Errorf("tool calls = %+v, want hold's record to say it ran again", calls)
	}
}

// longModel is an OpenAI-compatible model that asks for the tool big n times, one call a
// reply, then answers. It keeps no state: the next call is read from the last tool result's
// call id, so any worker may ask it, any number of times.
type longModel struct{ n int }

func (m longModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
	}
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	k := 0
	if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
		k, _ = strconv.Atoi(strings.TrimPrefix(last.ToolCallID, "call_"))
	}
	msg := fmt.Sprintf(`{"role":"assistant","content":"Call %d.","tool_calls":[{"id":"call_%d","type":"function","function":{"name":"big","arguments":"{\"n\":%d}"}}]}`, k+1, k+1, k+1)
	finish := "tool_calls"
	if k >= m.n {
		msg, finish = `{"role":"assistant","content":"Done."}`, "stop"
	}
	w.Header().Set("Content-Type", "application/json")
	// Tokens as a model counts them, about 4 bytes each: the loop keeps its context window by
	// them.
	prompt := len(body) / 4
	fmt.Fprintf(w, `{"id":"c%d","object":"chat.completion","created":1767225600,"model":"long","choices":[{"index":0,"message":%s,"finish_reason":"%s"}],"usage":{"prompt_tokens":%d,"completion_tokens":5,"total_tokens":%d}}`,
		k, msg, finish, prompt, prompt+5)
}

// TestTemporalAgentLongRun (opt-in: AWF_TEMPORAL_BENCH=1, a few minutes): an agent step of
// 500 model turns, each calling a tool that prints 100 KB, completes on the temporal engine;
// the workflow history's size and length are logged (docs/distributed.md quotes them). The
// conversation keeps a sliding window (the model would refuse 50 MB); tool_calls keep every
// output, as locally.
func TestTemporalAgentLongRun(t *testing.T) {
	if os.Getenv("AWF_TEMPORAL_BENCH") == "" {
		t.Skip("AWF_TEMPORAL_BENCH=1 runs it (a few minutes)")
	}
	const turns = 500
	addr := startTemporal(t)
	e := newEnv(t)
	ts := httptest.NewServer(longModel{n: turns})
	defer ts.Close()
	e.write("long.yaml", `name: agent-long
providers:
  long:
    type: openai
    base_url: `+ts.URL+`/v1
    model: long
tools:
  - name: big
    description: Print 100 KB
    command: "head -c 102400 /dev/zero | tr '\\0' x"
    parameters:
      - {name: n, type: integer, required: true}
    approval: auto
steps:
  - name: work
    type: agent
    provider: long
    mode: conversation
    prompt: Call big until told otherwise.
    tools: [big]
    tool_options:
      max_calls: 1000
    conversation:
      max_turns: 1000
      max_context_tokens: 60000
output: "{{states.work.output}}"
`)
	e.startWorker(addr)
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Minute)
	defer cancel()
	args := []string{"run", "long.yaml", "--engine", "temporal", "--temporal", addr, "--output", "json", "--quiet"}
	r := e.capture(e.cmd(ctx, args...), args)
	took := time.Since(start)
	var res runResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || r.code != 0 || res.Status != "completed" || res.Output != "Done." {
		t.Fatalf("run: exit %d, %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	st := e.state(res.RunID).States["work"]
	size := func(r *state.ToolCallResult) int64 { // the state file keeps a large output beside it
		return max(int64(len(r.Output)), r.OutputSize)
	}
	if len(st.ToolCalls) != turns || size(st.ToolCalls[turns-1].Result) != 102400 || len(st.Turns) != turns+1 {
		t.Fatalf("%d calls, %d turns; want %d and %d with 100 KB outputs", len(st.ToolCalls), len(st.Turns), turns, turns+1)
	}
	out, err := exec.Command(temporalCLI(t), "workflow", "describe", "-w", res.RunID, "--address", addr, "--output", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		WorkflowExecutionInfo struct {
			HistoryLength    string `json:"historyLength"`
			HistorySizeBytes string `json:"historySizeBytes"`
		} `json:"workflowExecutionInfo"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("describe: %v\n%s", err, out)
	}
	store, _ := exec.Command("du", "-sk", filepath.Join(e.dir, ".awf", "payloads")).Output()
	start = time.Now()
	local := e.capture(e.cmd(ctx, args[:2]...), args[:2])
	if local.code != 0 {
		t.Fatalf("local run: exit %d\n%s", local.code, local.stderr)
	}
	t.Logf("%d model turns, %d calls of 100 KB: %s on the temporal engine (%s locally); history %s events, %s bytes; payload store %s KB",
		turns+1, turns, took.Round(time.Second), time.Since(start).Round(time.Second), d.WorkflowExecutionInfo.HistoryLength,
		d.WorkflowExecutionInfo.HistorySizeBytes, strings.Fields(string(store))[0])
}

// TestTemporalAgentStepTimeout: an agent step's timeout bounds its whole attempt on the
// temporal engine too (not each model turn or call): the call running when it ends is cut
// off then, and the run fails as the same run fails locally.
func TestTemporalAgentStepTimeout(t *testing.T) {
	addr := startTemporal(t)
	e := newEnv(t)
	e.write("slow.yaml", `name: agent-timeout
tools:
  - name: slow
    description: Take a long while
    command: "sleep 30"
    approval: auto
steps:
  - name: work
    type: agent
    provider: openai
    timeout: 2s
    options:
      model: test-model
    prompt: Be slow.
    tools: [slow]
`)
	e.write("slow.cassette.yaml", `version: 1
interactions:
  - workflow: agent-timeout
    step: work
    request:
      model: test-model
      messages:
        - {role: user, content: "Be slow."}
      tools: [slow]
    response:
      content: Slowly.
      tool_calls:
        - {id: call_1, name: slow, arguments: "{}"}
`)
	e.startWorker(addr)
	local := e.runJSON(3, "run", "slow.yaml", "--replay", "slow.cassette.yaml")
	remote := e.runJSON(3, "run", "slow.yaml", "--replay", "slow.cassette.yaml", "--engine", "temporal", "--temporal", addr)
	if remote.Error.Message != local.Error.Message || !strings.Contains(local.Error.Message, "timed out after 2s") {
		t.Errorf("error = %q, locally %q", remote.Error.Message, local.Error.Message)
	}
	if got, want := normalized(e.state(remote.RunID)), normalized(e.state(local.RunID)); got != want {
		t.Errorf("state differs from the local run's:\n%s\nlocal:\n%s", got, want)
	}
	// The worker's governed path ended the call when the attempt's time was up, as locally
	// (not the activity's timeout, which leaves room for heartbeats).
	got, want := e.state(remote.RunID).States["work"].ToolCalls[0].Result, e.state(local.RunID).States["work"].ToolCalls[0].Result
	if got == nil || want == nil || got.Error != want.Error {
		t.Errorf("the cut-off call's result = %+v, locally %+v", got, want)
	}
}
