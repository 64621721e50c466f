package tool

import "github.com/awf-dev/awf/internal/domain/workflow"

// Alias gives an existing tool another name (seed 004's `@name` + `@wrapped` .tool file, a
// workflow's `use:` entry, `run_command` for shell). The target is resolved like any name,
// skipping the alias itself, so an alias may carry the name of the tool it refines. For an
// owner/name target, Constraint (a semver constraint such as ^1.0.0) picks the version.
type Alias struct {
	Name       string
	Target     string
	Constraint string
	// Description, when set, replaces the target's (a workflow entry may describe it).
	Description string
	// Level, when set, is the only level the target is looked up on: a workflow's
	// `builtin: true` entry means the built-in, whatever else carries its name.
	Level  Level
	Source string // the defining file, or a word such as "builtin"
	Pos    workflow.Pos
	// Restrictions narrow the target's sandbox policy (a workflow's `use:` entry with
	// restrictions): the target must be Narrowable, or the alias is not built.
	Restrictions *workflow.Restrictions
}

// Narrowable is a tool whose processes run under the workflow's sandbox policy, which a
// tools: entry's restrictions can narrow: the shell, command templates, wrapped tools.
// Narrow returns the tool under the policy narrowed by r as well as by any restrictions it
// already has. Tools whose work happens elsewhere (manifests, whose steps call other tools;
// MCP tools, run by their server) are not Narrowable: restricting them is an error, never
// a restriction nobody enforces.
type Narrowable interface {
	Narrow(r *workflow.Restrictions) (Tool, error)
}

// WrapSpec is a wrapped tool of seed 004: a tool of its own name, description and
// parameters whose calls the wrapped tool (Wraps, such as run_command) turns into a call of
// its own through Command, a template in which {param} stands for a parameter's value: an
// array<string> parameter expands to one argument per element.
type WrapSpec struct {
	Name        string
	Title       string
	Description string
	Wraps       string
	Command     string
	Params      []Param
	Source      string
	Pos         workflow.Pos
}
