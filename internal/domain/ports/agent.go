package ports

import (
	"context"
	"errors"

	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// The ports of the agent loop (DESIGN section 4) beyond Provider and ToolInvoker: what it
// needs to know about the tools it offers a model, and where a step's provider comes from.

// ToolCatalog describes tools to the agent loop, which sends their schemas to the model and
// decides from their annotations which calls may run in parallel (read-only) and which may be
// run again after a crash left them in flight (idempotent). The tool registry implements it
// beside ports.ToolInvoker. Implementations must be safe for concurrent use.
type ToolCatalog interface {
	// Describe returns one ToolInfo per name of q.Names, in that order. A name no tool has is
	// an error of kind fault.Invalid naming it (with the nearest name when there is one).
	Describe(ctx context.Context, q ToolQuery) ([]ToolInfo, error)
}

// ToolQuery asks for the tools of one agent step, resolved as ToolInvoker resolves the calls
// of the same run and step.
type ToolQuery struct {
	RunID string
	Step  string
	Names []string
	// WorkDir is the run's working directory, which a tool's description may mention.
	WorkDir string
}

// ToolInfo is what the agent loop knows of a tool.
type ToolInfo struct {
	// Schema is what the model is told: name, description and the parameters' JSON Schema.
	Schema      ToolSchema
	Annotations tool.Annotations
	// Meta summarises a call for people ("read src/main.go"); nil when the tool has no
	// summary.
	Meta func(args map[string]any) string
	// Checker settles a call of this tool that a crash cut off (see tool.Checker); nil when
	// the tool declares no check.
	Checker tool.Checker
}

// Settlement is a person's decision about a call a crash cut off.
type Settlement string

// Settlements.
const (
	SettleRerun Settlement = "rerun" // run it again
	SettleSkip  Settlement = "skip"  // do not run it; tell the model it was skipped
	SettleDone  Settlement = "done"  // it took effect: do not run it; tell the model it succeeded
)

// Settler asks the person at the terminal what to do with a call a crash cut off, when its
// tool has no check that could tell. It returns ErrNoApprover without blocking when nobody can
// be asked. Implementations serialise their prompts and must be safe for concurrent use.
type Settler interface {
	Settle(ctx context.Context, req SettleRequest) (Settlement, error)
}

// SettleRequest is what the person is shown.
type SettleRequest struct {
	RunID  string
	Step   string
	CallID string
	Tool   string
	Meta   string
	Args   map[string]any
}

// ErrAbortStep marks a tool invocation error that must end the agent step instead of going
// back to the model as an error result: for example an approval that, without a terminal,
// is configured to fail the run (--non-interactive=fail). Wrap it in the error Invoke
// returns, keeping the error's kind: fault.New(fault.Denied, "...: %w", ports.ErrAbortStep).
// Errors of kind fault.System also end the step; every other error is reported to the model.
var ErrAbortStep = errors.New("the step cannot go on")

// ProviderSource gives agent steps their model provider: it resolves the step's provider name
// through the workflow's providers:, the configuration files and the built-in defaults,
// applies command-line overrides (--provider, --model) and substitutes the replay provider
// (--replay) or wraps the provider in a recorder (--record). Safe for concurrent use.
type ProviderSource interface {
	// Provider resolves ref. An unknown provider name, a missing API key or a missing
	// command is an error of kind fault.Usage or fault.Invalid that says what to set.
	Provider(ctx context.Context, ref ProviderRef) (ResolvedProvider, error)
}

// ProviderRef is what an agent step says about its provider.
type ProviderRef struct {
	// Workflow is the step's workflow: its providers: and its name, which with Step
	// identifies the step in cassettes.
	Workflow *workflow.Workflow
	Step     string
	// Name is the step's provider: field; empty means the configured default.
	Name string
	// Model is the step's options.model; empty means the provider's configured model.
	Model string
	// ToolFormat is tool_options.tool_format (xml | json | auto), for providers that read
	// tool calls out of text; the others ignore it.
	ToolFormat string
	// RunID is the step's run, Inputs the run's resolved inputs and Tools the step's tools
	// by registered name: what a provider that hands the tools to an agent CLI through
	// `awf mcp serve` passes on, so that the CLI's calls run governed and are recorded under
	// the run and step. Other providers ignore them.
	RunID  string
	Inputs map[string]any
	Tools  []string
}

// ResolvedProvider is a step's provider, ready to use.
type ResolvedProvider struct {
	Provider Provider
	// Name names the provider in messages and events ("claude", "local").
	Name string
	// Model is the model to ask for; empty lets the provider use its own default.
	Model string
	// Options are request options from the provider's configuration (temperature, ...);
	// the step's options override them key by key.
	Options map[string]any
	// Endpoint is the host of the provider's base URL ("" for a CLI or a replay), and
	// Cassette the --replay or --record file: for the step's record.
	Endpoint string
	Cassette string
	// Handoff names the agent CLI (claude, codex, gemini) that gets the step's tools through
	// `awf mcp serve` and calls them itself; "" when the model's calls come back to the loop.
	Handoff string
}
