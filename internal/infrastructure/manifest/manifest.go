// Package manifest reads tool definitions from disk: seed 000 manifests (config.yaml files of
// meta-tools and chains) and seed 004 .tool files (aliases and wrapped commands), in the
// places DESIGN section 3 names, and offers each place as a ports.ToolSource. It parses and
// checks; the registry resolves and runs.
//
// # Manifest format (config.yaml)
//
//	name: summarize-and-translate        # required; [A-Za-z0-9_-]{1,64}
//	description: Summarize, then translate
//	version: 1.0.0                       # semver; required for installed tools
//	category: Text
//	tags: [text]
//	arguments:                           # the tool's parameters
//	  - flag: --language                 # for the command line
//	    variable: language               # the parameter name and the {variable}
//	    type: string                     # string|integer|number|boolean|array|object|array<T>
//	    default: Spanish
//	    required: false
//	    enum: [Spanish, French]
//	    description: Target language
//	steps:                               # a meta-tool: each step calls a tool
//	  - type: tool                       # the only step type
//	    tool: official/summarize         # owner/name[@constraint] or a bare name
//	    input: "{input}"                 # default "{input}"
//	    args:                            # values are {var} templates
//	      max_words: "100"
//	      arguments: ["-rn", "{pattern}"]  # a list: one element per array item, each verbatim
//	    output_var: summary              # required
//	    provider: claude                 # optional, for tools that call models
//	output: "{summary}"                  # default: the last step's output
//	dependencies: [official/summarize@^1.0.0]
//	cache: true                          # pure: cache results within a run
//
// Instead of steps, a manifest may be a chain (seed 003):
//
//	chain:
//	  stop_on_failure: true              # the default
//	  steps:
//	    - tool: fetch_user
//	      input_mapping: {id: request.id}   # argument -> dot path into the context
//	      output_key: user                  # or merge: true for an object result
//	output: "{user}"                     # {key} of the final context; default: it as JSON
//
// {name} in input, args and output is a variable: an argument's variable, input, or an
// earlier step's output_var; {{ and }} are literal braces; an unknown variable is an error.
// An args value that is exactly "{name}" passes an argument's value as it is (a number stays
// a number, a list a list); a list of templates builds an array element by element, so no
// value can add elements. Step arguments are converted to the called tool's parameter types
// ("100" for an integer becomes 100).
//
// # .tool format
//
//	Find files matching glob patterns using find.     <- description, up to the first @line
//
//	@title Glob Pattern Matching
//	@name glob
//	@wrapped run_command
//	@command find {arguments} -type f
//	@param arguments {array<string>} [required] Arguments passed to find
//
// A file with only @name and @wrapped is an alias. A wrapped tool needs @title, a
// description and @command.
package manifest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/yamlnode"
	"github.com/awf-dev/awf/internal/semver"
)

var (
	manifestKeys = []string{"name", "description", "version", "category", "tags", "arguments", "steps", "output",
		"dependencies", "cache", "chain"}
	argumentKeys  = []string{"flag", "variable", "default", "description", "type", "required", "enum"}
	stepKeys      = []string{"type", "tool", "input", "args", "output_var", "provider"}
	chainKeys     = []string{"stop_on_failure", "steps"}
	chainStepKeys = []string{"tool", "input_mapping", "output_key", "merge"}
)

// Decode reads a manifest from YAML. It returns the manifest (nil when the file is not a
// mapping at all) and every problem found, each with its position in file.
func Decode(file string, data []byte) (*tool.Manifest, workflow.Problems) {
	d := &decoder{file: file}
	root := d.parse(data)
	if root == nil {
		return nil, d.probs
	}
	if _, ok := d.resolve(root).(*ast.MappingNode); !ok {
		d.errorf(root, "", "a tool manifest must be a mapping, got %s", yamlnode.Kind(d.resolve(root)))
		return nil, d.probs
	}
	m := &tool.Manifest{Path: file, Pos: workflow.Pos{File: file, Line: 1, Col: 1}}
	for _, f := range d.fields(root, "the manifest", manifestKeys) {
		d.manifestField(m, f)
	}
	d.probs = append(d.probs, m.Validate()...)
	if m.Version != "" {
		if _, err := semver.NewVersion(m.Version); err != nil {
			d.errorf(nil, "", "version %q is not a semantic version (such as 1.2.0)", m.Version)
		}
	}
	d.probs = dedupe(d.probs)
	d.probs.Sort()
	return m, d.probs
}

