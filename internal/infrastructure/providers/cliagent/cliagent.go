// Package cliagent is the `cli` provider: it runs a command-line model or agent (claude -p,
// codex exec, gemini -p, llm, ...) once per turn, with the whole conversation as its prompt,
// because such commands keep no history awf can reach. The tools and the form in which to call
// them are described in the prompt, and the calls are read out of the command's text with
// pkg/toolparse. An agent CLI can instead be handed the step's tools through MCP (Handoff):
// it then calls them itself, its final text is the reply, and the calls its server recorded
// are the reply's HandledCalls. It implements ports.Provider.
package cliagent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	awfmcp "github.com/awf-dev/awf/internal/infrastructure/mcp"
	"github.com/awf-dev/awf/pkg/toolparse"
)

// Tool call forms the prompt can ask for.
const (
	FormatXML  = "xml"  // Claude's <function_calls><invoke name=...><parameter name=...>
	FormatJSON = "json" // <tool_call>{"name": ..., "arguments": {...}}</tool_call>
	FormatAuto = "auto" // xml for claude, json for every other command
)

// PromptPlaceholder in an argument receives the prompt; without one the prompt goes to
// standard input.
const PromptPlaceholder = "{{prompt}}"

// DefaultTimeout bounds one run of the command when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Minute

// maxArg is the longest prompt passed as an argument: Linux refuses longer single arguments
// (MAX_ARG_STRLEN is 128 KiB).
const maxArg = 128<<10 - 1

// maxOutput caps what is read of the command's standard output, and maxStderr what an error
// quotes of its standard error.
const (
	maxOutput = 16 << 20
	maxStderr = 2 << 10
)

var _ ports.Provider = (*Client)(nil)

// Config says which command to run and how.
type Config struct {
	// Name names the provider in errors; empty means "cli".
	Name string
	// Command is the program to run. When Args is empty it may hold arguments too, split
	// on blanks with shell-like quotes: "claude -p".
	Command string
	// Args are the command's arguments; one holding {{prompt}} gets the prompt in its place.
	Args []string
	// ToolFormat is the call form the prompt asks for: xml, json or auto (the default).
	ToolFormat string
	// Dir is where the command runs; empty means the current directory.
	Dir string
	// Env is the command's environment ("K=V"); nil means awf's own, which such commands
	// need for their login and configuration.
	Env []string
	// Timeout bounds one run: 0 means DefaultTimeout, negative none.
	Timeout time.Duration
	// MaxRepairs is how often a reply whose calls cannot be parsed is sent back for a
	// corrected one: 0 means 2, negative never.
	MaxRepairs int
}

// Handoff makes the command an agent that calls the step's tools itself, through an MCP
// server, instead of writing the calls in its reply for awf to read.
type Handoff struct {
	// Server is the MCP server's name in the agent's configuration; the prompt names it.
	Server string
	// Setup prepares one run of the command: it writes the agent's MCP configuration into
	// turn.Dir and makes the server record the agent's calls in turn.CallsFile, and returns
	// the arguments to add at the end of the command's and the variables ("K=V") to add to
	// its environment.
	Setup func(turn HandoffTurn) (args, env []string, err error)
}

// HandoffTurn is where one hand-off run keeps its files.
type HandoffTurn struct {
	// Dir is private to the run and removed when it ends.
	Dir string
	// CallsFile, in Dir, is where the MCP server appends a record of each call the agent
	// makes (an mcp.CallLog: `awf mcp serve --calls-file`). The client reads it with
	// mcp.ReadCallLog when the agent exits and returns the records as the reply's
	// HandledCalls.
	CallsFile string
}

// CallsFileName is the name of HandoffTurn.CallsFile in the run's directory.
const CallsFileName = "calls.jsonl"

// Client runs one command per turn. It is safe for concurrent use.
type Client struct {
	name    string
	program string
	args    []string
	format  string
	dir     string
	env     []string
	timeout time.Duration
	repairs int
	handoff *Handoff
}

