package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/awf-dev/awf/cmd/awf/internal/cmd/run"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/approver"
	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/application/compile"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/localhttp"
	awfmcp "github.com/awf-dev/awf/internal/infrastructure/mcp"
)

// ServeOptions are everything `awf mcp serve` needs.
type ServeOptions struct {
	IO      *iostreams.IOStreams
	Factory *cmdutil.Factory

	Workflow    string
	Tools       []string
	All         bool
	HTTP        string
	AllowRemote bool
	Inputs      []string
	InputFile   string
	// RunID and Step name the calls in audit records: those of the awf run whose agent CLI
	// started this server. Empty: a run id of its own ("mcp-<uuid>") and the client's name.
	RunID string
	Step  string
	// CallsFile, when set, receives one JSON line per call (a state.ToolCallRecord), so
	// that the run whose agent CLI started this server can record the calls in the step's
	// state.
	CallsFile string

	// OpenTerminal opens the terminal approval prompts use over stdio; nil means the
	// controlling terminal (/dev/tty) when this process is in its foreground.
	OpenTerminal func() (*os.File, error)
	// Listening, when set, is told the address the HTTP server listens on.
	Listening func(addr net.Addr)
}

// NewCmdServe returns `awf mcp serve`. runF replaces the run function in flag tests.
func NewCmdServe(f *cmdutil.Factory, runF func(context.Context, *ServeOptions) error) *cobra.Command {
	opts := &ServeOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve tools to MCP clients, every call governed",
		Long: `Serve tools over the Model Context Protocol: on standard input and output (stdio, the
default) or, with --http ADDR, over stateless streamable HTTP on a loopback address (a request
from a browser page of another origin, or naming a foreign Host, is refused). Choose the tools with
--tools a,b (by name, including MCP tools of the workflow's servers as server.tool or server.*),
--workflow FILE (the workflow's tools: list, unless --tools narrows it) or --all.

Every call runs through the same governed path as an agent step's: argument validation, the
workflow's sandbox policy and approval rules, quotas, and one audit record per call. Calls that
need approval ask on the terminal awf was started from (/dev/tty, since stdin and stdout carry
the protocol); without one they follow --non-interactive (default: denied). A tool that fails or
panics is an error result, and the server goes on serving.`,
		Example: `  awf mcp serve --tools read_file,grep
  awf mcp serve --workflow autonomous-coding.yaml --input project_path=.
  awf mcp serve --workflow wf.yaml --tools read_file,fs.* --http 127.0.0.1:8765
  claude --mcp-config awf-mcp.json   # with {"mcpServers":{"awf":{"command":"awf","args":["mcp","serve","--tools","read_file"]}}}`,
		Args: cmdutil.MaxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkServe(opts); err != nil {
				return err
			}
			if runF == nil {
				runF = runServe
			}
			return runF(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Workflow, "workflow", "w", "", "workflow `FILE` whose tools, policy, approval rules and MCP servers apply")
	fl.StringSliceVar(&opts.Tools, "tools", nil, "tools to serve, by `NAME` (comma-separated; server.tool and server.* for MCP tools)")
	fl.BoolVar(&opts.All, "all", false, "serve every tool the registry knows")
	fl.StringVar(&opts.HTTP, "http", "", "serve streamable HTTP on `ADDR` (PORT or HOST:PORT; 127.0.0.1 unless --allow-remote)")
	fl.BoolVar(&opts.AllowRemote, "allow-remote", false, "let --http listen on a non-loopback address")
	fl.StringArrayVarP(&opts.Inputs, "input", "i", nil, "workflow input `NAME=VALUE` (repeatable)")
	fl.StringVar(&opts.InputFile, "input-file", "", "YAML `FILE` mapping input names to values")
	fl.StringVar(&opts.RunID, "run-id", "", "record calls under the run `ID` (set when an awf run starts the server for an agent CLI)")
	fl.StringVar(&opts.Step, "step", "", "record calls under the step `NAME` (with --run-id)")
	_ = cmd.RegisterFlagCompletionFunc("workflow", cmdutil.CompleteYAMLFiles)
	_ = cmd.RegisterFlagCompletionFunc("tools", cmdutil.CommaList(cmdutil.CompleteTools(f)))
	_ = cmd.RegisterFlagCompletionFunc("input-file", cmdutil.CompleteYAMLFiles)
	fl.StringVar(&opts.CallsFile, "calls-file", "", "append each call, as the state file records it, to `FILE` (JSON Lines, 0600)")
	return cmd
}

