package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"os"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// MaxInput bounds the input text read from standard input (--input -).
const MaxInput = 64 << 20

// RunOptions are everything `awf tools run` needs.
type RunOptions struct {
	IO       *iostreams.IOStreams
	Factory  *cmdutil.Factory
	Name     string
	Args     []string // KEY=VALUE
	ArgsJSON string
	Input    string
	HasInput bool
	Workflow string
	Output   cmdutil.Format
	// NewID names the call in the audit log; tests fix it.
	NewID func() string
}

func newCmdRun(f *cmdutil.Factory, runF RunFunc) *cobra.Command {
	opts := &RunOptions{IO: f.IO, Factory: f, NewID: uuid.NewString}
	cmd := &cobra.Command{
		Use:   "run NAME",
		Short: "Run one tool through approval and the audit log",
		Long: `Run the tool NAME once, as a step or a model would: arguments are validated against
its schema, the call is approved (auto, prompt on a terminal, or --yes / --approve) and
written to the audit log, then its output is printed.

--arg KEY=VALUE (repeatable) converts VALUE by the parameter's type: strings are taken
verbatim, integers, numbers and booleans are parsed, arrays and objects are given as JSON.
--args-json gives the whole arguments object as JSON. --input is the tool's input text
(standard input for command tools, {input} in manifests); "-" reads it from standard input.

Exit codes: 0 the tool succeeded, 1 bad arguments, 2 unknown tool, 3 the tool failed,
5 the call was denied.`,
		Example: `  awf tools run grep --arg pattern=TODO --arg path=src
  awf tools run ls --arg 'arguments=["-1","src"]' --yes   # examples/tools/wrapped-tools/ls.tool in .awf/wrapped-tools/
  awf tools run file-report --arg pattern=needle --arg dir=src
  awf tools run acme/greet --input world
  git diff | awf tools run review --input -`,
		Args:              cmdutil.ExactArgs(1, "need a tool name: awf tools run NAME"),
		ValidArgsFunction: cmdutil.FirstArgs(1, cmdutil.CompleteTools(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			opts.HasInput = cmd.Flags().Changed("input")
			return dispatch(cmd.Context(), runF, opts, runRun)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.Args, "arg", nil, "argument `KEY=VALUE`, converted by the parameter's type (repeatable)")
	fl.StringVar(&opts.ArgsJSON, "args-json", "", "all arguments as one JSON `OBJECT`")
	fl.StringVar(&opts.Input, "input", "", "the tool's input `TEXT`; - reads standard input")
	fl.StringVar(&opts.Workflow, "workflow", "", "run with the tools and policy of the workflow `FILE`")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// RunResult is the JSON object `awf tools run` prints.
type RunResult struct {
	RunID      string `json:"run_id"` // the audit log's run id for this call
	Tool       string `json:"tool"`
	Status     string `json:"status"` // success, error or denied
	Output     string `json:"output"`
	Data       any    `json:"data,omitempty"`
	Error      string `json:"error,omitempty"`
	Approval   string `json:"approval,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	Truncated  bool   `json:"truncated,omitempty"`
	Cached     bool   `json:"cached,omitempty"`
}

func runRun(ctx context.Context, opts *RunOptions) error {
	input, err := readInput(opts)
	if err != nil {
		return err
	}
	set, wf, err := toolSet(opts.Factory, opts.IO, opts.Workflow)
	if err != nil {
		return err
	}
	e, err := set.Registry.Lookup(opts.Name)
	if err != nil {
		return err
	}
	args, err := BuildArgs(e.Parameters, opts.Args, opts.ArgsJSON)
	if err != nil {
		return err
	}
	if errs, err := set.Validator.Validate(e.Parameters, args); err != nil {
		return fault.Wrap(fault.Invalid, fmt.Errorf("tool %s: %w", opts.Name, err))
	} else if len(errs) > 0 {
		return fault.New(fault.Usage, "invalid arguments for tool %s: %s", opts.Name, tool.FieldErrors(errs))
	}
	id := opts.NewID()
	res, callErr := set.Invoker.Invoke(ctx, ports.ToolRequest{RunID: id, Step: "awf-tools-run", CallID: "call_1",
		Name: opts.Name, Args: args, Input: input, Scope: scope(wf, opts.Factory.Environ, id, workDir())})
	out := RunResult{RunID: id, Tool: opts.Name, Status: "success", Output: res.Output, Data: res.Data,
		Error: res.Error, Approval: res.Approval, DurationMS: res.Duration.Milliseconds(),
		Truncated: res.Truncated, Cached: res.Cached}
	var err2 error
	switch {
	case res.Denied || fault.KindOf(callErr) == fault.Denied:
		out.Status = "denied"
		err2 = fault.New(fault.Denied, "tool %s was denied (%s): %s", opts.Name, orWord(res.Approval, "policy"), firstOf(res.Error, callErr))
	case callErr != nil:
		out.Status = "error"
		err2 = callErr
	case !res.Succeeded():
		out.Status = "error"
		err2 = fault.New(fault.Execution, "tool %s failed: %s", opts.Name, res.Error)
	}
	if opts.Output.JSON() {
		if err := cmdutil.WriteJSON(opts.IO.Out, out); err != nil {
			return err
		}
		return err2
	}
	if err := writeOutput(opts.IO.Out, res, opts.IO.IsStdoutTTY()); err != nil {
		return err
	}
	return err2
}

// readInput returns --input, reading standard input for "-".
func readInput(opts *RunOptions) (string, error) {
	if !opts.HasInput || opts.Input != "-" {
		return opts.Input, nil
	}
	data, err := io.ReadAll(io.LimitReader(opts.IO.In, MaxInput+1))
	if err != nil {
		return "", fault.Wrap(fault.System, fmt.Errorf("read standard input: %w", err))
	}
	if len(data) > MaxInput {
		return "", fault.New(fault.Usage, "--input -: standard input holds more than %d bytes", MaxInput)
	}
	return string(data), nil
}

// scope is the template scope command tools see, as in a run: the workflow's input
// defaults (a run would bind the inputs given), the environment, the workflow and run.
func scope(wf *workflow.Workflow, environ []string, id, workDir string) ports.Scope {
	inputs := map[string]any{}
	for _, in := range wf.Inputs {
		if in.HasDefault {
			inputs[in.Name] = in.Default
		}
	}
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return ports.Scope{
		"inputs":   inputs,
		"env":      env,
		"workflow": map[string]any{"name": wf.Name, "version": wf.Version, "description": wf.Description, "dir": wf.Dir},
		"run":      map[string]any{"id": id, "dir": workDir},
	}
}

// writeOutput prints a result's output (or its data as JSON), ending with a newline, escaped
// for a terminal (render.OutText).
func writeOutput(w io.Writer, res tool.Result, terminal bool) error {
	text := res.Output
	if text == "" && res.Data != nil {
		data, err := json.MarshalIndent(res.Data, "", "  ")
		if err != nil {
			return fault.Wrap(fault.System, err)
		}
		text = string(data)
	}
	if text == "" {
		return nil
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	_, err := io.WriteString(w, render.OutText(text, terminal))
	return err
}

func workDir() string {
	dir, _ := os.Getwd()
	return dir
}

func orWord(s, word string) string {
	if s == "" {
		return word
	}
	return s
}

func firstOf(msg string, err error) string {
	if msg == "" && err != nil {
		return err.Error()
	}
	return msg
}

// BuildArgs builds a call's arguments from --args-json (an object) and --arg KEY=VALUE pairs,
// converting each VALUE by the type its parameter declares in schema: a parameter accepting
// strings takes VALUE verbatim; integer, number, boolean and null are parsed; array and
// object are JSON. A pair without "=", a key given twice, a VALUE that fits none of the
// types, or a key the schema does not allow is a fault.Usage error.
func BuildArgs(schema json.RawMessage, pairs []string, argsJSON string) (map[string]any, error) {
	args := map[string]any{}
	if strings.TrimSpace(argsJSON) != "" {
		m, err := tool.DecodeArgs([]byte(argsJSON))
		if err != nil {
			return nil, fault.New(fault.Usage, "--args-json: %v", err)
		}
		args = m
	}
	props, closed := properties(schema)
	given := map[string]bool{}
	for _, p := range pairs {
		key, value, ok := strings.Cut(p, "=")
		if !ok || key == "" {
			return nil, fault.New(fault.Usage, "--arg %q: want KEY=VALUE", p)
		}
		if given[key] {
			return nil, fault.New(fault.Usage, "--arg %s is given twice", key)
		}
		if _, dup := args[key]; dup {
			return nil, fault.New(fault.Usage, "argument %s is given both in --args-json and --arg", key)
		}
		given[key] = true
		types, known := props[key]
		if !known && closed {
			names := make([]string, 0, len(props))
			for n := range props {
				names = append(names, n)
			}
			slices.Sort(names)
			msg := fmt.Sprintf("--arg %s: the tool has no parameter %q (parameters: %s)", key, key, strings.Join(names, ", "))
			if hint := workflow.DidYouMean(key, names); hint != "" {
				msg += "; " + hint
			}
			return nil, fault.New(fault.Usage, "%s", msg)
		}
		v, err := convertArg(value, types)
		if err != nil {
			return nil, fault.New(fault.Usage, "--arg %s: %v", key, err)
		}
		args[key] = v
	}
	return args, nil
}

// properties reads the declared types of a schema's top-level properties, and whether the
// schema refuses other properties (additionalProperties: false).
func properties(schema json.RawMessage) (map[string][]string, bool) {
	var s struct {
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
		AdditionalProperties json.RawMessage `json:"additionalProperties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil, false
	}
	out := make(map[string][]string, len(s.Properties))
	for name, p := range s.Properties {
		var one string
		var many []string
		switch {
		case json.Unmarshal(p.Type, &one) == nil:
			out[name] = []string{one}
		case json.Unmarshal(p.Type, &many) == nil:
			out[name] = many
		default:
			out[name] = nil
		}
	}
	return out, strings.TrimSpace(string(s.AdditionalProperties)) == "false"
}

// convertArg reads a command-line value as the first declared type it fits. No declared
// type, or one accepting strings, keeps the text as it is.
func convertArg(value string, types []string) (any, error) {
	if len(types) == 0 || slices.Contains(types, "string") {
		return value, nil
	}
	for _, t := range types {
		switch t {
		case "integer", "number":
			if v, err := tool.DecodeJSON([]byte(value)); err == nil {
				if n, ok := v.(json.Number); ok {
					if t == "integer" && !isInteger(n) {
						continue
					}
					return n, nil
				}
			}
		case "boolean":
			switch value {
			case "true":
				return true, nil
			case "false":
				return false, nil
			}
		case "null":
			if value == "null" {
				return nil, nil
			}
		case "array", "object":
			v, err := tool.DecodeJSON([]byte(value))
			if err != nil {
				continue
			}
			if _, ok := v.([]any); ok && t == "array" {
				return v, nil
			}
			if _, ok := v.(map[string]any); ok && t == "object" {
				return v, nil
			}
		}
	}
	return nil, fmt.Errorf("%q is not %s", value, typeWords(types))
}

// isInteger reports whether a JSON number has no fractional part (1.0 counts, as in JSON
// Schema).
func isInteger(n json.Number) bool {
	f, ok := new(big.Float).SetString(n.String())
	return ok && f.IsInt()
}

func typeWords(types []string) string {
	words := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "array", "object":
			words[i] = "a JSON " + t
		case "integer":
			words[i] = "an integer"
		default:
			words[i] = "a " + t
		}
	}
	return strings.Join(words, " or ")
}
