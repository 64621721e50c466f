// Package tool defines the one behaviour every tool has, whatever defines it (built-in, command
// template, manifest, .tool file, MCP server, Go code): a name, a description, a JSON Schema for
// its parameters, an execute function and an optional one-line summary for people. It also holds
// the call and result values that travel between models, the engine and the state file.
package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/state"
)

// Tool is the behaviour of a tool. Implementations must be safe for concurrent use: the agent
// loop may run read-only calls in parallel.
type Tool interface {
	// Name is the exact name models and workflows use.
	Name() string
	// Description tells a model what the tool does; it may depend on the context (for example
	// the working directory).
	Description(ctx Context) string
	// Parameters is the JSON Schema (an object schema) the arguments must satisfy.
	Parameters() json.RawMessage
	// Execute runs the tool. It returns an error result rather than a Go error for failures the
	// model should hear about; a Go error means the engine could not run the tool at all.
	Execute(ctx context.Context, call Invocation) Result
}

// Summarizer is implemented by tools that can describe a call in one line for people
// ("read src/main.go"), shown in progress output and approval prompts.
type Summarizer interface {
	Meta(args map[string]any) string
}

// Annotated is implemented by tools that declare properties the engine relies on.
type Annotated interface {
	Annotations() Annotations
}

// Annotations are facts a tool declares about itself.
type Annotations struct {
	ReadOnly   bool // never changes anything: may run in parallel with other read-only calls
	Idempotent bool // may be re-run after a crash left it in flight
	Cacheable  bool // pure: identical arguments give identical results within a run
	Version    string
	Tags       []string
	Source     string // where it was defined, for `awf tools show`
}

// Context is what a tool's description may depend on.
type Context struct {
	WorkDir string
}

// Invocation is one call as a tool receives it: decoded arguments plus the optional input text
// (standard input for command tools, {input} in manifests).
type Invocation struct {
	ID    string
	Args  map[string]any
	Input string
	// Depth is the meta-tool nesting depth of this call (0 for a call from a step or model).
	Depth int
	// Scope is the template scope of the calling step (inputs, env, workflow, run), for tools
	// whose definitions hold templates such as a custom command's {{inputs.x}}; nil when the
	// caller has none.
	Scope map[string]any
}

// Call is a tool call as a model or a step asks for it.
type Call struct {
	ID        string          `json:"id" yaml:"id"`
	Name      string          `json:"name" yaml:"tool"`
	Arguments json.RawMessage `json:"arguments" yaml:"-"`
}

// Status is the outcome class of a Result.
type Status string

// Result statuses (seed 001: ok, error, effect).
const (
	StatusOK     Status = "ok"
	StatusError  Status = "error"
	StatusEffect Status = "effect"
)

// Result is what a tool returns. Output is the text the model sees; for an error result Error
// explains what went wrong in words the model can act on.
type Result struct {
	Status    Status
	Output    string
	Error     string
	Data      any // structured result for the engine (StatusEffect), or parsed output
	Truncated bool
	// ExitCode is the exit status of the process a command or shell tool ran; nil for tools
	// that run none, or when the process could not be started.
	ExitCode *int
	Duration time.Duration
	Cached   bool
	// Approval says who let the call run or refused it (auto, user, rule, policy, quota,
	// non_interactive, timeout, flag, gate: the ports.By* values); filled by the governed
	// path, empty for a call that did not pass it.
	Approval string
	// Denied is true when the governed path refused the call (policy, approval, quota, call
	// gate): the tool did not run and Error says why.
	Denied bool
	// Refusal is set when a layer inside the tool refused the call (see Refused); the governed
	// path then records a denial with its layer and rule.
	Refusal *Refusal
	// Command is the argv of each command a command tool ran, after binding its arguments,
	// for the audit log and the state file; nil for other tools.
	Command [][]string
	// Changes are the files the call changed (write_file), for the audit log and the state.
	Changes []state.FileChange
	// Args are the arguments as the tool received them (after coercion to the schema's
	// types), set by the governed path so that callers record what ran; nil when the call did
	// not reach it.
	Args map[string]any
}

// OK returns a successful result with output text.
func OK(output string) Result { return Result{Status: StatusOK, Output: output} }

// Errorf returns an error result; the message goes back to the model.
func Errorf(msg string) Result { return Result{Status: StatusError, Error: msg} }

// Succeeded reports whether the result is not an error.
func (r Result) Succeeded() bool { return r.Status != StatusError }

// Refusal says which layer refused a call while the tool was running and under which rule: a
// path outside the policy, a protected path, a program off the command allowlist, a host the
// guard refused, a size gate. The governed path records it as a denial (audit decision deny
// with this layer and rule), never as an allowed call that failed.
type Refusal struct {
	// Layer is the layer that decided: "L0 gate", "L1 os.Root", "L1 command check",
	// "L1 connect-time IP guard", "L2 exec guard", ...
	Layer string `json:"layer" yaml:"layer"`
	// Rule is the policy rule that decided, such as sandbox.paths.write, protect,
	// restrictions.commands or sandbox.hosts.
	Rule string `json:"rule" yaml:"rule"`
}

// RefusalError is a refusal found inside a tool's own checks (a path outside the policy, a URL
// the rules refuse), carried up as an error to where the tool makes its result, which is then
// Refused with its layer and rule (see AsRefused). It is fault.Denied.
type RefusalError struct{ Layer, Rule, Msg string }

func (e *RefusalError) Error() string { return e.Msg }

// FaultKind classifies the refusal as fault.Denied.
func (e *RefusalError) FaultKind() fault.Kind { return fault.Denied }

// Refusef returns a *RefusalError of layer under rule.
func Refusef(layer, rule, format string, args ...any) error {
	return &RefusalError{Layer: layer, Rule: rule, Msg: fmt.Sprintf(format, args...)}
}

// AsRefused returns the Refused result of err, with msg as its text, when err holds a
// *RefusalError.
func AsRefused(err error, msg string) (Result, bool) {
	if r, ok := errors.AsType[*RefusalError](err); ok {
		return Refused(r.Layer, r.Rule, msg), true
	}
	return Result{}, false
}

// Refused returns the error result of a call that a layer refused: the tool did not do what
// was asked (or, for a check inside a running program, stopped before doing more), and msg
// tells the model why.
func Refused(layer, rule, msg string) Result {
	return Result{Status: StatusError, Error: msg, Denied: true, Refusal: &Refusal{Layer: layer, Rule: rule}}
}

// OptionLike reports whether a value the model gives, placed where a program reads options,
// would be taken for one: it starts with "-" and is not a number ("-5" is a count for the
// programs that read it at all, an operand for the rest). Command templates and wrapped
// tools refuse such a value there (option injection, docs/security.md).
func OptionLike(v string) bool {
	if len(v) < 2 || v[0] != '-' {
		return false
	}
	digits := strings.Trim(v[1:], "0123456789")
	return !(digits == "" || digits == "." && v[1] != '.' && v[len(v)-1] != '.')
}
