package tool

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/workflow"
)

// The registry contract of seed 003: where a tool was defined (Level), how tools are found
// (Query), and what an invocation through the registry returns (Outcome). The registry itself
// is internal/application/registry.

// Level says where a tool was defined. A bare name resolves through the levels in the order
// of their values: the workflow's tools first, built-ins last. Installed tools are reached
// by owner/name only (and, as a last resort, by a bare name no other level defines).
type Level int

// Levels, in resolution order.
const (
	LevelWorkflow  Level = iota + 1 // the workflow's tools: list
	LevelProject                    // ./.awf/tools/<name>/config.yaml, ./.awf/wrapped-tools/*.tool
	LevelUser                       // $XDG_CONFIG_HOME/awf/tools/..., the user's wrapped-tools dir
	LevelBuiltin                    // compiled into awf, or registered from Go code
	LevelInstalled                  // installed owner/name tools, by version
)

// Levels lists the levels a bare name is resolved through, in order.
var Levels = []Level{LevelWorkflow, LevelProject, LevelUser, LevelBuiltin}

func (l Level) String() string {
	switch l {
	case LevelWorkflow:
		return "workflow"
	case LevelProject:
		return "project"
	case LevelUser:
		return "user"
	case LevelBuiltin:
		return "builtin"
	case LevelInstalled:
		return "installed"
	}
	return fmt.Sprintf("level(%d)", int(l))
}

// MarshalText writes the level's name, so JSON output reads "project", not 2.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// ParseLevel reads a level's name.
func ParseLevel(s string) (Level, error) {
	for _, l := range append(slices.Clone(Levels), LevelInstalled) {
		if l.String() == s {
			return l, nil
		}
	}
	return 0, fmt.Errorf("unknown tool level %q (want workflow, project, user, builtin or installed)", s)
}

// OutputSchemer is implemented by tools that declare the JSON Schema of their output (seed
// 003's output_schema). The registry then validates the result's Data, or its Output parsed
// as JSON, and gives the parsed value as the outcome's data.
type OutputSchemer interface {
	OutputSchema() json.RawMessage
}

// Wrappable is implemented by tools that other tools can wrap with a command template (seed
// 004's WrapInterface): the shell tool, whose wrapped tools run a fixed program with the
// call's arguments as its argument vector. Wrap builds the wrapped tool or says why the
// definition does not fit.
type Wrappable interface {
	Wrap(spec WrapSpec) (Tool, error)
}

// Located is implemented by tools defined in a file (a workflow's custom command, a .tool
// file), so that listings and errors can point at the definition.
type Located interface {
	Pos() workflow.Pos
}

// FieldError is one validation failure: the JSON path of the offending value ("$" for the
// whole value, "$.a.b[2]" below it) and what is wrong with it.
type FieldError struct {
	Path    string `json:"path" yaml:"path"`
	Message string `json:"message" yaml:"message"`
	// Cause is, for a failure that sums up others (no subschema of an anyOf matched), the
	// deepest of them: what the sender most likely has to fix, which the summary's own
	// message, cut short, may not reach. Not saved.
	Cause Cause `json:"-" yaml:"-"`
}

// Cause is the failure at the deepest place beneath a failure that sums up others.
type Cause struct {
	Path, Message string
}

func (e FieldError) String() string { return e.Path + ": " + e.Message }

// FieldErrors joins validation failures into one line a model or a person can act on.
func FieldErrors(errs []FieldError) string {
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = e.String()
	}
	return strings.Join(parts, "; ")
}

// OutcomeStatus classifies an Outcome (seed 003's ResultStatus).
type OutcomeStatus string

// Outcome statuses.
const (
	OutcomeSuccess         OutcomeStatus = "success"
	OutcomeError           OutcomeStatus = "error"            // the tool ran and failed
	OutcomeValidationError OutcomeStatus = "validation_error" // arguments or output do not match the schema
	OutcomeNotFound        OutcomeStatus = "not_found"        // no tool has that name
	OutcomeTimeout         OutcomeStatus = "timeout"          // the call ran out of time
	OutcomeDenied          OutcomeStatus = "denied"           // refused by policy or approval
)

// Outcome is what one invocation through the registry returns (seed 003's Result): Data is
// the tool's structured result when it has one, else its output text; Message explains a
// failure; Errors lists validation failures with their JSON paths.
type Outcome struct {
	Tool       string        `json:"tool" yaml:"tool"`
	Status     OutcomeStatus `json:"status" yaml:"status"`
	Data       any           `json:"data,omitempty" yaml:"data,omitempty"`
	Message    string        `json:"message,omitempty" yaml:"message,omitempty"`
	Errors     []FieldError  `json:"errors,omitempty" yaml:"errors,omitempty"`
	DurationMS float64       `json:"duration_ms" yaml:"duration_ms"`
	Cached     bool          `json:"cached,omitempty" yaml:"cached,omitempty"`
	Truncated  bool          `json:"truncated,omitempty" yaml:"truncated,omitempty"`
}

// Succeeded reports whether the status is success.
func (o Outcome) Succeeded() bool { return o.Status == OutcomeSuccess }

// Query selects tools (seed 003's search): a case-insensitive name substring and tags, any of
// which (or, with MatchAll, all of which) a tool must carry. The zero Query matches every tool.
type Query struct {
	NameContains string
	Tags         []string
	MatchAll     bool
}

// Matches reports whether a tool with this name and these tags is selected. Tags compare
// case-insensitively.
func (q Query) Matches(name string, tags []string) bool {
	if q.NameContains != "" && !strings.Contains(strings.ToLower(name), strings.ToLower(q.NameContains)) {
		return false
	}
	if len(q.Tags) == 0 {
		return true
	}
	has := func(want string) bool {
		return slices.ContainsFunc(tags, func(t string) bool { return strings.EqualFold(t, want) })
	}
	if q.MatchAll {
		return !slices.ContainsFunc(q.Tags, func(t string) bool { return !has(t) })
	}
	return slices.ContainsFunc(q.Tags, has)
}

// Set is what a tool source yields: ready tools, manifests the registry runs (meta-tools and
// chains), aliases and wrapped-tool definitions it builds once every level is known, and the
// problems found while reading them (errors skip the definition; warnings do not).
type Set struct {
	Tools []Tool
	// Refined are tools that replace the built-in of their own name on purpose, narrowed (a
	// workflow's `builtin: true` entry with restrictions): unlike other tools of a built-in's
	// name, they are not reported as shadowing it.
	Refined   []Tool
	Manifests []*Manifest
	Aliases   []Alias
	Wrapped   []WrapSpec
	Problems  workflow.Problems
}
