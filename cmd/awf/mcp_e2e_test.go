package main

// End-to-end tests of the two ends of issue 6 that cross process boundaries through the
// binary: the cli provider handing a step's tools to an agent CLI through `awf mcp serve`
// (the agent CLIs are played by testdata/mcpagent, a small SDK client), and `awf tools list
// --mcp` starting a workflow's MCP servers (testdata/mcp/server).

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/state"
)

// mcpBins are the programs these tests build once, beside the awf binary: the fake agent
// CLIs (one program under the names claude, codex and gemini, in agents) and the test MCP
// server.
type mcpBins struct {
	agents     string
	testServer string
}

var buildMCPBins = sync.OnceValues(func() (mcpBins, error) {
	dir := filepath.Dir(awfBin)
	b := mcpBins{agents: filepath.Join(dir, "agents"), testServer: filepath.Join(dir, "testserver")}
	if err := os.MkdirAll(b.agents, 0o755); err != nil {
		return b, err
	}
	agent := filepath.Join(dir, "mcpagent")
	for _, build := range [][2]string{{agent, "./testdata/mcpagent"}, {b.testServer, "../../testdata/mcp/server"}} {
		if out, err := exec.Command("go", "build", "-o", build[0], build[1]).CombinedOutput(); err != nil {
			return b, fmt.Errorf("go build %s: %v\n%s", build[1], err, out)
		}
	}
	for _, name := range []string{"claude", "codex", "gemini"} {
		if err := os.Symlink(agent, filepath.Join(b.agents, name)); err != nil && !errors.Is(err, os.ErrExist) {
			return b, err
		}
	}
	return b, nil
})

func mcpPrograms(t *testing.T) mcpBins {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds the fake agent CLIs and the test MCP server")
	}
	b, err := buildMCPBins()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// handoffWorkflow gives one agent step two tools, one of them denied, and a provider for each
// agent CLI; --provider picks one. greet reads the run's input, which the served tools only
// see if the run's inputs reach `awf mcp serve`.
const handoffWorkflow = `name: mcp-handoff
inputs:
  - name: greeting
    default: hello
providers:
  claude: {type: cli, command: claude -p}
  codex: {type: cli, command: codex exec}
  gemini: {type: cli, command: gemini, args: ["-p", "{{prompt}}"]}
tools:
  - name: greet
    description: Greet someone.
    command: "echo {{inputs.greeting}} {{args.name}}"
    parameters:
      - {name: name, type: string, required: true}
    approval: auto
  - name: forbidden
    description: Denied by the workflow.
    command: "echo never runs"
    approval: deny
steps:
  - name: ask
    type: agent
    provider: claude
    prompt: Greet the world, then try the forbidden tool.
    tools: [greet, forbidden]
output: "{{states.ask.output}}"
`

// agentSaw is what the fake agent CLI writes to $FAKE_AGENT_LOG.
type agentSaw struct {
	Agent      string   `json:"agent"`
	Args       []string `json:"args"`
	Prompt     string   `json:"prompt"`
	ConfigFile string   `json:"config_file"`
	Config     string   `json:"config"`
	Server     struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	} `json:"server"`
	Tools []string `json:"tools"`
}