// checkServe rejects flag combinations before anything starts.
func checkServe(o *ServeOptions) error {
	switch {
	case o.All && len(o.Tools) > 0:
		return fault.New(fault.Usage, "--all and --tools exclude each other")
	case !o.All && len(o.Tools) == 0 && o.Workflow == "":
		return fault.New(fault.Usage, "say which tools to serve: --tools a,b, --workflow FILE (its tools:) or --all")
	case (len(o.Inputs) > 0 || o.InputFile != "") && o.Workflow == "":
		return fault.New(fault.Usage, "--input and --input-file need --workflow")
	case o.AllowRemote && o.HTTP == "":
		return fault.New(fault.Usage, "--allow-remote needs --http")
	case o.Step != "" && o.RunID == "":
		return fault.New(fault.Usage, "--step needs --run-id")
	}
	if o.HTTP != "" {
		if _, err := awfmcp.ListenAddr(o.HTTP, o.AllowRemote); err != nil {
			return err
		}
	}
	return nil
}

func runServe(ctx context.Context, opts *ServeOptions) (err error) {
	f := opts.Factory
	wf, inputs, err := loadWorkflow(opts)
	if err != nil {
		return err
	}
	workDir, err := os.Getwd()
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("working directory: %w", err))
	}
	appr, closeTTY := serveApprover(opts)
	defer closeTTY()
	runID := opts.RunID
	if runID == "" {
		runID = "mcp-" + uuid.NewString()
	}
	ts, err := BuildToolset(f, ToolsetRequest{Workflow: wf, Inputs: inputs, WorkDir: workDir, RunID: runID,
		Approver: appr, MCPTools: opts.Tools})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, ts.Close()) }()
	run.PrintWarnings(opts.IO, ts.Warnings)
	names, err := servedNames(opts, wf, ts)
	if err != nil {
		return err
	}
	infos, err := ts.Registry.Describe(ctx, ports.ToolQuery{RunID: runID, Step: "mcp", Names: names, WorkDir: workDir})
	if err != nil {
		return err
	}
	calls, closeCalls, err := openCalls(opts.CallsFile)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeCalls()) }()
	srv, err := awfmcp.NewServer(awfmcp.ServerConfig{Name: "awf", Version: f.Version, Tools: infos, Invoker: ts.Invoker, Refuser: ts.Refuser,
		RunID: runID, Step: opts.Step, NewID: uuid.NewString, Scope: ts.Scope, Calls: calls, Log: f.Log()})
	if err != nil {
		return err
	}
	if opts.HTTP != "" {
		return serveHTTP(ctx, opts, srv, len(names), ts.AuditPath)
	}
	note(opts.IO, "awf mcp: serving %d tools over stdio (run %s, audit log %s)\n", len(names), runID, ts.AuditPath)
	return srv.Serve(ctx, readCloser(opts.IO.In), writeCloser(opts.IO.Out))
}

// openCalls opens --calls-file; without one there is no sink. A file that cannot be opened
// is a fault.Usage error.
func openCalls(path string) (awfmcp.CallSink, func() error, error) {
	if path == "" {
		return nil, func() error { return nil }, nil
	}
	l, err := awfmcp.OpenCallLog(path)
	if err != nil {
		return nil, nil, fault.Wrap(fault.Usage, fmt.Errorf("--calls-file %s: %w", path, err))
	}
	return l, l.Close, nil
}

