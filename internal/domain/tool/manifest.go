package tool

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/awf-dev/awf/internal/domain/workflow"
)

// Manifest is a tool defined in YAML (seed 000): a meta-tool whose steps call other tools and
// whose output is a template over their results, or (with Chain set) a seed 003 chain. The
// manifest loader reads it from config.yaml files; the registry runs it.
type Manifest struct {
	Name        string
	Owner       string // set for installed tools: the owner of owner/name
	Version     string // semver; required for installed tools
	Description string
	Category    string
	Tags        []string
	Arguments   []Argument
	// Steps run in order; each may use the arguments' variables, {input} and the output_var
	// of every earlier step.
	Steps []MetaStep
	// Output is the template of the tool's output; empty means the last step's output (for a
	// chain: the final context as JSON).
	Output    string
	OutputPos workflow.Pos
	// Dependencies must be available before the tool runs; nothing installs them implicitly.
	Dependencies []Dependency
	// Cache declares the tool pure: identical arguments and input give the identical result
	// within one registry, so the registry may answer from its cache.
	Cache bool
	Chain *Chain
	Path  string // the config.yaml it was read from
	Pos   workflow.Pos
}

// Argument is a manifest argument (seed 000): a command-line flag, the variable its value is
// bound to in templates (and the parameter name models and steps use), a default, a type.
type Argument struct {
	Flag        string // "--language"
	Variable    string // "language"
	Description string
	Type        string // a Param type; "" is string
	Default     any
	HasDefault  bool
	Required    bool
	Enum        []any
	Pos         workflow.Pos
}

// MetaStep is a `type: tool` step of a manifest (seed 000's ToolStep). Input and Args values
// are templates; the loader sets Input to "{input}" when the file leaves it out.
type MetaStep struct {
	Tool      string
	Input     string
	Args      map[string]StepArg
	OutputVar string
	Provider  string
	Pos       workflow.Pos
}

// StepArg is the template of one argument of a meta-tool step: a text template, or (IsList)
// a list of text templates for an array parameter, each substituted on its own so that no
// value can add or split elements. A text that is exactly one {name} passes the variable's
// value as it is: an argument declared as an integer or a list stays one.
type StepArg struct {
	Text   string
	List   []string
	IsList bool
}

// TextArg is a text template argument.
func TextArg(s string) StepArg { return StepArg{Text: s} }

// ListArg is a list-of-templates argument.
func ListArg(items ...string) StepArg { return StepArg{List: items, IsList: true} }

// Templates lists the argument's templates.
func (a StepArg) Templates() []string {
	if a.IsList {
		return a.List
	}
	return []string{a.Text}
}

// Whole returns the variable a text template consists of exactly ("{name}"), if it does.
func (a StepArg) Whole() (string, bool) {
	if a.IsList || len(a.Text) < 3 {
		return "", false
	}
	name, n, kind := scanBrace(a.Text)
	if kind != braceVar || n != len(a.Text) {
		return "", false
	}
	return name, true
}

// Dependency is a tool another tool needs: a reference (owner/name, or a bare name) and an
// optional semver constraint ("^1.0.0").
type Dependency struct {
	Ref        string
	Constraint string
	Pos        workflow.Pos
}

// InputVar is the variable holding the tool's input text.
const InputVar = "input"

var (
	toolNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })
	ownerPattern    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`) })
	varPattern      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`) })
)

// ValidName reports whether s is a valid tool name: 1 to 64 letters, digits, _ and -, the
// set every model API accepts.
func ValidName(s string) bool { return toolNamePattern().MatchString(s) }

// ParseRef splits "owner/name@constraint" (owner and constraint optional).
func ParseRef(s string) (owner, name, constraint string, err error) {
	ref, constraint, hasAt := strings.Cut(strings.TrimSpace(s), "@")
	if hasAt && strings.TrimSpace(constraint) == "" {
		return "", "", "", fmt.Errorf("tool reference %q: empty version constraint after @", s)
	}
	owner, name, qualified := strings.Cut(ref, "/")
	if !qualified {
		owner, name = "", ref
	}
	switch {
	case qualified && !ownerPattern().MatchString(owner):
		return "", "", "", fmt.Errorf("tool reference %q: bad owner %q", s, owner)
	case !toolNamePattern().MatchString(name):
		return "", "", "", fmt.Errorf("tool reference %q: bad name %q (letters, digits, _ and -)", s, name)
	}
	return owner, name, strings.TrimSpace(constraint), nil
}

