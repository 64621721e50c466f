package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Agent CLIs that can be given awf's governed tools through MCP.
const (
	AgentClaude = "claude" // Claude Code: --mcp-config FILE
	AgentCodex  = "codex"  // Codex CLI: -c mcp_servers.<name>.command=... overrides
	AgentGemini = "gemini" // Gemini CLI: a settings.json named by GEMINI_CLI_SYSTEM_SETTINGS_PATH
)

// AgentToolTimeout is the tool-call timeout written into agent configurations: longer than
// awf's default approval timeout (5 minutes), so that the agent does not give up on a call
// while a person decides.
const AgentToolTimeout = 10 * 60 // seconds

// ServeCommand is how an agent CLI starts `awf mcp serve` for one step: awf's executable,
// the workflow whose policy, approval rules and custom tools apply, and the step's tools.
type ServeCommand struct {
	// Name is the server's name in the agent's configuration; "" means "awf". Claude Code
	// shows its tools as mcp__<name>__<tool>.
	Name string
	// Executable is the awf binary (os.Executable()); required.
	Executable string
	// Workflow is the workflow file; made absolute.
	Workflow string
	// Tools are the step's tools, as the workflow names them (MCP references included).
	Tools []string
	// InputFile is a YAML or JSON file of the run's inputs (--input-file), which the
	// workflow's templates may need; "" passes none. SetupAgent writes Inputs into one.
	InputFile string
	// Inputs are the run's inputs; SetupAgent writes them to dir/<name>-inputs.json and
	// passes that file when InputFile is empty.
	Inputs map[string]any
	// RunID and Step make the server record its calls under the run and step that started
	// the agent (--run-id, --step).
	RunID, Step string
	// CallsFile, when set, is where the server appends a record of each call
	// (--calls-file), which the run reads back into the step's state; made absolute.
	CallsFile string
	// Flags are global flags passed on: --audit-log FILE, --non-interactive, --approve MODE,
	// --yes, --state-dir DIR.
	Flags []string
}

// ServerName is the server's name in the agent's configuration: Name, or "awf".
func (c ServeCommand) ServerName() string {
	if c.Name == "" {
		return "awf"
	}
	return c.Name
}

// Args returns the arguments of `awf mcp serve` after the executable.
func (c ServeCommand) Args() ([]string, error) {
	if c.Executable == "" {
		return nil, fmt.Errorf("mcp serve command: no awf executable")
	}
	if len(c.Tools) == 0 {
		return nil, fmt.Errorf("mcp serve command: the step has no tools to serve")
	}
	args := append([]string{}, c.Flags...)
	args = append(args, "mcp", "serve")
	if c.Workflow != "" {
		wf, err := filepath.Abs(c.Workflow)
		if err != nil {
			return nil, fmt.Errorf("mcp serve command: %w", err)
		}
		args = append(args, "--workflow", wf)
	}
	if c.InputFile != "" {
		in, err := filepath.Abs(c.InputFile)
		if err != nil {
			return nil, fmt.Errorf("mcp serve command: %w", err)
		}
		args = append(args, "--input-file", in)
	}
	if c.RunID != "" {
		args = append(args, "--run-id", c.RunID)
		if c.Step != "" {
			args = append(args, "--step", c.Step)
		}
	}
	if c.CallsFile != "" {
		calls, err := filepath.Abs(c.CallsFile)
		if err != nil {
			return nil, fmt.Errorf("mcp serve command: %w", err)
		}
		args = append(args, "--calls-file", calls)
	}
	return append(args, "--tools", strings.Join(c.Tools, ",")), nil
}

// AgentSetup is what an agent CLI needs to reach awf's server: arguments to add at the end
// of its command line, variables to add to its environment, and the files written for it
// (remove them when the step ends). The arguments go last because some of them take a list
// of values (--allowedTools, --allowed-mcp-server-names), which would swallow a prompt
// argument that followed them.
type AgentSetup struct {
	Args  []string
	Env   []string
	Files []string
}

// AgentKind tells which agent CLI a program is from its name: AgentClaude, AgentCodex,
// AgentGemini, or "" for any other.
func AgentKind(program string) string {
	base := strings.ToLower(filepath.Base(program))
	for _, k := range []string{AgentClaude, AgentCodex, AgentGemini} {
		if base == k || strings.HasPrefix(base, k+"-") || strings.HasPrefix(base, k+".") {
			return k
		}
	}
	return ""
}

