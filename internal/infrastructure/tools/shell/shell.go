// Package shell is the `shell` built-in tool (seed 004 calls it run_command): it runs a
// command line the model writes, through ports.ProcessRunner, and returns its output. It also
// wraps seed 004's .tool definitions (tool.Wrappable), whose fixed commands run as argument
// vectors (package command). Policy checks of the command line belong to the governed
// pipeline and the sandbox, not to this package.
package shell

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/tools/command"
)

// Name is the tool's name; Alias is the seed's name for it.
const (
	Name  = "shell"
	Alias = "run_command"
)

// Tool is the shell built-in: {command, dir?}. Safe for concurrent use.
type Tool struct {
	name string
	cfg  command.Config
}

var (
	_ tool.Tool       = (*Tool)(nil)
	_ tool.Summarizer = (*Tool)(nil)
	_ tool.Annotated  = (*Tool)(nil)
	_ tool.Wrappable  = (*Tool)(nil)
	_ tool.Narrowable = (*Tool)(nil)
)

// New returns the shell tool. cfg.Process is required; cfg.Dir is the working directory
// relative dirs start from; cfg.Templater is not used.
func New(cfg command.Config) (*Tool, error) {
	return NewNamed(Name, cfg)
}

// NewNamed returns the shell tool under name (Name or Alias): a workflow's restricted
// `shell` or `run_command` entry, whose cfg.Restrictions narrow its policy.
func NewNamed(name string, cfg command.Config) (*Tool, error) {
	if cfg.Process == nil {
		return nil, fmt.Errorf("shell tool: the process runner is required")
	}
	return &Tool{name: name, cfg: cfg}, nil
}

// Aliases are the other names of the shell tool: run_command, for seed 004's .tool files.
func Aliases() []tool.Alias {
	return []tool.Alias{{Name: Alias, Target: Name, Source: "builtin",
		Description: "Alias of shell (the name seed 004's .tool files wrap)."}}
}

// Name returns "shell" (or the name NewNamed gave).
func (t *Tool) Name() string { return t.name }

// Description tells the model what the tool does and where it runs.
func (t *Tool) Description(ctx tool.Context) string {
	dir := t.cfg.Dir
	if dir == "" {
		dir = ctx.WorkDir
	}
	where := ""
	if dir != "" {
		where = " The working directory is " + dir + "; dir (relative to it, or absolute) changes it for one call."
	}
	return "Run a shell command line (bash syntax: pipes, redirections, && and || work) and return its standard output. " +
		"A command that exits non-zero is reported as an error with its output, exit status and the end of standard error." +
		where + " Commands run non-interactively with a minimal environment; each call starts fresh (cd does not persist)."
}

// Parameters returns the strict schema of {command, dir}.
func (t *Tool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"command":{"type":"string","minLength":1,"description":"The command line to run, e.g. \"go test ./...\" or \"ls -la src | head\"."},` +
		`"dir":{"type":"string","description":"Directory to run in, relative to the working directory or absolute. Default: the working directory."}` +
		`},"required":["command"],"additionalProperties":false}`)
}

// Annotations: the shell may change anything.
func (t *Tool) Annotations() tool.Annotations {
	return tool.Annotations{Tags: []string{"shell", "process"}, Source: "builtin"}
}

// Meta summarises a call: "run: " and the command's first 60 characters.
func (t *Tool) Meta(args map[string]any) string {
	cmd, _ := args["command"].(string)
	cmd = strings.Join(strings.Fields(cmd), " ")
	if utf8.RuneCountInString(cmd) > 60 {
		cmd = string([]rune(cmd)[:60]) + "..."
	}
	return "run: " + cmd
}

// Execute runs the command line; the call's input is its standard input.
func (t *Tool) Execute(ctx context.Context, call tool.Invocation) tool.Result {
	cmd, ok := call.Args["command"].(string)
	if !ok || strings.TrimSpace(cmd) == "" {
		return tool.Errorf(t.name + `: the "command" argument is required: the command line to run`)
	}
	if strings.IndexByte(cmd, 0) >= 0 {
		return tool.Errorf(t.name + ": the command contains a NUL byte")
	}
	dir := t.cfg.Dir
	if d, _ := call.Args["dir"].(string); d != "" {
		if filepath.IsAbs(d) || dir == "" {
			dir = d
		} else {
			dir = filepath.Join(dir, d)
		}
	}
	return t.cfg.Run(ctx, t.name, ports.ProcessRequest{Script: cmd, Dir: dir, BaseEnv: t.cfg.BaseEnv, Env: t.cfg.Env,
		Stdin: call.Input, Timeout: t.cfg.Timeout, OutputLimit: t.cfg.OutputLimit}, nil)
}

// Wrap builds a seed 004 wrapped tool: its @command runs as an argument vector with the
// shell tool's working directory, environment and limits.
func (t *Tool) Wrap(spec tool.WrapSpec) (tool.Tool, error) {
	return command.NewWrapped(spec, t.cfg)
}

// Narrow returns the shell under its policy narrowed by r too.
func (t *Tool) Narrow(r *workflow.Restrictions) (tool.Tool, error) {
	cfg := t.cfg
	cfg.Restrictions = cfg.Restrictions.And(r)
	return NewNamed(t.name, cfg)
}
