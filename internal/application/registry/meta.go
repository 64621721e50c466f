package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// manifestTool is what the tools built from a manifest share: the tool behaviour read off the
// manifest. metaTool and chainTool embed it and add Execute.
type manifestTool struct {
	r      *Registry
	e      *entry
	schema json.RawMessage // the manifest's, computed once
}

func (t *manifestTool) Name() string                    { return t.e.Manifest.Name }
func (t *manifestTool) Description(tool.Context) string { return t.e.Manifest.Description }
func (t *manifestTool) Parameters() json.RawMessage     { return t.schema }
func (t *manifestTool) Pos() workflow.Pos               { return t.e.Manifest.Pos }

func (t *manifestTool) Annotations() tool.Annotations {
	m := t.e.Manifest
	return tool.Annotations{Cacheable: m.Cache, Version: m.Version, Tags: m.Tags, Source: m.Path}
}

// Meta summarises a call as the manifest's reference and its number of steps.
func (t *manifestTool) Meta(map[string]any) string {
	m := t.e.Manifest
	n := len(m.Steps)
	if m.Chain != nil {
		n = len(m.Chain.Steps)
	}
	return fmt.Sprintf("%s (%d steps)", m.Ref(), n)
}

// metaTool runs a manifest's steps (seed 000): each calls another tool through the registry
// with {var} substitution over the arguments, {input} and earlier output_vars.
type metaTool struct{ manifestTool }

var (
	_ tool.Tool       = (*metaTool)(nil)
	_ tool.Annotated  = (*metaTool)(nil)
	_ tool.Summarizer = (*metaTool)(nil)
	_ tool.Located    = (*metaTool)(nil)
)

// Execute checks dependencies and step references, then runs the steps in order. The first
// failing step fails the tool, naming the step.
func (t *metaTool) Execute(ctx context.Context, inv tool.Invocation) tool.Result {
	m := t.e.Manifest
	if msg := t.r.unmet(t.e); msg != "" {
		return tool.Errorf(msg)
	}
	parent := parentCall(ctx, m.Name, inv)
	vars, typed := variables(m, inv)
	last := ""
	for i, s := range m.Steps {
		input, err := tool.Substitute(s.Input, vars)
		if err != nil {
			return tool.Errorf(fmt.Sprintf("%s: steps[%d].input: %v", m.Name, i, err))
		}
		args := make(map[string]any, len(s.Args))
		for _, k := range slices.Sorted(maps.Keys(s.Args)) {
			v, err := substituteArg(s.Args[k], vars, typed)
			if err != nil {
				return tool.Errorf(fmt.Sprintf("%s: steps[%d].args.%s: %v", m.Name, i, k, err))
			}
			args[k] = v
		}
		res, _ := t.r.nested(ctx, parent, t.e, i+1, true,
			ports.ToolRequest{Name: m.Pinned(s.Tool), Args: args, Input: input, Provider: s.Provider})
		if !res.Succeeded() {
			// A step the policy refused refuses the whole call, as the same layer and rule.
			return tool.Result{Status: tool.StatusError, Output: res.Output, Denied: res.Denied, Refusal: res.Refusal,
				Error: fmt.Sprintf("%s: step %d (%s) failed: %s", m.Name, i+1, s.Tool, res.Error)}
		}
		vars[s.OutputVar], last = res.Output, res.Output
	}
	if m.Output == "" {
		return tool.OK(last)
	}
	out, err := tool.Substitute(m.Output, vars)
	if err != nil {
		return tool.Errorf(fmt.Sprintf("%s: output: %v", m.Name, err))
	}
	return tool.OK(out)
}

// variables are a meta-tool's {vars} before its first step: every argument (given, or its
// default, or empty when it has neither) and input, as text; and the arguments' values as
// they are, for arguments that are exactly one {var}.
func variables(m *tool.Manifest, inv tool.Invocation) (map[string]string, map[string]any) {
	args := tool.Defaults(m.Params(), inv.Args)
	vars := make(map[string]string, len(m.Arguments)+len(m.Steps)+1)
	typed := make(map[string]any, len(m.Arguments))
	for _, a := range m.Arguments {
		vars[a.Variable] = tool.ArgText(args[a.Variable])
		if v, ok := args[a.Variable]; ok && v != nil {
			typed[a.Variable] = v
		}
	}
	vars[tool.InputVar] = inv.Input
	if inv.Input == "" {
		vars[tool.InputVar] = tool.ArgText(args[tool.InputVar])
	}
	return vars, typed
}

// substituteArg fills in one step argument: "{name}" alone passes an argument's value as it
// is; other text is substituted; a list becomes a list of substituted strings.
func substituteArg(a tool.StepArg, vars map[string]string, typed map[string]any) (any, error) {
	if name, ok := a.Whole(); ok {
		if v, ok := typed[name]; ok {
			return v, nil
		}
	}
	if !a.IsList {
		return tool.Substitute(a.Text, vars)
	}
	out := make([]any, len(a.List))
	for i, tmpl := range a.List {
		s, err := tool.Substitute(tmpl, vars)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		out[i] = s
	}
	return out, nil
}

// parentCall is the call a manifest tool runs under, or a stand-in when the tool was executed
// directly rather than through the registry.
func parentCall(ctx context.Context, name string, inv tool.Invocation) *Call {
	if c := callFrom(ctx); c != nil {
		return c
	}
	return &Call{Request: ports.ToolRequest{Name: name, CallID: inv.ID, Scope: inv.Scope}, Depth: inv.Depth}
}