// ParseDependency reads "owner/name@^1.0.0", "owner/name" or "name".
func ParseDependency(s string) (Dependency, error) {
	owner, name, constraint, err := ParseRef(s)
	if err != nil {
		return Dependency{}, err
	}
	ref := name
	if owner != "" {
		ref = owner + "/" + name
	}
	return Dependency{Ref: ref, Constraint: constraint}, nil
}

func (d Dependency) String() string {
	if d.Constraint == "" {
		return d.Ref
	}
	return d.Ref + "@" + d.Constraint
}

// Ref is the manifest's reference: owner/name for an installed tool, else its name.
func (m *Manifest) Ref() string {
	if m.Owner != "" {
		return m.Owner + "/" + m.Name
	}
	return m.Name
}

// Params are the manifest's arguments as tool parameters, plus `input` (the text the tool
// works on) unless an argument takes that name.
func (m *Manifest) Params() []Param {
	params := make([]Param, 0, len(m.Arguments)+1)
	for _, a := range m.Arguments {
		params = append(params, Param{Name: a.Variable, Type: a.Type, Description: a.Description,
			Required: a.Required, Default: a.Default, HasDefault: a.HasDefault, Enum: a.Enum})
	}
	if m.Chain == nil && !slices.ContainsFunc(m.Arguments, func(a Argument) bool { return a.Variable == InputVar }) {
		params = append(params, Param{Name: InputVar, Type: "string",
			Description: "The text the tool works on ({input} in its steps)."})
	}
	return params
}

// Schema is the JSON Schema of the manifest's parameters. A chain without declared arguments
// takes any object: its arguments are the chain's starting context.
func (m *Manifest) Schema() json.RawMessage {
	if m.Chain != nil && len(m.Arguments) == 0 {
		return json.RawMessage(`{"type":"object"}`)
	}
	return ObjectSchema(m.Params())
}

// Reference is a tool a manifest calls, where it says so.
type Reference struct {
	Tool string
	Pos  workflow.Pos
}

// References lists the tools the manifest calls, in step order and pinned (see Pinned): the
// static edges of the graph the registry checks for cycles.
func (m *Manifest) References() []Reference {
	var refs []Reference
	for _, s := range m.Steps {
		refs = append(refs, Reference{Tool: m.Pinned(s.Tool), Pos: s.Pos})
	}
	if m.Chain != nil {
		for _, s := range m.Chain.Steps {
			refs = append(refs, Reference{Tool: m.Pinned(s.Tool), Pos: s.Pos})
		}
	}
	return refs
}

// Pinned applies the manifest's declared dependency constraint to a step's reference that
// has none: with dependencies [official/x@^1.0.0], a step calling official/x calls
// official/x@^1.0.0.
func (m *Manifest) Pinned(ref string) string {
	if strings.Contains(ref, "@") {
		return ref
	}
	for _, d := range m.Dependencies {
		if d.Ref == ref && d.Constraint != "" {
			return d.String()
		}
	}
	return ref
}

// Validate reports every problem the manifest has on its own, with positions: names,
// arguments, steps, unknown {variables}, the chain's shape, dependencies.
func (m *Manifest) Validate() workflow.Problems {
	v := &manifestCheck{m: m}
	v.header()
	vars := v.arguments()
	switch {
	case m.Chain != nil && len(m.Steps) > 0:
		v.errorf(m.Pos, "a manifest has either steps or a chain, not both")
	case m.Chain != nil:
		v.chain()
	case len(m.Steps) == 0:
		v.errorf(m.Pos, "a manifest needs steps (a list of type: tool steps) or a chain")
	default:
		v.steps(vars)
	}
	return v.probs
}

type manifestCheck struct {
	m     *Manifest
	probs workflow.Problems
}