// New checks cfg. A missing command, an unbalanced quote or an unknown tool format is a
// fault.Usage error. The program is looked up in PATH at each run, not here.
func New(cfg Config) (*Client, error) {
	name := cfg.Name
	if name == "" {
		name = "cli"
	}
	argv := cfg.Args
	program := strings.TrimSpace(cfg.Command)
	if len(argv) == 0 {
		words, err := splitWords(program)
		if err != nil {
			return nil, fault.New(fault.Usage, "%s: command %q: %v", name, cfg.Command, err)
		}
		if len(words) > 0 {
			program, argv = words[0], words[1:]
		}
	}
	if program == "" {
		return nil, fault.New(fault.Usage, "%s: no command: set the provider's command (for example claude -p, codex exec, gemini -p or llm)", name)
	}
	format, err := resolveFormat(name, cfg.ToolFormat, program)
	if err != nil {
		return nil, err
	}
	c := &Client{name: name, program: program, args: argv, format: format, dir: cfg.Dir, env: cfg.Env,
		timeout: cfg.Timeout, repairs: cfg.MaxRepairs}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.repairs == 0 {
		c.repairs = 2
	}
	return c, nil
}

// resolveFormat settles tool_format: auto means xml for Claude, whose models are trained on
// that form, and json for the others.
func resolveFormat(name, format, program string) (string, error) {
	switch format {
	case FormatXML, FormatJSON:
		return format, nil
	case "", FormatAuto:
		if strings.HasPrefix(filepath.Base(program), "claude") {
			return FormatXML, nil
		}
		return FormatJSON, nil
	}
	return "", fault.New(fault.Usage, "%s: tool_format %q: want xml, json or auto", name, format)
}

// Format returns the call form the prompt asks for.
func (c *Client) Format() string { return c.format }

// Program returns the program the client runs, as configured (a name looked up in PATH, or
// a path).
func (c *Client) Program() string { return c.program }

// WithHandoff returns a client that runs the same command as c but hands it the step's tools
// through MCP as h says: the prompt names the tools without asking for calls in the text, the
// reply is never parsed for calls, and its text is the answer. A turn offered no tools runs
// as with c. c is not changed.
func (c *Client) WithHandoff(h Handoff) *Client {
	cp := *c
	cp.handoff = &h
	return &cp
}

// Handoff returns the client's MCP hand-off, or nil when it reads calls out of the text.
func (c *Client) Handoff() *Handoff { return c.handoff }

// Chat runs the command with the conversation as its prompt and reads the reply: text, and
// calls in any form toolparse knows. When the reply holds a malformed call, the command is run
// again with the reply and the parse error appended, up to MaxRepairs times. Errors: Usage for
// a command that cannot be found, Execution for one that fails, times out, or whose calls stay
// malformed; a cancelled ctx returns its error.
func (c *Client) Chat(ctx context.Context, req ports.ChatRequest) (ports.ChatResponse, error) {
	if c.handoff != nil && len(req.Tools) > 0 {
		return c.chatHandoff(ctx, req)
	}
	prompt := buildPrompt(req, c.format)
	opts := parseOptions(req.Tools)
	for attempt := 0; ; attempt++ {
		out, err := c.run(ctx, prompt, nil, nil)
		if err != nil {
			return ports.ChatResponse{}, err
		}
		res, perr := toolparse.Parse(out, opts)
		if perr == nil {
			return c.response(req, res), nil
		}
		if attempt >= c.repairs {
			return ports.ChatResponse{}, fault.New(fault.Execution,
				"%s: the model's tool calls could not be read after %d attempts: %v", c.name, attempt+1, perr)
		}
		prompt = repairPrompt(prompt, out, perr, c.format)
	}
}

// chatHandoff runs the agent once with its MCP configuration, written into a private
// directory that is removed when the run ends. The agent calls the tools itself; its
// standard output is the reply, without calls, and the calls its server recorded are the
// reply's HandledCalls, returned with the error too when the agent fails after making some.
// A configuration that cannot be written, or a calls file that cannot be read, is a
// fault.System error.
func (c *Client) chatHandoff(ctx context.Context, req ports.ChatRequest) (ports.ChatResponse, error) {
	dir, err := os.MkdirTemp("", "awf-"+c.handoff.Server+"-")
	if err != nil {
		return ports.ChatResponse{}, fault.Wrap(fault.System, fmt.Errorf("%s: MCP configuration: %w", c.name, err))
	}
	defer os.RemoveAll(dir)
	turn := HandoffTurn{Dir: dir, CallsFile: filepath.Join(dir, CallsFileName)}
	args, env, err := c.handoff.Setup(turn)
	if err != nil {
		return ports.ChatResponse{}, fault.Wrap(fault.System, fmt.Errorf("%s: MCP configuration: %w", c.name, err))
	}
	out, err := c.run(ctx, buildHandoffPrompt(req, c.handoff.Server), args, env)
	calls, readErr := awfmcp.ReadCallLog(turn.CallsFile)
	if readErr != nil && err == nil { // when the agent failed too, its error says more
		err = fault.Wrap(fault.System, fmt.Errorf("%s: the agent's tool calls: %w", c.name, readErr))
	}
	if err != nil {
		return ports.ChatResponse{HandledCalls: calls}, err
	}
	resp := ports.ChatResponse{Content: strings.TrimSpace(out), FinishReason: "stop", Model: req.Model, HandledCalls: calls}
	if req.OnDelta != nil && resp.Content != "" {
		req.OnDelta(resp.Content)
	}
	return resp, nil
}

