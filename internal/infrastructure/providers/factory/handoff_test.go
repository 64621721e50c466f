package factory_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/config"
	awfmcp "github.com/awf-dev/awf/internal/infrastructure/mcp"
	"github.com/awf-dev/awf/internal/infrastructure/providers/cliagent"
	"github.com/awf-dev/awf/internal/infrastructure/providers/factory"
)

// agentServe is what the CLI passes as Options.AgentMCP.
var agentServe = &awfmcp.ServeCommand{Executable: "/opt/awf", Flags: []string{"--audit-log", "/w/.awf/audit.jsonl", "--yes"}}

// handoffRef is an agent step of a run with two tools and one input.
func handoffRef(provider string) ports.ProviderRef {
	return ports.ProviderRef{Workflow: &workflow.Workflow{Name: "wf", Path: "/w/wf.yaml", Dir: "/w"}, Step: "fix",
		Name: provider, RunID: "run-1", Inputs: map[string]any{"feature": "x"}, Tools: []string{"read_file", "fs__echo"}}
}

// wantServe is `awf mcp serve` for handoffRef, inputs written into dir and the calls
// recorded in the turn's calls file there.
func wantServe(dir string) []string {
	return []string{"--audit-log", "/w/.awf/audit.jsonl", "--yes", "mcp", "serve", "--workflow", "/w/wf.yaml",
		"--input-file", filepath.Join(dir, "awf-inputs.json"), "--run-id", "run-1", "--step", "fix",
		"--calls-file", filepath.Join(dir, cliagent.CallsFileName), "--tools", "read_file,fs__echo"}
}

// turn is a hand-off turn's files in dir, as the cli provider lays them out.
func turn(dir string) cliagent.HandoffTurn {
	return cliagent.HandoffTurn{Dir: dir, CallsFile: filepath.Join(dir, cliagent.CallsFileName)}
}

// TestCLIHandoff resolves cli providers for a step with tools: agent CLIs known by their
// program or by options.agent get the tools through `awf mcp serve`, with their own flags;
// other commands, options.mcp: false, a step without tools and a factory without AgentMCP keep
// the text protocol.
func TestCLIHandoff(t *testing.T) {
	providers := map[string]config.ProviderConfig{
		"claude-code": {Type: "cli", Command: "claude -p"},
		"codex":       {Type: "cli", Command: "codex exec"},
		"gemini":      {Type: "cli", Command: "/usr/bin/gemini", Args: []string{"-p", "{{prompt}}"}},
		"wrapped":     {Type: "cli", Command: "./run-agent.sh", Options: map[string]any{"agent": "codex"}},
		"llm":         {Type: "cli", Command: "llm"},
		"no-mcp":      {Type: "cli", Command: "claude -p", Options: map[string]any{"mcp": false}},
	}
	tests := []struct {
		name     string
		provider string
		noTools  bool
		noServe  bool
		// check looks at the agent's setup, written into dir; nil: no hand-off.
		check func(t *testing.T, dir string, args, env []string)
	}{
		{name: "claude", provider: "claude-code", check: func(t *testing.T, dir string, args, env []string) {
			file := filepath.Join(dir, "awf-mcp.json")
			if diff := cmp.Diff([]string{"--mcp-config", file, "--strict-mcp-config", "--allowedTools", "mcp__awf"}, args); diff != "" {
				t.Errorf("claude arguments (-want +got):\n%s", diff)
			}
			var cfg struct {
				MCPServers map[string]struct {
					Command string
					Args    []string
				} `json:"mcpServers"`
			}
			readJSONFile(t, file, &cfg)
			if got := cfg.MCPServers["awf"]; got.Command != "/opt/awf" || !slices.Equal(got.Args, wantServe(dir)) {
				t.Errorf("claude MCP config = %+v, want awf with %q", got, wantServe(dir))
			}
			var inputs map[string]any
			readJSONFile(t, filepath.Join(dir, "awf-inputs.json"), &inputs)
			if diff := cmp.Diff(map[string]any{"feature": "x"}, inputs); diff != "" {
				t.Errorf("inputs file (-want +got):\n%s", diff)
			}
		}},
		{name: "codex", provider: "codex", check: func(t *testing.T, dir string, args, env []string) {
			want := []string{"-c", `mcp_servers.awf.command="/opt/awf"`,
				"-c", `mcp_servers.awf.args=["` + strings.Join(wantServe(dir), `","`) + `"]`,
				"-c", "mcp_servers.awf.tool_timeout_sec=600"}
			if diff := cmp.Diff(want, args); diff != "" || len(env) != 0 {
				t.Errorf("codex arguments (-want +got):\n%s\nenv %q", diff, env)
			}
		}},
		{name: "options.agent names the CLI", provider: "wrapped", check: func(t *testing.T, dir string, args, env []string) {
			if len(args) != 6 || args[1] != `mcp_servers.awf.command="/opt/awf"` {
				t.Errorf("wrapped codex arguments = %q", args)
			}
		}},
		{name: "gemini", provider: "gemini", check: func(t *testing.T, dir string, args, env []string) {
			file := filepath.Join(dir, "awf-gemini-settings.json")
			if diff := cmp.Diff([]string{"--allowed-mcp-server-names", "awf"}, args); diff != "" {
				t.Errorf("gemini arguments (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"GEMINI_CLI_SYSTEM_SETTINGS_PATH=" + file}, env); diff != "" {
				t.Errorf("gemini environment (-want +got):\n%s", diff)
			}
			var cfg struct {
				MCPServers map[string]struct {
					Command string
					Args    []string
					Trust   bool
					Timeout int
				} `json:"mcpServers"`
			}
			readJSONFile(t, file, &cfg)
			if got := cfg.MCPServers["awf"]; got.Command != "/opt/awf" || !slices.Equal(got.Args, wantServe(dir)) || !got.Trust || got.Timeout != 600000 {
				t.Errorf("gemini settings = %+v", got)
			}
		}},
		{name: "unknown program", provider: "llm"},
		{name: "mcp: false", provider: "no-mcp"},
		{name: "step without tools", provider: "claude-code", noTools: true},
		{name: "no awf executable", provider: "claude-code", noServe: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := factory.Options{Providers: providers, AgentMCP: agentServe}
			if tc.noServe {
				o.AgentMCP = nil
			}
			f := newFactory(t, o)
			ref := handoffRef(tc.provider)
			if tc.noTools {
				ref.Tools = nil
			}
			rp, err := f.Provider(t.Context(), ref)
			if err != nil {
				t.Fatal(err)
			}
			h := rp.Provider.(*cliagent.Client).Handoff()
			if tc.check == nil {
				if h != nil || rp.Handoff != "" {
					t.Errorf("provider %s hands the tools over through MCP (%q), want the text protocol", tc.provider, rp.Handoff)
				}
				return
			}
			if h == nil || h.Server != "awf" {
				t.Fatalf("hand-off = %+v, want one to the server awf", h)
			}
			if want := map[string]string{"claude-code": "claude", "codex": "codex", "wrapped": "codex", "gemini": "gemini"}[tc.provider]; rp.Handoff != want {
				t.Errorf("ResolvedProvider.Handoff = %q, want %q", rp.Handoff, want)
			}
			dir := t.TempDir()
			args, env, err := h.Setup(turn(dir))
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, dir, args, env)
		})
	}
}