// loadWorkflow compiles --workflow and resolves its inputs; no workflow gives nil.
func loadWorkflow(opts *ServeOptions) (*workflow.Workflow, map[string]any, error) {
	if opts.Workflow == "" {
		return nil, nil, nil
	}
	f := opts.Factory
	res, err := compile.File(f.Loader(), f.Templater(), opts.Workflow)
	if err != nil {
		return nil, nil, err
	}
	run.PrintWarnings(opts.IO, res.Warnings)
	given, err := run.GivenInputs(opts.Inputs, opts.InputFile)
	if err != nil {
		return nil, nil, err
	}
	values, missing, err := res.Workflow.ResolveInputs(given)
	if err != nil {
		return nil, nil, err
	}
	if len(missing) > 0 {
		return nil, nil, fault.New(fault.Usage, "missing required inputs: %s (give them with --input NAME=VALUE)", strings.Join(missing, ", "))
	}
	return res.Workflow, values, nil
}

// serveApprover is who approves calls: over stdio the controlling terminal, which the
// protocol does not use; over HTTP the command's own terminal. nil when nobody can be asked.
func serveApprover(opts *ServeOptions) (ports.Approver, func()) {
	f := opts.Factory
	never := f.Flags.NonInteractive != "" || f.Getenv("CI") != ""
	log := f.Log()
	if opts.HTTP != "" {
		if !opts.IO.CanPrompt() {
			log.Info("no terminal to ask: calls needing approval follow --non-interactive")
			return nil, func() {}
		}
		return approver.New(opts.IO, approver.Options{}), func() {}
	}
	if never {
		return nil, func() {}
	}
	open := opts.OpenTerminal
	if open == nil {
		open = openTerminal
	}
	tty, err := open()
	if err != nil {
		log.Info("no terminal to ask: calls needing approval follow --non-interactive", "reason", err)
		return nil, func() {}
	}
	return approver.New(iostreams.Terminal(tty, never), approver.Options{}), func() { tty.Close() }
}

// servedNames are the registered names of the tools to serve.
func servedNames(opts *ServeOptions, wf *workflow.Workflow, ts *Toolset) ([]string, error) {
	switch {
	case opts.All:
		var names []string
		for _, n := range ts.Registry.ListNames() {
			if !strings.Contains(n, "/") { // installed owner/name tools: not a valid MCP name
				names = append(names, n)
			}
		}
		for _, imp := range ts.MCP.Imported() {
			if !slices.Contains(names, imp.Name) {
				names = append(names, imp.Name)
			}
		}
		return names, nil
	case len(opts.Tools) > 0:
		return ts.MCP.Expand(opts.Tools)
	}
	var names []string
	for _, t := range wf.Tools {
		names = append(names, t.Name)
	}
	if len(names) == 0 {
		return nil, fault.New(fault.Usage, "%s declares no tools: list the tools to serve with --tools", filepath.Base(opts.Workflow))
	}
	return names, nil
}

// serveHTTP serves streamable HTTP until ctx ends.
func serveHTTP(ctx context.Context, opts *ServeOptions, srv *awfmcp.Server, n int, auditPath string) error {
	addr, err := awfmcp.ListenAddr(opts.HTTP, opts.AllowRemote)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fault.Wrap(fault.Usage, fmt.Errorf("--http %s: %w", opts.HTTP, err))
	}
	note(opts.IO, "awf mcp: serving %d tools at %s (audit log %s)\n", n, awfmcp.URL(ln.Addr()), auditPath)
	if opts.Listening != nil {
		opts.Listening(ln.Addr())
	}
	if err := localhttp.Serve(ctx, ln, srv.Handler()); err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("mcp serve: %w", err))
	}
	return nil
}

// note tells the person what the server does, unless --quiet.
func note(ios *iostreams.IOStreams, format string, args ...any) {
	if !ios.Quiet() {
		fmt.Fprintf(ios.ErrOut, format, args...)
	}
}

func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(r)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func writeCloser(w io.Writer) io.WriteCloser {
	if wc, ok := w.(io.WriteCloser); ok {
		return wc
	}
	return nopWriteCloser{w}
}