func (d *decoder) manifestField(m *tool.Manifest, f field) {
	switch f.key {
	case "name":
		m.Name, m.Pos = d.str(f, "name"), d.pos(f.node)
	case "description":
		m.Description = d.str(f, "description")
	case "version":
		m.Version = d.str(f, "version")
	case "category":
		m.Category = d.str(f, "category")
	case "tags":
		m.Tags = d.strList(f, "tags")
	case "arguments":
		for i, n := range d.list(f, "arguments") {
			m.Arguments = append(m.Arguments, d.argument(n, fmt.Sprintf("arguments[%d]", i)))
		}
	case "steps":
		for i, n := range d.list(f, "steps") {
			m.Steps = append(m.Steps, d.step(n, fmt.Sprintf("steps[%d]", i)))
		}
	case "output":
		m.Output, m.OutputPos = d.str(f, "output"), d.pos(f.node)
	case "dependencies":
		for i, n := range d.list(f, "dependencies") {
			what := fmt.Sprintf("dependencies[%d]", i)
			dep, err := tool.ParseDependency(d.str(field{node: n, value: n}, what))
			if err != nil {
				d.errorf(n, "", "%s: %v", what, err)
				continue
			}
			if dep.Constraint != "" {
				if _, err := semver.NewConstraint(dep.Constraint); err != nil {
					d.errorf(n, "", "%s: bad version constraint %q: %v", what, dep.Constraint, err)
					continue
				}
			}
			dep.Pos = d.pos(n)
			m.Dependencies = append(m.Dependencies, dep)
		}
	case "cache":
		m.Cache = d.boolean(f, "cache")
	case "chain":
		m.Chain = d.chain(f)
	}
}

func (d *decoder) argument(n ast.Node, what string) tool.Argument {
	a := tool.Argument{Pos: d.pos(n)}
	for _, f := range d.fields(n, what, argumentKeys) {
		switch f.key {
		case "flag":
			a.Flag = d.str(f, what+".flag")
		case "variable":
			a.Variable = d.str(f, what+".variable")
		case "default":
			a.Default, a.HasDefault = d.value(f, what+".default"), true
		case "description":
			a.Description = d.str(f, what+".description")
		case "type":
			a.Type = d.str(f, what+".type")
		case "required":
			a.Required = d.boolean(f, what+".required")
		case "enum":
			if v, ok := d.value(f, what+".enum").([]any); ok {
				a.Enum = v
			} else {
				d.errorf(f.node, "", "%s.enum must be a list", what)
			}
		}
	}
	if a.Variable == "" && a.Flag != "" { // CmdForge derives the variable from the flag
		a.Variable = strings.ReplaceAll(strings.TrimLeft(a.Flag, "-"), "-", "_")
	}
	return a
}

func (d *decoder) step(n ast.Node, what string) tool.MetaStep {
	s := tool.MetaStep{Input: "{" + tool.InputVar + "}", Pos: d.pos(n)}
	typ := ""
	for _, f := range d.fields(n, what, stepKeys) {
		switch f.key {
		case "type":
			typ = d.str(f, what+".type")
		case "tool":
			s.Tool = d.str(f, what+".tool")
		case "input":
			s.Input = d.str(f, what+".input")
		case "args":
			s.Args = d.stepArgs(f, what+".args")
		case "output_var":
			s.OutputVar = d.str(f, what+".output_var")
		case "provider":
			s.Provider = d.str(f, what+".provider")
		}
	}
	if typ != "tool" {
		d.errorf(n, workflow.DidYouMean(typ, []string{"tool"}), "%s: type must be \"tool\" (the only step type of a tool manifest), got %q", what, typ)
	}
	return s
}

// stepArgs reads a step's args: each a scalar template, or a list of scalar templates.
func (d *decoder) stepArgs(f field, what string) map[string]tool.StepArg {
	out := map[string]tool.StepArg{}
	for _, af := range d.anyFields(f, what) {
		if _, isList := af.value.(*ast.SequenceNode); isList {
			out[af.key] = tool.ListArg(d.strList(af, what+"."+af.key)...)
			continue
		}
		out[af.key] = tool.TextArg(d.str(af, what+"."+af.key))
	}
	return out
}

func (d *decoder) chain(f field) *tool.Chain {
	c := &tool.Chain{}
	for _, cf := range d.fields(f.value, "chain", chainKeys) {
		switch cf.key {
		case "stop_on_failure":
			c.ContinueOnFailure = !d.boolean(cf, "chain.stop_on_failure")
		case "steps":
			for i, n := range d.list(cf, "chain.steps") {
				c.Steps = append(c.Steps, d.chainStep(n, fmt.Sprintf("chain.steps[%d]", i)))
			}
		}
	}
	return c
}

func (d *decoder) chainStep(n ast.Node, what string) tool.ChainStep {
	s := tool.ChainStep{Pos: d.pos(n)}
	for _, f := range d.fields(n, what, chainStepKeys) {
		switch f.key {
		case "tool":
			s.Tool = d.str(f, what+".tool")
		case "input_mapping":
			s.InputMapping = d.strMap(f, what+".input_mapping")
		case "output_key":
			s.OutputKey = d.str(f, what+".output_key")
		case "merge":
			s.Merge = d.boolean(f, what+".merge")
		}
	}
	return s
}

// dedupe drops problems repeated at one position (a missing field reported by the decoder
// and by Validate alike).
func dedupe(ps workflow.Problems) workflow.Problems {
	var out workflow.Problems
	for _, p := range ps {
		if !slices.ContainsFunc(out, func(q workflow.Problem) bool { return q.Pos == p.Pos && q.Msg == p.Msg }) {
			out = append(out, p)
		}
	}
	return out
}