// response builds the reply, numbering calls after those already in the conversation so that
// ids stay unique across turns.
func (c *Client) response(req ports.ChatRequest, res toolparse.Result) ports.ChatResponse {
	seen := 0
	for _, m := range req.Messages {
		seen += len(m.ToolCalls)
	}
	resp := ports.ChatResponse{Content: res.Content, FinishReason: "stop", Model: req.Model}
	for i, call := range res.Calls {
		resp.ToolCalls = append(resp.ToolCalls, state.CallRef{
			ID: "call_" + strconv.Itoa(seen+i+1), Name: call.Name, Arguments: string(call.Arguments),
		})
	}
	if len(resp.ToolCalls) > 0 {
		resp.FinishReason = "tool_calls"
	}
	if req.OnDelta != nil && resp.Content != "" {
		req.OnDelta(resp.Content)
	}
	return resp
}

// run runs the command once, with more arguments at the end and more variables in its
// environment, and returns its standard output.
func (c *Client) run(ctx context.Context, prompt string, moreArgs, moreEnv []string) (string, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	args, onStdin, err := c.argv(prompt)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, c.program, append(args, moreArgs...)...)
	cmd.Dir = c.dir
	cmd.Env = c.env
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	if len(moreEnv) > 0 {
		cmd.Env = append(slices.Clip(cmd.Env), moreEnv...)
	}
	if onStdin {
		cmd.Stdin = strings.NewReader(prompt)
	}
	var stdout capped
	stdout.limit = maxOutput
	stderr := capped{limit: maxStderr}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	killGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	switch {
	case err == nil:
		return stdout.String(), nil
	case errors.Is(err, exec.ErrNotFound):
		return "", fault.New(fault.Usage, "%s: command %q not found: install it, or set the provider's command", c.name, c.program)
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && c.timeout > 0:
		return "", fault.New(fault.Execution, "%s: %s did not answer within %s", c.name, c.program, c.timeout)
	case ctx.Err() != nil:
		return "", ctx.Err()
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return "", fault.New(fault.Execution, "%s: %s exited with status %d: %s", c.name, c.program, exit.ExitCode(), tail(stderr.String()))
	}
	return "", fault.Wrap(fault.Execution, fmt.Errorf("%s: run %s: %w", c.name, c.program, err))
}

// argv puts the prompt in place of {{prompt}}; without a placeholder it goes to stdin.
func (c *Client) argv(prompt string) (args []string, onStdin bool, err error) {
	args = make([]string, len(c.args))
	onStdin = true
	for i, a := range c.args {
		if strings.Contains(a, PromptPlaceholder) {
			if len(prompt) > maxArg {
				return nil, false, fault.New(fault.Usage,
					"%s: the prompt (%d bytes) is too long for a command-line argument: remove %s from the arguments to send it on standard input",
					c.name, len(prompt), PromptPlaceholder)
			}
			a = strings.ReplaceAll(a, PromptPlaceholder, prompt)
			onStdin = false
		}
		args[i] = a
	}
	return args, onStdin, nil
}

// tail is the end of a command's standard error, where the reason usually is.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "(nothing on standard error)"
	}
	return s
}

// capped keeps the first limit bytes written to it and drops the rest, so a runaway command
// cannot exhaust memory; String marks what was dropped.
type capped struct {
	limit int
	buf   bytes.Buffer
	lost  bool
}

func (w *capped) Write(p []byte) (int, error) {
	n := len(p)
	if room := w.limit - w.buf.Len(); room < len(p) {
		w.lost = true
		if room > 0 {
			w.buf.Write(p[:room])
		}
		return n, nil
	}
	w.buf.Write(p)
	return n, nil
}

func (w *capped) String() string {
	if w.lost {
		return w.buf.String() + "\n[output truncated]"
	}
	return w.buf.String()
}

var _ io.Writer = (*capped)(nil)

// splitWords splits a command line on blanks, honouring single and double quotes and
// backslashes, without any other shell expansion.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, errors.New("unterminated quote or escape")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