// KnownAgent reports whether name is exactly AgentClaude, AgentCodex or AgentGemini: an
// agent SetupAgent can configure.
func KnownAgent(name string) bool { return name != "" && AgentKind(name) == name }

// SetupAgent prepares agent (AgentClaude, AgentCodex or AgentGemini) to use the tools `awf
// mcp serve` gives it, writing any configuration file (and the inputs file, see
// ServeCommand.Inputs) into dir, which must exist and should be private to the run:
//
//   - Claude Code: dir/<name>-mcp.json holding {"mcpServers": {<name>: {command, args}}},
//     passed as --mcp-config FILE --strict-mcp-config --allowedTools mcp__<name> (awf, not
//     Claude Code, approves the calls).
//   - Codex: -c mcp_servers.<name>.command="..." -c mcp_servers.<name>.args=[...] -c
//     mcp_servers.<name>.tool_timeout_sec=600; no file.
//   - Gemini CLI: dir/<name>-gemini-settings.json holding {"mcpServers": {<name>: {command,
//     args, trust: true, timeout}}}, named by GEMINI_CLI_SYSTEM_SETTINGS_PATH in the
//     environment, with --allowed-mcp-server-names <name>.
//
// An unknown agent is an error.
func SetupAgent(agent, dir string, c ServeCommand) (AgentSetup, error) {
	if !KnownAgent(agent) {
		return AgentSetup{}, fmt.Errorf("agent %q: awf can configure MCP for %s, %s and %s", agent, AgentClaude, AgentCodex, AgentGemini)
	}
	name := c.ServerName()
	var files []string
	if c.InputFile == "" && c.Inputs != nil {
		c.InputFile = filepath.Join(dir, name+"-inputs.json")
		if err := writeJSON(c.InputFile, c.Inputs); err != nil {
			return AgentSetup{}, err
		}
		files = append(files, c.InputFile)
	}
	setup, err := setupAgent(agent, dir, name, c)
	setup.Files = append(files, setup.Files...)
	return setup, err
}

func setupAgent(agent, dir, name string, c ServeCommand) (AgentSetup, error) {
	args, err := c.Args()
	if err != nil {
		return AgentSetup{}, err
	}
	switch agent {
	case AgentClaude:
		file := filepath.Join(dir, name+"-mcp.json")
		cfg := map[string]any{"mcpServers": map[string]any{name: map[string]any{"command": c.Executable, "args": args}}}
		if err := writeJSON(file, cfg); err != nil {
			return AgentSetup{}, err
		}
		return AgentSetup{Args: []string{"--mcp-config", file, "--strict-mcp-config", "--allowedTools", "mcp__" + name},
			Files: []string{file}}, nil
	case AgentCodex:
		prefix := "mcp_servers." + name
		return AgentSetup{Args: []string{
			"-c", prefix + ".command=" + tomlValue(c.Executable),
			"-c", prefix + ".args=" + tomlValue(args),
			"-c", fmt.Sprintf("%s.tool_timeout_sec=%d", prefix, AgentToolTimeout),
		}}, nil
	case AgentGemini:
		file := filepath.Join(dir, name+"-gemini-settings.json")
		cfg := map[string]any{"mcpServers": map[string]any{name: map[string]any{
			"command": c.Executable, "args": args, "trust": true, "timeout": AgentToolTimeout * 1000}}}
		if err := writeJSON(file, cfg); err != nil {
			return AgentSetup{}, err
		}
		return AgentSetup{Args: []string{"--allowed-mcp-server-names", name},
			Env: []string{"GEMINI_CLI_SYSTEM_SETTINGS_PATH=" + file}, Files: []string{file}}, nil
	}
	return AgentSetup{}, fmt.Errorf("agent %q: awf can configure MCP for %s, %s and %s", agent, AgentClaude, AgentCodex, AgentGemini)
}

// tomlValue writes a string or a list of strings as a TOML value. A JSON string without HTML
// escaping is a valid TOML basic string, and a JSON array of them a TOML array.
func tomlValue(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // strings and string slices always encode
	return strings.TrimSuffix(b.String(), "\n")
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
