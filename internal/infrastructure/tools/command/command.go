// Package command runs tools defined as commands: a workflow's custom tools (a `command:`
// template whose {{args.x}} and {{inputs.x}} values are bound as shell variables by
// ports.Templater, so no value can change the command's syntax) and seed 004's wrapped
// tools (a .tool file's @command, run as an argument vector: the program and its arguments
// are fixed words, each value exactly one argument, never parsed by a shell). Both run
// through ports.ProcessRunner. Source turns a workflow's tools: list into a ports.ToolSource.
package command

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// Config is how command tools run. Process is required; Templater is required for template
// tools.
type Config struct {
	Process   ports.ProcessRunner
	Templater ports.Templater
	// Dir is the working directory commands start in ("" is awf's own).
	Dir string
	// BaseEnv and Env are passed to the process runner (see ports.ProcessRequest).
	BaseEnv []string
	Env     map[string]string
	// Policy is the workflow's sandbox policy, passed on to the process runner.
	Policy *workflow.Policy
	// Restrictions narrow Policy for this tool (its tools: entry's restrictions): the
	// command check, the exec guard, the paths and hosts of the OS layer, and the container
	// backend all apply Policy narrowed by them. nil: none.
	Restrictions *workflow.Restrictions
	// Scope is the template scope (inputs, env, workflow, run) used when a call carries none;
	// a call's own scope (tool.Invocation.Scope) wins key by key.
	Scope ports.Scope
	// Timeout bounds each run when the tool sets none; 0 means none beyond the call's context.
	Timeout time.Duration
	// OutputLimit caps the standard output kept; 0 is the runner's default.
	OutputLimit int64
}

// Tool is a workflow's custom command tool. Safe for concurrent use.
type Tool struct {
	spec   workflow.ToolSpec
	params []tool.Param
	schema json.RawMessage
	cfg    Config
}

var (
	_ tool.Tool       = (*Tool)(nil)
	_ tool.Summarizer = (*Tool)(nil)
	_ tool.Annotated  = (*Tool)(nil)
	_ tool.Located    = (*Tool)(nil)
	_ tool.Narrowable = (*Tool)(nil)
)

// New builds the tool of a tools: entry with a command. A bad parameter list or a missing
// dependency is a fault.Invalid error.
func New(spec workflow.ToolSpec, cfg Config) (*Tool, error) {
	switch {
	case spec.Command == "":
		return nil, fault.New(fault.Invalid, "tool %q has no command", spec.Name)
	case cfg.Process == nil || cfg.Templater == nil:
		return nil, fault.New(fault.System, "command tool %q: the process runner and templater are required", spec.Name)
	}
	params := Params(spec.Parameters)
	if err := tool.CheckParams(params); err != nil {
		return nil, fault.New(fault.Invalid, "tool %q: %w", spec.Name, err)
	}
	cfg.Restrictions = spec.Restrictions
	return &Tool{spec: spec, params: params, schema: tool.ObjectSchema(params), cfg: cfg}, nil
}

// Params converts a workflow tool's parameters to tool parameters.
func Params(ps []workflow.Param) []tool.Param {
	out := make([]tool.Param, len(ps))
	for i, p := range ps {
		out[i] = tool.Param{Name: p.Name, Type: string(p.Type), Description: p.Description, Required: p.Required,
			Default: p.Default, HasDefault: p.Default != nil, Enum: p.Enum}
	}
	return out
}

// Name returns the entry's name.
func (t *Tool) Name() string { return t.spec.Name }

// Description returns the entry's description, or says what the tool runs.
func (t *Tool) Description(tool.Context) string {
	if t.spec.Description != "" {
		return t.spec.Description
	}
	return "Runs the command: " + t.spec.Command
}

// Parameters returns the strict schema of the entry's parameters.
func (t *Tool) Parameters() json.RawMessage { return t.schema }

// Spec returns the tools: entry, for stages that apply its approval, restrictions and limits.
func (t *Tool) Spec() workflow.ToolSpec { return t.spec }

// Pos is where the entry is.
func (t *Tool) Pos() workflow.Pos { return t.spec.Pos }

// Annotations reports what the entry declares.
func (t *Tool) Annotations() tool.Annotations {
	return tool.Annotations{ReadOnly: t.spec.ReadOnly, Idempotent: t.spec.Idempotent, Cacheable: t.spec.Cache,
		Tags: []string{"command"}, Source: t.spec.Pos.File}
}

// Meta summarises a call: the tool and its arguments, shortened.
func (t *Tool) Meta(args map[string]any) string { return summary(t.spec.Name, args) }

// Execute binds the command template with the arguments (defaults filled in) and runs it;
// the call's input is its standard input. A non-zero exit is an error result carrying the
// output, the exit status and the end of standard error.
func (t *Tool) Execute(ctx context.Context, call tool.Invocation) tool.Result {
	req, refused := t.request(t.spec.Command, call)
	if refused != nil {
		return *refused
	}
	res := t.cfg.Run(ctx, t.spec.Name, req, nil)
	res.Command = req.Argv
	return res
}