func (v *manifestCheck) errorf(pos workflow.Pos, format string, args ...any) {
	if pos == (workflow.Pos{}) {
		pos = v.m.Pos
	}
	v.probs = append(v.probs, workflow.Problem{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

func (v *manifestCheck) header() {
	m := v.m
	switch {
	case m.Name == "":
		v.errorf(m.Pos, "name is required")
	case !ValidName(m.Name):
		v.errorf(m.Pos, "name %q: use 1 to 64 letters, digits, _ and -", m.Name)
	}
	if m.Owner != "" && !ownerPattern().MatchString(m.Owner) {
		v.errorf(m.Pos, "owner %q: use letters, digits, ., _ and -", m.Owner)
	}
	for _, d := range m.Dependencies {
		if _, err := ParseDependency(d.String()); err != nil {
			v.errorf(d.Pos, "dependencies: %v", err)
		}
	}
}

// arguments checks the arguments and returns the variables they define, plus input.
func (v *manifestCheck) arguments() map[string]string {
	vars := map[string]string{InputVar: ""}
	for i, a := range v.m.Arguments {
		at := fmt.Sprintf("arguments[%d]", i)
		switch {
		case a.Variable == "":
			v.errorf(a.Pos, "%s: variable is required", at)
			continue
		case !varPattern().MatchString(a.Variable):
			v.errorf(a.Pos, "%s: variable %q: use letters, digits, _ and -, starting with a letter or _", at, a.Variable)
		case a.Variable != InputVar && vars[a.Variable] != "":
			v.errorf(a.Pos, "%s: variable %q is declared twice", at, a.Variable)
		}
		if a.Flag != "" && !strings.HasPrefix(a.Flag, "-") {
			v.errorf(a.Pos, "%s: flag %q must start with - or --", at, a.Flag)
		}
		if err := CheckType(a.Type); err != nil {
			v.errorf(a.Pos, "%s: %v", at, err)
		}
		vars[a.Variable] = "argument"
	}
	return vars
}

func (v *manifestCheck) steps(vars map[string]string) {
	for i, s := range v.m.Steps {
		at := fmt.Sprintf("steps[%d]", i)
		if s.Tool == "" {
			v.errorf(s.Pos, "%s: tool is required", at)
		} else if _, _, _, err := ParseRef(s.Tool); err != nil {
			v.errorf(s.Pos, "%s: %v", at, err)
		}
		v.known(s.Pos, at+".input", s.Input, vars)
		for _, k := range slices.Sorted(maps.Keys(s.Args)) {
			for _, tmpl := range s.Args[k].Templates() {
				v.known(s.Pos, at+".args."+k, tmpl, vars)
			}
		}
		switch {
		case s.OutputVar == "":
			v.errorf(s.Pos, "%s: output_var is required", at)
		case !varPattern().MatchString(s.OutputVar):
			v.errorf(s.Pos, "%s: output_var %q: use letters, digits, _ and -, starting with a letter or _", at, s.OutputVar)
		case vars[s.OutputVar] != "" || s.OutputVar == InputVar:
			v.errorf(s.Pos, "%s: output_var %q is already a variable", at, s.OutputVar)
		default:
			vars[s.OutputVar] = "output_var"
		}
	}
	v.known(v.m.OutputPos, "output", v.m.Output, vars)
}

// known reports each {variable} of tmpl that is not among vars.
func (v *manifestCheck) known(pos workflow.Pos, field, tmpl string, vars map[string]string) {
	for _, name := range Variables(tmpl) {
		if _, ok := vars[name]; ok {
			continue
		}
		names := slices.Sorted(maps.Keys(vars))
		msg := fmt.Sprintf("%s: unknown variable {%s} (known here: %s)", field, name, strings.Join(names, ", "))
		v.probs = append(v.probs, workflow.Problem{Pos: orPos(pos, v.m.Pos), Msg: msg, Hint: workflow.DidYouMean(name, names)})
	}
}

func (v *manifestCheck) chain() {
	c := v.m.Chain
	for _, p := range c.Check() {
		v.errorf(v.m.Pos, "chain: %s", p)
	}
	for i, s := range c.Steps {
		if s.Tool == "" {
			continue
		}
		if _, _, _, err := ParseRef(s.Tool); err != nil {
			v.errorf(s.Pos, "chain.steps[%d]: %v", i, err)
		}
	}
}

func orPos(p, fallback workflow.Pos) workflow.Pos {
	if p == (workflow.Pos{}) {
		return fallback
	}
	return p
}
