package cmdutil

import (
	"context"
	"log/slog"

	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/config"
)

// Factory builds what commands need, lazily: `awf --version` reads no config and
// `awf validate` starts no runner. The cli package fills it; tests replace fields.
type Factory struct {
	IO      *iostreams.IOStreams
	Version string
	Getenv  func(string) string
	Environ []string
	// Flags are the global flags, filled before any command runs.
	Flags *GlobalFlags

	Config    func() (config.Config, error)
	Log       func() *slog.Logger
	Loader    func() ports.WorkflowLoader
	Templater func() ports.Templater
	Store     func() (ports.StateStore, error)
	// Tools builds the governed tool set of a run of wf in workDir (one per run: its cache and
	// quotas live as long as it does).
	Tools func(wf *workflow.Workflow, workDir string) (*Tools, error)
	// Runner builds a runner that reports to events, with the run's tools and model
	// settings. done must be called when the run ends: it writes a --record cassette and
	// reports cassette turns that were never played.
	Runner func(events ports.Events, opts RunnerOptions) (r *runner.Runner, done func() error, err error)
	// Agents builds the agent loop of a run with tools t and the run's model settings, for
	// an engine that runs the steps around agent steps itself (a worker of the temporal
	// engine); done closes the providers.
	Agents func(t *Tools, opts RunnerOptions) (agents runner.AgentExecutor, done func() error, err error)
	// Providers resolves the model providers of a run's agent steps with the run's model
	// settings, for an engine that runs the agent loop itself and only the model turns on a
	// worker (the temporal engine); done closes them.
	Providers func(opts RunnerOptions) (providers ports.ProviderSource, done func() error, err error)
	// Describe gives `awf run --dry-run` what it shows of agent steps, running nothing: the
	// tools a run of wf in workDir could reach, described without the approval flow or the
	// audit log, and the providers with the run's model settings (opts: --provider, --model,
	// --replay), resolved without calling a model; a --record cassette is never written. Nil
	// means agent steps are shown as written.
	Describe func(wf *workflow.Workflow, workDir string, opts RunnerOptions) (ports.ToolCatalog, ports.ProviderSource, error)
	// Pins gives `awf tools lock` the pins of the tools a run of wf in workDir would use
	// (tool.Pin: digests of description, schema, definition file), without checking them
	// against a lock file; the warnings are the registry's.
	Pins func(wf *workflow.Workflow, workDir string) (map[string]tool.Pin, workflow.Problems, error)
	// Catalog describes the tools a run of wf in workDir could reach, without the approval
	// flow, the audit log or any model, with the validator of their arguments, for `awf
	// validate` to check the tools steps name. Nil means tools are not checked.
	Catalog func(wf *workflow.Workflow, workDir string) (ports.ToolCatalog, ports.SchemaValidator, error)
	// ToolRegistry is the registry of the tools a run of wf in workDir could reach, with no
	// approval, audit or MCP server: for listing names (shell completion), not for calls.
	ToolRegistry func(wf *workflow.Workflow, workDir string) (*registry.Registry, error)
	// Pause, when set by a command with live progress, stops the progress drawing while a
	// prompt is on screen; the returned function resumes it.
	Pause func() (resume func())
	// Cleanup runs when the command ends (closing the audit log, stopping servers).
	Cleanup []func()
	// Args is the command line after the program's name, for handing a command to another
	// program (see Handoff).
	Args []string
	// Approver, when set, makes the approver of each run's governed tools instead of the
	// terminal's: a worker of the temporal engine turns a prompt into a durable wait.
	Approver func() ports.Approver
	// HelperPath, when set, is the program sandboxed tool processes re-run as their helper
	// instead of this one: a worker of the temporal engine (awf-temporal, larger and slower to
	// start) names awf.
	HelperPath string
	// Engines runs `awf run --engine NAME` for engines other than local; an engine not in it is
	// handed to the program that has it (Handoff). Nil in plain awf.
	Engines map[string]Engine
}

// Engine runs a compiled workflow somewhere else than this process, reporting it as a local
// run does (progress, output, exit code).
type Engine func(ctx context.Context, req EngineRun) error

// EngineRun is one run handed to an Engine: the workflow as `awf run` compiled it, its
// inputs resolved, where it runs and how to report it.
type EngineRun struct {
	Workflow *workflow.Workflow
	// Files are the workflow's files (the workflow first, then what it loads), Inputs its
	// resolved inputs, WorkDir the run's working directory.
	Files   []string
	Inputs  map[string]any
	WorkDir string
	Output  Format
	Runner  RunnerOptions
	// Server is where the engine's server is; SharedWorkspace says every worker sees
	// WorkDir; Detach returns once the run is submitted (awf run flags of the temporal engine).
	Server          Server
	SharedWorkspace bool
	Detach          bool
}

// GlobalFlags are the flags every command accepts. Changed records which were given, so that
// only those form the highest configuration layer.
type GlobalFlags struct {
	StateDir       string
	AwfDir         string // --awf-dir: the project's awf directory (config.FindProject)
	LogLevel       string
	LogFormat      string
	LogFile        string
	Quiet          bool
	NonInteractive string // "", "deny" or "fail"
	AuditLog       string
	Approve        string // "", "auto", "prompt" or "deny": overrides every tool's approval mode
	Yes            bool   // approve prompt-mode calls; never lifts a deny
	Changed        func(name string) bool
}

// RunnerOptions are the per-run settings of a runner.
type RunnerOptions struct {
	Tools   *Tools // nil: tool and agent steps fail
	WorkDir string
	// Provider and Model (--provider, --model) replace every agent step's own.
	Provider string
	Model    string
	// Replay plays a cassette instead of any model; Record records one (--replay, --record).
	Replay string
	Record string
}
