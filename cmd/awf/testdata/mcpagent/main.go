// Command mcpagent plays an agent CLI (claude, codex or gemini, by the name it is run under)
// for awf's end-to-end tests of the cli provider's MCP hand-off. Like the real CLI, it finds
// the MCP server "awf" where that CLI's flags put it (claude: --mcp-config FILE; codex: -c
// mcp_servers.awf.* overrides; gemini: the settings file named by
// GEMINI_CLI_SYSTEM_SETTINGS_PATH), starts it, speaks MCP to it with the official Go SDK, and
// makes the calls listed in $FAKE_AGENT_CALLS (a JSON array of {"name", "arguments"}). It
// prints its final answer, naming each call's result, and writes what it saw (arguments,
// prompt, configuration, tools) as JSON to $FAKE_AGENT_LOG.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// server is an MCP server entry of the agent's configuration.
type server struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// call is one tool call to make.
type call struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// seen is what the agent writes to $FAKE_AGENT_LOG.
type seen struct {
	Agent      string   `json:"agent"`
	Args       []string `json:"args"`
	Prompt     string   `json:"prompt"`
	ConfigFile string   `json:"config_file"`
	Config     string   `json:"config"`
	Server     server   `json:"server"`
	Tools      []string `json:"tools"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mcpagent:", err)
		os.Exit(1)
	}
}

func run() error {
	s := seen{Agent: filepath.Base(os.Args[0]), Args: os.Args[1:]}
	srv, err := configured(&s)
	if err != nil {
		return err
	}
	s.Server = srv
	if s.Prompt, err = prompt(s.Agent, s.Args); err != nil {
		return err
	}
	answer, err := callTools(&s, srv)
	if logErr := writeLog(s); logErr != nil {
		return logErr
	}
	if err != nil {
		return err
	}
	fmt.Println(answer)
	return nil
}

// configured finds the server "awf" as the agent CLI named s.Agent would.
func configured(s *seen) (server, error) {
	switch s.Agent {
	case "claude":
		s.ConfigFile = flagValue(s.Args, "--mcp-config")
		return fromFile(s)
	case "gemini":
		s.ConfigFile = os.Getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
		return fromFile(s)
	case "codex":
		var srv server
		for i, a := range s.Args {
			if a != "-c" || i+1 == len(s.Args) {
				continue
			}
			key, value, _ := strings.Cut(s.Args[i+1], "=")
			var err error
			switch key {
			case "mcp_servers.awf.command":
				err = json.Unmarshal([]byte(value), &srv.Command) // a TOML string written as JSON
			case "mcp_servers.awf.args":
				err = json.Unmarshal([]byte(value), &srv.Args)
			}
			if err != nil {
				return server{}, fmt.Errorf("-c %s: %w", s.Args[i+1], err)
			}
		}
		if srv.Command == "" {
			return server{}, errors.New("no -c mcp_servers.awf.command=...")
		}
		return srv, nil
	}
	return server{}, fmt.Errorf("run me as claude, codex or gemini, not %q", s.Agent)
}

// fromFile reads {"mcpServers": {"awf": ...}} from s.ConfigFile.
func fromFile(s *seen) (server, error) {
	if s.ConfigFile == "" {
		return server{}, errors.New("no MCP configuration file")
	}
	data, err := os.ReadFile(s.ConfigFile)
	if err != nil {
		return server{}, err
	}
	s.Config = string(data)
	var cfg struct {
		MCPServers map[string]server `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return server{}, fmt.Errorf("%s: %w", s.ConfigFile, err)
	}
	srv, ok := cfg.MCPServers["awf"]
	if !ok {
		return server{}, fmt.Errorf("%s: no server awf", s.ConfigFile)
	}
	return srv, nil
}

// prompt is gemini's -p value, else standard input.
func prompt(agent string, args []string) (string, error) {
	if agent == "gemini" {
		if p := flagValue(args, "-p"); p != "" {
			return p, nil
		}
	}
	data, err := io.ReadAll(os.Stdin)
	return string(data), err
}

func flagValue(args []string, name string) string {
	if i := slices.Index(args, name); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// callTools starts the server, lists its tools and makes the calls of $FAKE_AGENT_CALLS.
func callTools(s *seen, srv server) (string, error) {
	var calls []call
	if env := os.Getenv("FAKE_AGENT_CALLS"); env != "" {
		if err := json.Unmarshal([]byte(env), &calls); err != nil {
			return "", fmt.Errorf("FAKE_AGENT_CALLS: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "fake-" + s.Agent, Version: "1"}, nil)
	sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(srv.Command, srv.Args...)}, nil)
	if err != nil {
		return "", fmt.Errorf("start %s %q: %w", srv.Command, srv.Args, err)
	}
	defer sess.Close()
	listed, err := sess.ListTools(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("list tools: %w", err)
	}
	for _, t := range listed.Tools {
		s.Tools = append(s.Tools, t.Name)
	}
	var results []string
	for _, c := range calls {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: c.Name, Arguments: c.Arguments})
		if err != nil {
			return "", fmt.Errorf("call %s: %w", c.Name, err)
		}
		var text []string
		for _, content := range res.Content {
			if t, ok := content.(*mcp.TextContent); ok {
				text = append(text, strings.TrimSpace(t.Text))
			}
		}
		kind := "result"
		if res.IsError {
			kind = "error"
		}
		results = append(results, fmt.Sprintf("%s %s: %s", c.Name, kind, strings.Join(text, " ")))
	}
	return fmt.Sprintf("fake %s finished. %s", s.Agent, strings.Join(results, "; ")), nil
}

func writeLog(s seen) error {
	path := os.Getenv("FAKE_AGENT_LOG")
	if path == "" {
		return nil
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}