// TestCLIHandoffPerStep gives each step its own hand-off on one shared client: the tools,
// run and step of one never leak into another's.
func TestCLIHandoffPerStep(t *testing.T) {
	f := newFactory(t, factory.Options{AgentMCP: agentServe})
	a, b := handoffRef("cli"), handoffRef("cli")
	b.Step, b.Tools = "review", []string{"grep"}
	var got [][]string
	for _, ref := range []ports.ProviderRef{a, b} {
		rp, err := f.Provider(t.Context(), ref)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if _, _, err := rp.Provider.(*cliagent.Client).Handoff().Setup(turn(dir)); err != nil {
			t.Fatal(err)
		}
		var cfg struct {
			MCPServers map[string]struct{ Args []string } `json:"mcpServers"`
		}
		readJSONFile(t, filepath.Join(dir, "awf-mcp.json"), &cfg)
		args := cfg.MCPServers["awf"].Args
		got = append(got, slices.Clone(args[len(args)-6:]))
	}
	want := [][]string{{"--step", "fix", "--tools", "read_file,fs__echo"}, {"--step", "review", "--tools", "grep"}}
	for i := range got {
		got[i] = slices.Delete(got[i], 2, 4) // --calls-file, checked by TestCLIHandoff
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("per-step serve arguments (-want +got):\n%s", diff)
	}
}

func TestCLIHandoffErrors(t *testing.T) {
	tests := []struct {
		name    string
		options map[string]any
		command string
		noServe bool
		want    string
	}{
		{"mcp: true for an unknown program", map[string]any{"mcp": true}, "llm", false, `"llm" is not an agent CLI awf knows: set options.agent`},
		{"mcp: true without awf", map[string]any{"mcp": true}, "claude -p", true, "cannot start awf mcp serve"},
		{"unknown agent", map[string]any{"agent": "cursor"}, "cursor-agent", false, `options.agent: want claude, codex or gemini, got "cursor"`},
		{"mcp not a boolean", map[string]any{"mcp": "yes"}, "claude -p", false, "options.mcp: want true or false"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := factory.Options{AgentMCP: agentServe, Providers: map[string]config.ProviderConfig{
				"p": {Type: "cli", Command: tc.command, Options: tc.options}}}
			if tc.noServe {
				o.AgentMCP = nil
			}
			_, err := newFactory(t, o).Provider(t.Context(), handoffRef("p"))
			if fault.KindOf(err) != fault.Usage || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v (kind %v), want a usage error containing %q", err, fault.KindOf(err), tc.want)
			}
		})
	}
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