// TestMCPHandoffToAgentCLIs runs an agent step with the cli provider for each agent CLI: awf
// writes the CLI's MCP configuration for `awf mcp serve` with the step's tools, the (fake) CLI
// starts the server and calls the tools through it, the calls are governed (the denied tool
// is denied) and audited under the run and step, the CLI's final text is the step's output,
// and the configuration is gone when the step ends.
func TestMCPHandoffToAgentCLIs(t *testing.T) {
	bins := mcpPrograms(t)
	for _, agent := range []string{"claude", "codex", "gemini"} {
		t.Run(agent, func(t *testing.T) {
			e := newEnv(t)
			e.write("wf.yaml", handoffWorkflow)
			logFile := filepath.Join(e.dir, "agent-saw.json")
			r := agentRun(e, []string{
				"PATH=" + bins.agents + string(os.PathListSeparator) + os.Getenv("PATH"),
				"FAKE_AGENT_LOG=" + logFile,
				`FAKE_AGENT_CALLS=[{"name":"greet","arguments":{"name":"world"}},{"name":"forbidden","arguments":{}}]`,
			}, "run", "wf.yaml", "--provider", agent, "--input", "greeting=hi", "--output", "json")
			if r.code != 0 {
				t.Fatalf("awf run: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			res := decode[runResult](t, r)
			wantOut := "fake " + agent + " finished. greet result: hi world; forbidden error: "
			if !strings.HasPrefix(res.Output, wantOut) || !strings.Contains(res.Output, "denied") {
				t.Errorf("output = %q, want the agent's final text %q... with the denial", res.Output, wantOut)
			}
			st := agentStep(t, e.state(res.RunID), "ask")
			if st.Output != res.Output {
				t.Errorf("the step's output = %q, want the agent's final text", st.Output)
			}

			var got []string
			audit := agentAudit(e, res.RunID)
			for _, l := range audit {
				got = append(got, fmt.Sprintf("%s %s %s %s", l.Step, l.Tool, l.Approval.Decision, l.Outcome))
			}
			if diff := cmp.Diff([]string{"ask greet allow ok", "ask forbidden deny denied"}, got); diff != "" {
				t.Errorf("audit records of run %s (-want +got):\n%s", res.RunID, diff)
			}
			checkHandledCalls(t, st, audit)

			var saw agentSaw
			if err := json.Unmarshal([]byte(e.read("agent-saw.json")), &saw); err != nil {
				t.Fatal(err)
			}
			checkServeCommand(t, e, res.RunID, saw)
			checkAgentFlags(t, saw)
			slices.Sort(saw.Tools)
			if diff := cmp.Diff([]string{"forbidden", "greet"}, saw.Tools); diff != "" {
				t.Errorf("tools the agent saw (-want +got):\n%s", diff)
			}
			if !strings.Contains(saw.Prompt, "- greet: Greet someone.") || strings.Contains(saw.Prompt, "<tool_call>") ||
				strings.Contains(saw.Prompt, "<function_calls>") {
				t.Errorf("the prompt should name the tools without asking for calls in the text:\n%s", saw.Prompt)
			}
			if saw.ConfigFile != "" {
				if _, err := os.Stat(filepath.Dir(saw.ConfigFile)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the MCP configuration directory is still there after the step (%v)", err)
				}
			}
		})
	}
}

// checkHandledCalls checks that the step's state holds the calls the agent made through awf
// mcp serve, as the audit log does (same call ids), and counts them as the loop would.
func checkHandledCalls(t *testing.T, st *state.StepState, audit []agentAuditLine) {
	t.Helper()
	type row struct {
		Tool, Approval, Output string
		Args                   map[string]any
		Success, Denied        bool
	}
	var got []row
	for _, c := range st.ToolCalls {
		if c.Result == nil || c.InFlight {
			t.Errorf("call %s (%s) has no result or is in flight: %+v", c.ID, c.Tool, c)
			continue
		}
		got = append(got, row{c.Tool, c.Result.Approval, strings.TrimSpace(c.Result.Output), c.Arguments, c.Result.Success, c.Result.Denied})
	}
	want := []row{
		{Tool: "greet", Approval: "auto", Output: "hi world", Args: map[string]any{"name": "world"}, Success: true},
		{Tool: "forbidden", Approval: "policy", Args: map[string]any{}, Denied: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the step's tool_calls (-want +got):\n%s", diff)
	}
	if len(st.ToolCalls) == len(audit) {
		for i, c := range st.ToolCalls {
			if c.ID != audit[i].CallID {
				t.Errorf("tool_calls[%d].id = %q, want the audit record's call id %q", i, c.ID, audit[i].CallID)
			}
		}
	}
	wantStats := state.ToolStats{TotalCalls: 2, Successful: 1, Denied: 1}
	if st.ToolStats == nil {
		t.Fatalf("the step has no tool_stats")
	}
	gotStats := *st.ToolStats
	gotStats.TotalDurationMs = 0
	if diff := cmp.Diff(wantStats, gotStats); diff != "" {
		t.Errorf("the step's tool_stats (-want +got):\n%s", diff)
	}
}

// checkServeCommand checks the server the agent started: this awf, serving the step's tools
// of this workflow, recording under the run and step, in the run's audit log.
func checkServeCommand(t *testing.T, e *env, runID string, saw agentSaw) {
	t.Helper()
	args := saw.Server.Args
	if saw.Server.Command != awfBin {
		t.Errorf("server command = %q, want the awf binary %q", saw.Server.Command, awfBin)
	}
	after := func(flag string) string {
		if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
			return args[i+1]
		}
		return ""
	}
	want := map[string]string{
		"--audit-log": filepath.Join(e.dir, ".awf", "audit.jsonl"),
		"--state-dir": filepath.Join(e.dir, ".awf", "runs"),
		"--workflow":  filepath.Join(e.dir, "wf.yaml"),
		"--run-id":    runID,
		"--step":      "ask",
		"--tools":     "greet,forbidden",
	}
	// The turn's private directory: beside the agent's configuration file, where there is one.
	calls := after("--calls-file")
	inTurnDir := saw.ConfigFile == "" || filepath.Dir(calls) == filepath.Dir(saw.ConfigFile)
	if filepath.Base(calls) != "calls.jsonl" || !inTurnDir {
		t.Errorf("awf mcp serve --calls-file = %q, want calls.jsonl beside the agent's configuration %q", calls, saw.ConfigFile)
	}
	for flag, v := range want {
		if got := after(flag); got != v {
			t.Errorf("awf mcp serve %s = %q, want %q (args %q)", flag, got, v, args)
		}
	}
	if i := slices.Index(args, "mcp"); i < 0 || i+1 >= len(args) || args[i+1] != "serve" {
		t.Errorf("server arguments %q do not run awf mcp serve", args)
	}
	if after("--input-file") == "" {
		t.Errorf("server arguments %q pass no --input-file", args)
	}
}

// checkAgentFlags checks how the configuration reached each CLI (docs/mcp.md).
func checkAgentFlags(t *testing.T, saw agentSaw) {
	t.Helper()
	args := saw.Args
	switch saw.Agent {
	case "claude":
		want := []string{"-p", "--mcp-config", saw.ConfigFile, "--strict-mcp-config", "--allowedTools", "mcp__awf"}
		if diff := cmp.Diff(want, args); diff != "" {
			t.Errorf("claude arguments (-want +got):\n%s", diff)
		}
		if !strings.Contains(saw.Config, `"mcpServers"`) {
			t.Errorf("claude's --mcp-config file holds %q", saw.Config)
		}
	case "codex":
		if len(args) != 7 || args[0] != "exec" || args[5] != "-c" || args[6] != "mcp_servers.awf.tool_timeout_sec=600" {
			t.Errorf("codex arguments = %q, want exec and three -c mcp_servers.awf overrides", args)
		}
	case "gemini":
		if len(args) != 4 || args[0] != "-p" || args[1] != saw.Prompt || args[2] != "--allowed-mcp-server-names" || args[3] != "awf" {
			t.Errorf("gemini arguments = %q, want -p PROMPT --allowed-mcp-server-names awf", args)
		}
		if !strings.Contains(saw.Config, `"trust": true`) || !strings.HasSuffix(saw.ConfigFile, "awf-gemini-settings.json") {
			t.Errorf("gemini settings %s hold %q", saw.ConfigFile, saw.Config)
		}
	}
}

// mcpListWorkflow declares the test MCP server, which no step uses, and a second server when
// broken is set.
func mcpListWorkflow(broken bool) string {
	wf := "name: mcp-list\nmcp_servers:\n  fs:\n    command: ${TESTSERVER}\n"
	if broken {
		wf += "  gone:\n    command: /nonexistent/mcp-server\n"
	}
	return wf + "steps:\n  - name: noop\n    type: shell\n    command: \"true\"\n"
}

// TestMCPToolsList lists the tools of a workflow's MCP servers through the binary: as JSON
// and as a table, filtered with --search, and a server that does not start is an error
// naming it.
func TestMCPToolsList(t *testing.T) {
	bins := mcpPrograms(t)
	e := newEnv(t)
	e.write("wf.yaml", mcpListWorkflow(false))
	e.write("broken.yaml", mcpListWorkflow(true))
	extra := []string{"TESTSERVER=" + bins.testServer}

	r := e.mustRunIO(0, "", extra, "tools", "list", "--mcp", "--workflow", "wf.yaml", "--output", "json")
	type imported struct {
		Name, Ref, Server, Tool, Description string
		ReadOnly                             bool `json:"read_only"`
	}
	res := decode[struct{ Tools []imported }](t, r)
	byRef := map[string]imported{}
	for _, tl := range res.Tools {
		byRef[tl.Ref] = tl
	}
	want := map[string]imported{
		"fs.echo":       {Name: "fs__echo", Ref: "fs.echo", Server: "fs", Tool: "echo", Description: "Echo the text back.", ReadOnly: true},
		"fs.write_note": {Name: "fs__write_note", Ref: "fs.write_note", Server: "fs", Tool: "write_note", Description: "Append a line to the notes file (NOTES_FILE)."},
		"fs.get.data":   {Name: "fs__get_data", Ref: "fs.get.data", Server: "fs", Tool: "get.data", Description: "A tool whose name holds a dot.", ReadOnly: true},
	}
	for ref, w := range want {
		if diff := cmp.Diff(w, byRef[ref]); diff != "" {
			t.Errorf("tool %s (-want +got):\n%s", ref, diff)
		}
	}
	if len(res.Tools) != 7 {
		t.Errorf("listed %d tools, want the server's 7: %+v", len(res.Tools), res.Tools)
	}

	r = e.mustRunIO(0, "", extra, "tools", "list", "--mcp", "--workflow", "wf.yaml", "--search", "note")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "NAME") || !strings.Contains(lines[0], "READ-ONLY") {
		t.Fatalf("table = %q, want a header and one tool", r.stdout)
	}
	if f := strings.Fields(lines[1]); len(f) < 3 || f[0] != "fs.write_note" || f[1] != "fs__write_note" || f[2] != "no" {
		t.Errorf("table row = %q, want fs.write_note fs__write_note no ...", lines[1])
	}

	r = e.mustRunIO(2, "", extra, "tools", "list", "--mcp", "--workflow", "broken.yaml")
	if !strings.Contains(r.stderr, "mcp_servers.gone") && !strings.Contains(r.stderr, `"gone"`) {
		t.Errorf("a server that does not start: stderr %q does not name it", r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("a failed listing printed %q on stdout", r.stdout)
	}
	e.mustRunIO(1, "", extra, "tools", "list", "--mcp")
}
