package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func testServeCommand() ServeCommand {
	return ServeCommand{
		Executable: "/opt/awf/bin/awf",
		Workflow:   "/work/wf.yaml",
		Tools:      []string{"read_file", "fs.*"},
		InputFile:  "/tmp/run/inputs.json",
		CallsFile:  "/tmp/run/calls.jsonl",
		Flags:      []string{"--audit-log", "/work/.awf/audit.jsonl"},
	}
}

var wantServeArgs = []string{"--audit-log", "/work/.awf/audit.jsonl", "mcp", "serve", "--workflow", "/work/wf.yaml",
	"--input-file", "/tmp/run/inputs.json", "--calls-file", "/tmp/run/calls.jsonl", "--tools", "read_file,fs.*"}

func TestServeCommandArgs(t *testing.T) {
	got, err := testServeCommand().Args()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantServeArgs, got); diff != "" {
		t.Errorf("Args() (-want +got):\n%s", diff)
	}
	if _, err := (ServeCommand{Executable: "awf"}).Args(); err == nil {
		t.Errorf("Args() without tools succeeded")
	}
	if _, err := (ServeCommand{Tools: []string{"x"}}).Args(); err == nil {
		t.Errorf("Args() without an executable succeeded")
	}
}

// readJSON decodes a file written for an agent.
func readJSON(t *testing.T, path string) any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s mode = %v, want 0600", path, fi.Mode())
	}
	return v
}

func anyArgs() []any {
	out := make([]any, len(wantServeArgs))
	for i, a := range wantServeArgs {
		out[i] = a
	}
	return out
}

func TestSetupClaude(t *testing.T) {
	dir := t.TempDir()
	got, err := SetupAgent(AgentClaude, dir, testServeCommand())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "awf-mcp.json")
	want := AgentSetup{Args: []string{"--mcp-config", file, "--strict-mcp-config", "--allowedTools", "mcp__awf"}, Files: []string{file}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SetupAgent(claude) (-want +got):\n%s", diff)
	}
	wantCfg := map[string]any{"mcpServers": map[string]any{"awf": map[string]any{"command": "/opt/awf/bin/awf", "args": anyArgs()}}}
	if diff := cmp.Diff(wantCfg, readJSON(t, file)); diff != "" {
		t.Errorf("claude MCP config (-want +got):\n%s", diff)
	}
}

func TestSetupGemini(t *testing.T) {
	dir := t.TempDir()
	c := testServeCommand()
	c.Name = "tools"
	got, err := SetupAgent(AgentGemini, dir, c)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "tools-gemini-settings.json")
	want := AgentSetup{Args: []string{"--allowed-mcp-server-names", "tools"},
		Env: []string{"GEMINI_CLI_SYSTEM_SETTINGS_PATH=" + file}, Files: []string{file}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SetupAgent(gemini) (-want +got):\n%s", diff)
	}
	wantCfg := map[string]any{"mcpServers": map[string]any{"tools": map[string]any{
		"command": "/opt/awf/bin/awf", "args": anyArgs(), "trust": true, "timeout": float64(600000)}}}
	if diff := cmp.Diff(wantCfg, readJSON(t, file)); diff != "" {
		t.Errorf("gemini settings (-want +got):\n%s", diff)
	}
}

func TestSetupCodex(t *testing.T) {
	c := testServeCommand()
	c.Executable = `C:\awf "quoted"\awf.exe`
	got, err := SetupAgent(AgentCodex, t.TempDir(), c)
	if err != nil {
		t.Fatal(err)
	}
	want := AgentSetup{Args: []string{
		"-c", `mcp_servers.awf.command="C:\\awf \"quoted\"\\awf.exe"`,
		"-c", `mcp_servers.awf.args=["--audit-log","/work/.awf/audit.jsonl","mcp","serve","--workflow","/work/wf.yaml","--input-file","/tmp/run/inputs.json","--calls-file","/tmp/run/calls.jsonl","--tools","read_file,fs.*"]`,
		"-c", "mcp_servers.awf.tool_timeout_sec=600",
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SetupAgent(codex) (-want +got):\n%s", diff)
	}
}

func TestSetupUnknownAgent(t *testing.T) {
	if _, err := SetupAgent("llm", t.TempDir(), testServeCommand()); err == nil || !strings.Contains(err.Error(), "claude, codex and gemini") {
		t.Errorf("SetupAgent(llm) = %v, want an error naming the agents awf knows", err)
	}
}

func TestAgentKind(t *testing.T) {
	tests := map[string]string{
		"claude": AgentClaude, "/usr/local/bin/claude": AgentClaude, "claude-code": AgentClaude,
		"codex": AgentCodex, "Codex.exe": AgentCodex, "gemini": AgentGemini,
		"llm": "", "claudette": "", "": "",
	}
	for program, want := range tests {
		if got := AgentKind(program); got != want {
			t.Errorf("AgentKind(%q) = %q, want %q", program, got, want)
		}
	}
}

func TestSetupAgentWritesInputsAndNamesTheRun(t *testing.T) {
	dir := t.TempDir()
	c := ServeCommand{Executable: "awf", Workflow: "/w/wf.yaml", Tools: []string{"read_file"},
		Inputs: map[string]any{"feature": "a --flag", "n": 3}, RunID: "run-7", Step: "implement"}
	got, err := SetupAgent(AgentClaude, dir, c)
	if err != nil {
		t.Fatal(err)
	}
	inputs := filepath.Join(dir, "awf-inputs.json")
	if diff := cmp.Diff(map[string]any{"feature": "a --flag", "n": float64(3)}, readJSON(t, inputs)); diff != "" {
		t.Errorf("inputs file (-want +got):\n%s", diff)
	}
	cfg := readJSON(t, filepath.Join(dir, "awf-mcp.json")).(map[string]any)
	args := cfg["mcpServers"].(map[string]any)["awf"].(map[string]any)["args"]
	want := []any{"mcp", "serve", "--workflow", "/w/wf.yaml", "--input-file", inputs, "--run-id", "run-7", "--step", "implement",
		"--tools", "read_file"}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("serve args (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{inputs, filepath.Join(dir, "awf-mcp.json")}, got.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}
