// Package workflow holds the workflow model: what a YAML file declares, after loading and before
// any template is evaluated. It is pure data plus pure checks (Validate); reading files and
// evaluating expressions belong to the loader and templater adapters.
package workflow

import (
	"fmt"
	"time"
)

// Pos is a position in a source file, 1-based. The zero Pos means "unknown".
type Pos struct {
	File string
	Line int
	Col  int
}

// String is the position as editors and compilers write it: file:line:col, file when the line
// is unknown, "" when nothing is.
func (p Pos) String() string {
	if p.Line <= 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Workflow is one loaded workflow file. Template strings are kept verbatim; the templater
// compiles them.
type Workflow struct {
	Name        string
	Version     string
	Description string
	Inputs      []Input
	Providers   map[string]ProviderConfig
	Sandbox     *Policy
	Approval    *ApprovalPolicy
	Tools       []ToolSpec
	MCPServers  map[string]MCPServer
	Steps       []Step
	// Output is the template of the workflow's output, evaluated after the last step.
	Output    string
	OutputPos Pos

	// Path is the file the workflow was loaded from; Dir is its directory, the base for
	// relative paths (prompt_file, sub-workflows). Both are absolute.
	Path string
	Dir  string
	Pos  Pos
	// Warnings are problems that do not stop the workflow from loading, such as inputs
	// referenced but not declared.
	Warnings []Problem
	// Blocks gives, for each field whose value's text does not start where the value does,
	// the position of the text's first character, by field path ("steps[2].command"): for a
	// literal block scalar (key: |), line n of the value is line Line+n of the file at column
	// Col, so that a problem inside a multi-line script or prompt can name its own line; for
	// a quoted scalar, the character after the quote.
	Blocks map[string]Pos
}

// InputType is the declared type of an input.
type InputType string

// Input types.
const (
	TypeString  InputType = "string"
	TypeInteger InputType = "integer"
	TypeNumber  InputType = "number"
	TypeBoolean InputType = "boolean"
	TypeArray   InputType = "array"
	TypeObject  InputType = "object"
)

// Input is a declared (or implicitly declared) workflow input.
type Input struct {
	Name        string
	Type        InputType // empty means string
	Description string
	Required    bool
	Default     any // nil when HasDefault is false
	HasDefault  bool
	Enum        []any
	Pattern     string
	Min, Max    *float64
	FileExists  bool
	DirExists   bool
	// Implicit is true for an input referenced in a template but not declared; it is a
	// required string and awf validate warns about it.
	Implicit bool
	Pos      Pos
}

// StepType names the kind of a step.
type StepType string

// Step types.
const (
	StepShell    StepType = "shell"
	StepTool     StepType = "tool"
	StepAgent    StepType = "agent"
	StepParallel StepType = "parallel"
	StepWorkflow StepType = "workflow"
)

// StepTypes lists every step type, for validation and suggestions.
var StepTypes = []StepType{StepShell, StepTool, StepAgent, StepParallel, StepWorkflow}

// Step is one step of a workflow. Exactly one of the type-specific parts is non-nil, matching
// Type.
type Step struct {
	Name            string
	Type            StepType
	When            string // bare expr condition; empty means always
	Timeout         time.Duration
	Retry           *Retry
	ContinueOnError bool
	OutputVar       string

	Shell    *ShellStep
	Tool     *ToolStep
	Agent    *AgentStep
	Parallel *ParallelStep
	Workflow *WorkflowStep

	Pos Pos
	// Fields maps each YAML key of the step to its position, so that later phases can point
	// at the exact field ("steps[2].command").
	Fields map[string]Pos
}

// FieldPos returns the position of the named field, or the step's own position.
func (s *Step) FieldPos(field string) Pos {
	if p, ok := s.Fields[field]; ok {
		return p
	}
	return s.Pos
}

// Backoff names how retry delays grow.
type Backoff string

// Backoff kinds.
const (
	BackoffConstant    Backoff = "constant"
	BackoffLinear      Backoff = "linear"
	BackoffExponential Backoff = "exponential"
)

// Retry says how often and how patiently a failed step is tried again.
type Retry struct {
	MaxAttempts int // total attempts, including the first; at least 1
	Backoff     Backoff
	Initial     time.Duration
	Max         time.Duration
}

// Delay returns the wait before attempt n+1 after attempt n failed (n >= 1).
func (r *Retry) Delay(n int) time.Duration {
	if r == nil || r.Initial <= 0 {
		return 0
	}
	d := r.Initial
	switch r.Backoff {
	case BackoffLinear:
		d = r.Initial * time.Duration(n)
	case BackoffExponential:
		for i := 1; i < n && (r.Max <= 0 || d < r.Max); i++ {
			d *= 2
		}
	}
	if r.Max > 0 && d > r.Max {
		d = r.Max
	}
	return d
}

// ShellStep runs a command template through the shell. Template values are bound as literal
// text (see DESIGN section 3).
type ShellStep struct {
	Command string
	Dir     string
	Env     map[string]string
}

// ToolStep calls one tool (a meta-tool step).
type ToolStep struct {
	Tool     string
	Input    string
	Args     map[string]string
	Provider string
}

// AgentStep asks a model to work, letting it call tools.
type AgentStep struct {
	Provider     string
	Prompt       string
	PromptFile   string
	SystemPrompt string
	Tools        []string
	Options      map[string]any
	ToolOptions  ToolOptions
	OutputFormat string // text | json
	OutputSchema map[string]any
	Mode         string // "" | conversation
	Conversation *ConversationOptions
	ContinueFrom string
}

// ToolOptions tunes the agent loop of one step.
type ToolOptions struct {
	MaxCalls       int
	TimeoutPerCall time.Duration
	Parallel       *bool
	ToolFormat     string // xml | json | auto (cli providers)
	OnMaxCalls     string // fail | stop
	MaxRepeats     int    // identical consecutive calls before the breaker trips
}

// ConversationOptions configures mode: conversation.
type ConversationOptions struct {
	MaxTurns         int
	MaxContextTokens int
	Strategy         string // sliding_window | truncate_middle | summarize
	StopCondition    string // bare expr over response, turn, tokens
}

// ParallelStep runs its child steps concurrently.
type ParallelStep struct {
	Steps          []Step
	MaxConcurrency int  // 0 means all at once
	FailFast       bool // default true: the first failure cancels the others
}

// WorkflowStep runs another workflow file; its output becomes this step's output.
type WorkflowStep struct {
	Path   string            // relative to the calling workflow's directory
	Inputs map[string]string // templates
}

// ProviderConfig configures a named model provider.
type ProviderConfig struct {
	Name      string
	Type      string // openai | anthropic | claude | ollama | cli | replay
	BaseURL   string
	Model     string
	APIKeyEnv string
	Command   string
	Args      []string
	Options   map[string]any
	Pos       Pos
}

// MCPServer is an MCP server whose tools steps may use.
type MCPServer struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Pos     Pos
}

// CallsTools reports whether a tool or agent step is among the workflow's steps, at any depth
// of parallel steps (not counting the workflows its workflow steps call): a run of a workflow
// that calls no tool needs no tool registry, audit log or model provider.
func (w *Workflow) CallsTools() bool {
	var walk func([]Step) bool
	walk = func(steps []Step) bool {
		for i := range steps {
			s := &steps[i]
			if s.Tool != nil || s.Agent != nil || s.Parallel != nil && walk(s.Parallel.Steps) {
				return true
			}
		}
		return false
	}
	return walk(w.Steps)
}