// request binds a command template of the entry (its command, or its verify check) with the
// call's arguments (defaults filled in) and scope; the call's input is its standard input. A
// template that cannot be bound gives the result to return instead.
func (t *Tool) request(template string, call tool.Invocation) (ports.ProcessRequest, *tool.Result) {
	scope := make(ports.Scope, len(t.cfg.Scope)+len(call.Scope)+1)
	maps.Copy(scope, t.cfg.Scope)
	maps.Copy(scope, call.Scope)
	scope["args"] = tool.PlainArgs(tool.Defaults(t.params, call.Args))
	bound, err := t.cfg.Templater.Command(template, scope)
	switch {
	case fault.KindOf(err) == fault.Denied:
		// A value the templater will not bind where it would be read as an option.
		r := tool.Refused(CheckLayer, RuleOptionInjection, fmt.Sprintf("%s: %v; nothing was run", t.spec.Name, err))
		return ports.ProcessRequest{}, &r
	case err != nil:
		r := tool.Errorf(fmt.Sprintf("%s: %v", t.spec.Name, err))
		return ports.ProcessRequest{}, &r
	}
	timeout := t.spec.Timeout
	if timeout <= 0 {
		timeout = t.cfg.Timeout
	}
	return ports.ProcessRequest{Script: bound.Script, Vars: bound.Vars, Argv: bound.Argv, Dir: t.cfg.Dir,
		BaseEnv: t.cfg.BaseEnv, Env: t.cfg.Env, Stdin: call.Input, Timeout: timeout, OutputLimit: t.cfg.OutputLimit}, nil
}

// Narrow returns the tool under its policy narrowed by r too.
func (t *Tool) Narrow(r *workflow.Restrictions) (tool.Tool, error) {
	n := *t
	n.cfg.Restrictions = n.cfg.Restrictions.And(r)
	return &n, nil
}

// Result turns a finished process into a tool result: standard output for the model; for a
// non-zero exit or a failure to run, an error result with the output kept, the exit status
// and the last lines of standard error.
func Result(name string, res ports.ProcessResult, err error) tool.Result {
	switch {
	case err != nil:
		return tool.Result{Status: tool.StatusError, Output: res.Stdout, Truncated: res.Truncated, Duration: res.Duration,
			Error: fmt.Sprintf("%s: %v%s", name, err, stderrTail(res.Stderr))}
	case res.ExitCode != 0:
		msg := fmt.Sprintf("%s: exit status %d%s", name, res.ExitCode, stderrTail(res.Stderr))
		if res.Truncated {
			msg += " (output truncated at the limit)"
		}
		return tool.Result{Status: tool.StatusError, Output: res.Stdout, Error: msg, Truncated: res.Truncated, Duration: res.Duration, ExitCode: &res.ExitCode}
	}
	return tool.Result{Status: tool.StatusOK, Output: res.Stdout, Truncated: res.Truncated, Duration: res.Duration, ExitCode: &res.ExitCode}
}

// maxStderr bounds the standard error quoted in an error result.
const maxStderr = 2000

func stderrTail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if len(s) > maxStderr {
		s = "..." + s[len(s)-maxStderr:]
	}
	return "\nstderr:\n" + s
}

// summary is "name key=value ..." for people, each value shortened.
func summary(name string, args map[string]any) string {
	var b strings.Builder
	b.WriteString(name)
	for _, k := range slices.Sorted(maps.Keys(args)) {
		v := fmt.Sprint(args[k])
		if s, ok := args[k].(string); ok {
			v = strconv.Quote(s)
		}
		if len(v) > 40 {
			v = v[:37] + "..."
		}
		fmt.Fprintf(&b, " %s=%s", k, v)
		if b.Len() > 100 {
			break
		}
	}
	return b.String()
}

var _ tool.Checker = (*Tool)(nil)

// Checks reports whether the entry declares verify:.
func (t *Tool) Checks() bool { return t.spec.Verify != "" }

// Intent records nothing: the verify command looks at the world, not at a record.
func (t *Tool) Intent(context.Context, tool.Invocation) map[string]any { return nil }

// Check runs the entry's verify template, bound, checked and sandboxed as the command is,
// with the cut-off call's arguments: exit 0 means the call took effect, exit 1 that it did
// not, and anything else (another status, a refusal, a failure to run) that the check cannot
// tell.
func (t *Tool) Check(ctx context.Context, call tool.Invocation, _ map[string]any) tool.Check {
	if t.spec.Verify == "" {
		return tool.Check{Verdict: tool.VerdictUnknown, Detail: "the tool declares no verify command"}
	}
	req, refused := t.request(t.spec.Verify, call)
	if refused != nil {
		return tool.Check{Verdict: tool.VerdictUnknown, Detail: "verify: " + refused.Error}
	}
	req.Policy, req.Restrictions = t.cfg.Policy, t.cfg.Restrictions
	if r, ok := t.cfg.check(t.spec.Name, req, nil); ok {
		return tool.Check{Verdict: tool.VerdictUnknown, Detail: "verify: " + r.Error}
	}
	res, err := t.cfg.Process.Run(ctx, req)
	detail := strings.TrimSpace(res.Stdout + "\n" + res.Stderr)
	switch {
	case err != nil:
		return tool.Check{Verdict: tool.VerdictUnknown, Detail: fmt.Sprintf("verify: %v", err)}
	case res.ExitCode == 0:
		return tool.Check{Verdict: tool.VerdictDone, Detail: cmp.Or(detail, "verify exited 0")}
	case res.ExitCode == 1:
		return tool.Check{Verdict: tool.VerdictNotDone, Detail: cmp.Or(detail, "verify exited 1")}
	}
	return tool.Check{Verdict: tool.VerdictUnknown, Detail: fmt.Sprintf("verify exited %d: %s", res.ExitCode, detail)}
}
