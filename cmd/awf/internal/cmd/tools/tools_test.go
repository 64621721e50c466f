package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/bom/bomtest"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/manifest"
	"github.com/awf-dev/awf/internal/infrastructure/schema"
)

const testSchema = `{"type":"object","additionalProperties":false,"required":["text"],"properties":{
	"text":{"type":"string"},"count":{"type":"integer"},"ratio":{"type":"number"},"loud":{"type":"boolean"},
	"tags":{"type":"array","items":{"type":"string"}},"opts":{"type":"object"},"maybe":{"type":["integer","null"]},
	"any":{}}}`

func TestBuildArgs(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	tests := []struct {
		name     string
		pairs    []string
		argsJSON string
		want     map[string]any
		err      string
	}{
		{"strings verbatim", []string{"text=$(rm -rf /); `id` 'q' \"d\"\n--x"}, "",
			map[string]any{"text": "$(rm -rf /); `id` 'q' \"d\"\n--x"}, ""},
		{"value with =", []string{"text=a=b"}, "", map[string]any{"text": "a=b"}, ""},
		{"empty value", []string{"text="}, "", map[string]any{"text": ""}, ""},
		{"NUL and 200 KB kept", []string{"text=a\x00b" + big}, "", map[string]any{"text": "a\x00b" + big}, ""},
		{"a number-like string stays a string", []string{"text=5"}, "", map[string]any{"text": "5"}, ""},
		{"integer", []string{"count=12345678901234567890"}, "", map[string]any{"count": json.Number("12345678901234567890")}, ""},
		{"integer 1.0", []string{"count=1.0"}, "", map[string]any{"count": json.Number("1.0")}, ""},
		{"integer 1e3", []string{"count=1e3"}, "", map[string]any{"count": json.Number("1e3")}, ""},
		{"integer 1.5", []string{"count=1.5"}, "", nil, `"1.5" is not an integer`},
		{"integer true", []string{"count=true"}, "", nil, `"true" is not an integer`},
		{"number", []string{"ratio=-2.5e3"}, "", map[string]any{"ratio": json.Number("-2.5e3")}, ""},
		{"boolean", []string{"loud=false"}, "", map[string]any{"loud": false}, ""},
		{"boolean yes", []string{"loud=yes"}, "", nil, `"yes" is not a boolean`},
		{"array", []string{`tags=["a","b c"]`}, "", map[string]any{"tags": []any{"a", "b c"}}, ""},
		{"array not JSON", []string{"tags=a,b"}, "", nil, "is not a JSON array"},
		{"object", []string{`opts={"k":1}`}, "", map[string]any{"opts": map[string]any{"k": json.Number("1")}}, ""},
		{"object given an array", []string{`opts=[1]`}, "", nil, "is not a JSON object"},
		{"union null", []string{"maybe=null"}, "", map[string]any{"maybe": nil}, ""},
		{"union integer", []string{"maybe=3"}, "", map[string]any{"maybe": json.Number("3")}, ""},
		{"untyped stays text", []string{"any=[1]"}, "", map[string]any{"any": "[1]"}, ""},
		{"unknown key", []string{"txt=x"}, "", nil, `no parameter "txt"`},
		{"no =", []string{"text"}, "", nil, "want KEY=VALUE"},
		{"empty key", []string{"=x"}, "", nil, "want KEY=VALUE"},
		{"twice", []string{"text=a", "text=b"}, "", nil, "given twice"},
		{"args-json", nil, `{"text":"t","count":2}`, map[string]any{"text": "t", "count": json.Number("2")}, ""},
		{"args-json and arg", []string{"count=3"}, `{"text":"t"}`, map[string]any{"text": "t", "count": json.Number("3")}, ""},
		{"args-json and arg clash", []string{"text=u"}, `{"text":"t"}`, nil, "both in --args-json and --arg"},
		{"args-json array", nil, `[]`, nil, "must be a JSON object"},
		{"args-json invalid", nil, `{"text":`, nil, "not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := BuildArgs(json.RawMessage(testSchema), tc.pairs, tc.argsJSON)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || fault.KindOf(err) != fault.Usage {
					t.Fatalf("BuildArgs(%.60q) = %v, %v; want a usage error containing %q", tc.pairs, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("BuildArgs(%.60q) = %v", tc.pairs, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("BuildArgs(%.60q): -want +got\n%s", tc.pairs, diff)
			}
		})
	}
}

// fakeTools is a Factory whose tool set is a real registry holding an echo tool, a failing
// tool and (behind a denying stage) a forbidden tool.
func fakeTools(t *testing.T) (*cmdutil.Factory, *iostreams.IOStreams, func() (string, string)) {
	t.Helper()
	deny := func(next registry.Handler) registry.Handler {
		return func(ctx context.Context, c *registry.Call) tool.Result {
			if c.Request.Name == "forbidden" {
				c.Status = tool.OutcomeDenied
				return tool.Result{Status: tool.StatusError, Error: "denied by rule", Denied: true, Approval: ports.ByRule}
			}
			return next(ctx, c)
		}
	}
	reg, err := registry.New(registry.Config{Validator: schema.New(), Clock: portstest.NewFakeClock(time.Unix(0, 0)),
		Stages: []registry.Stage{deny}})
	if err != nil {
		t.Fatal(err)
	}
	echo := func(name string, fn func(tool.Invocation) tool.Result) tool.Tool {
		return &tool.Func{ToolName: name, Desc: name + " tool", Params: json.RawMessage(testSchema),
			Notes: tool.Annotations{Tags: []string{"test"}},
			Fn:    func(_ context.Context, c tool.Invocation) tool.Result { return fn(c) }}
	}
	for _, tl := range []tool.Tool{
		echo("echo", func(c tool.Invocation) tool.Result {
			return tool.OK(c.Args["text"].(string) + "|" + c.Input)
		}),
		echo("broken", func(tool.Invocation) tool.Result { return tool.Errorf("it broke") }),
		echo("forbidden", func(tool.Invocation) tool.Result { return tool.OK("ran") }),
	} {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	needy, probs := manifest.Decode("needy.yaml", []byte(
		"name: needy\ndescription: needs what is not there\ndependencies: [acme/missing@^1.0.0]\n"+
			"steps: [{type: tool, tool: echo, args: {text: hi}, output_var: o}]\n"))
	if len(probs.Errors()) > 0 {
		t.Fatal(probs)
	}
	if _, err := reg.Load(ports.StaticTools{At: tool.LevelProject, Set: tool.Set{Manifests: []*tool.Manifest{needy}}}); err != nil {
		t.Fatal(err)
	}
	ios, in, out, errOut := iostreams.Test()
	in.WriteString("from stdin")
	f := &cmdutil.Factory{IO: ios, Getenv: func(string) string { return "" }, Flags: &cmdutil.GlobalFlags{},
		Tools: func(*workflow.Workflow, string) (*cmdutil.Tools, error) {
			return &cmdutil.Tools{Registry: reg, Invoker: reg, Validator: schema.New()}, nil
		}}
	return f, ios, func() (string, string) { return out.String(), errOut.String() }
}

func TestRunRun(t *testing.T) {
	tests := []struct {
		name   string
		opts   RunOptions
		kind   fault.Kind
		status string
		out    string
	}{
		{"ok", RunOptions{Name: "echo", Args: []string{"text=hi"}, Input: "in", HasInput: true}, 0, "success", "hi|in"},
		{"stdin", RunOptions{Name: "echo", Args: []string{"text=hi"}, Input: "-", HasInput: true}, 0, "success", "hi|from stdin"},
		{"tool error", RunOptions{Name: "broken", Args: []string{"text=x"}}, fault.Execution, "error", ""},
		{"denied", RunOptions{Name: "forbidden", Args: []string{"text=x"}}, fault.Denied, "denied", ""},
		{"unknown", RunOptions{Name: "ecko"}, fault.Invalid, "", ""},
		{"invalid", RunOptions{Name: "echo", Args: []string{"count=1"}}, fault.Usage, "", ""},
	}
	for _, tc := range tests {
		for _, format := range []cmdutil.Format{cmdutil.FormatText, cmdutil.FormatJSON} {
			t.Run(tc.name+"/"+string(format), func(t *testing.T) {
				f, ios, output := fakeTools(t)
				opts := tc.opts
				opts.IO, opts.Factory, opts.Output, opts.NewID = ios, f, format, func() string { return "run-1" }
				err := runRun(t.Context(), &opts)
				if got := kindOf(err); got != tc.kind {
					t.Fatalf("runRun = %v (kind %v), want kind %v", err, got, tc.kind)
				}
				stdout, _ := output()
				if tc.status == "" {
					if stdout != "" {
						t.Errorf("stdout = %q, want nothing", stdout)
					}
					return
				}
				if !format.JSON() {
					if want := tc.out; want != "" && stdout != want+"\n" {
						t.Errorf("stdout = %q, want %q", stdout, want+"\n")
					}
					return
				}
				var res RunResult
				if err := json.Unmarshal([]byte(stdout), &res); err != nil {
					t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
				}
				if res.Status != tc.status || res.Output != tc.out || res.RunID != "run-1" || res.Tool != tc.opts.Name {
					t.Errorf("result = %+v, want status %s output %q", res, tc.status, tc.out)
				}
			})
		}
	}
}

func kindOf(err error) fault.Kind {
	if err == nil {
		return 0
	}
	return fault.KindOf(err)
}

func TestListShowSearch(t *testing.T) {
	f, ios, output := fakeTools(t)
	if err := runSearch(t.Context(), &SearchOptions{IO: ios, Factory: f, Query: "B", Output: cmdutil.FormatJSON}); err != nil {
		t.Fatal(err)
	}
	stdout, _ := output()
	var res struct {
		Tools []struct{ Name, Level string }
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if want := []string{"broken", "forbidden"}; !cmp.Equal(names, want) {
		t.Errorf("search B = %v, want %v", names, want)
	}

	f, ios, output = fakeTools(t)
	if err := runList(t.Context(), &ListOptions{IO: ios, Factory: f, Tags: []string{"test"}}); err != nil {
		t.Fatal(err)
	}
	stdout, _ = output()
	if lines := strings.Split(strings.TrimSpace(stdout), "\n"); len(lines) != 4 || !strings.HasPrefix(lines[0], "NAME") ||
		!strings.HasPrefix(lines[2], "echo ") || !strings.Contains(lines[2], "builtin") {
		t.Errorf("list table:\n%s", stdout)
	}

	f, ios, output = fakeTools(t)
	if err := runShow(t.Context(), &ShowOptions{IO: ios, Factory: f, Name: "echo"}); err != nil {
		t.Fatal(err)
	}
	stdout, _ = output()
	for _, want := range []string{"echo (tool, builtin)", "echo tool", "Parameters (JSON Schema):", `"additionalProperties": false`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, stdout)
		}
	}
	f, ios, _ = fakeTools(t)
	if err := runShow(t.Context(), &ShowOptions{IO: ios, Factory: f, Name: "nope"}); kindOf(err) != fault.Invalid {
		t.Errorf("show nope = %v, want an invalid error", err)
	}
}

func TestRunCheck(t *testing.T) {
	tests := []struct {
		target  string
		kind    fault.Kind
		missing []Shortage
	}{
		{"echo", 0, []Shortage{}},
		{"needy", fault.Invalid, []Shortage{{Tool: "needy", Dependency: "acme/missing@^1.0.0", Reason: "not installed",
			Install: "awf tools install --deps needy"}}},
		{"", fault.Invalid, []Shortage{{Tool: "needy", Dependency: "acme/missing@^1.0.0", Reason: "not installed",
			Install: "awf tools install --deps needy"}}},
		{"nope", fault.Invalid, nil},
	}
	for _, tc := range tests {
		t.Run(tc.target, func(t *testing.T) {
			f, ios, output := fakeTools(t)
			err := runCheck(t.Context(), &CheckOptions{IO: ios, Factory: f, Target: tc.target, Output: cmdutil.FormatJSON})
			if kindOf(err) != tc.kind {
				t.Fatalf("runCheck(%q) = %v, want kind %v", tc.target, err, tc.kind)
			}
			stdout, _ := output()
			if tc.missing == nil {
				if stdout != "" {
					t.Errorf("stdout = %q", stdout)
				}
				return
			}
			var res CheckResult
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.missing, res.Missing); diff != "" || res.OK != (len(tc.missing) == 0) {
				t.Errorf("missing (ok %v): -want +got\n%s", res.OK, diff)
			}
		})
	}
}

func TestRunParse(t *testing.T) {
	ios, in, out, _ := iostreams.Test()
	in.WriteString("Sure.\n<tool_call>{\"name\":\"grep\",\"arguments\":{\"pattern\":\"x\"}}</tool_call>")
	if err := runParse(t.Context(), &ParseOptions{IO: ios, Tools: []string{"grep"}}); err != nil {
		t.Fatal(err)
	}
	var res ParseResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Calls) != 1 || res.Calls[0].Name != "grep" || res.Content != "Sure." || res.Error != "" {
		t.Errorf("parse = %+v", res)
	}
	// Malformed: an error in the object, still exit 0; calls is [] not null.
	ios, in, out, _ = iostreams.Test()
	in.WriteString(`<tool_call>{"name":"grep","arguments":{'pattern': 1}}</tool_call>`)
	if err := runParse(t.Context(), &ParseOptions{IO: ios}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"calls": [],`) || !strings.Contains(out.String(), `"error": "toolparse:`) {
		t.Errorf("malformed output:\n%s", out)
	}
	if err := runParse(t.Context(), &ParseOptions{IO: ios, Schemas: "/no/such.json"}); kindOf(err) != fault.Usage {
		t.Errorf("missing --schemas file = %v, want a usage error", err)
	}
}

// TestFlags checks each verb's flags and arguments land in its options.
func TestFlags(t *testing.T) {
	tests := []struct {
		args []string
		want any
	}{
		{[]string{"list", "--tag", "a,b", "--tag", "c", "--search", "x", "--workflow", "w.yaml", "-o", "json"},
			&ListOptions{Tags: []string{"a", "b", "c"}, Search: "x", Workflow: "w.yaml", Output: "json"}},
		{[]string{"list", "--mcp", "--workflow", "w.yaml", "--search", "fs."}, &ListOptions{MCP: true, Workflow: "w.yaml", Search: "fs."}},
		{[]string{"show", "acme/x@^1"}, &ShowOptions{Name: "acme/x@^1"}},
		{[]string{"search", "gr", "--tag", "t", "--all-tags"}, &SearchOptions{Query: "gr", Tags: []string{"t"}, AllTags: true}},
		{[]string{"run", "grep", "--arg", "a=1,2", "--arg", "b=x=y", "--args-json", "{}", "--input", "-"},
			&RunOptions{Name: "grep", Args: []string{"a=1,2", "b=x=y"}, ArgsJSON: "{}", Input: "-", HasInput: true}},
		{[]string{"check", "wf.yaml"}, &CheckOptions{Target: "wf.yaml"}},
		{[]string{"install", "--deps", "acme/x@^1", "acme/y", "--registry", "r", "--dir", "d"},
			&InstallOptions{Refs: []string{"acme/x@^1", "acme/y"}, Deps: true, Registry: "r", Dir: "d"}},
		{[]string{"install", "acme/x"}, &InstallOptions{Refs: []string{"acme/x"}, Registry: "env-registry", Dir: "/data/awf/tools"}},
		{[]string{"index", "reg"}, &IndexOptions{Dir: "reg"}},
		{[]string{"parse", "--tools", "a,b", "--schemas", "s.json"}, &ParseOptions{Tools: []string{"a", "b"}, Schemas: "s.json"}},
		{[]string{"parse", "-o", "text"}, &ParseOptions{Text: true}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			env := map[string]string{RegistryEnv: "env-registry", "XDG_DATA_HOME": "/data"}
			f := &cmdutil.Factory{IO: ios, Getenv: func(k string) string { return env[k] }, Flags: &cmdutil.GlobalFlags{}}
			var got any
			cmd := NewCmdTools(f, func(_ context.Context, opts any) error { got = opts; return nil })
			cmd.SetArgs(tc.args)
			if err := cmd.ExecuteContext(t.Context()); err != nil {
				t.Fatal(err)
			}
			opt := cmp.FilterPath(func(p cmp.Path) bool {
				switch p.Last().String() {
				case ".IO", ".Factory", ".NewID":
					return true
				}
				return false
			}, cmp.Ignore())
			if diff := cmp.Diff(tc.want, got, opt); diff != "" {
				t.Errorf("options: -want +got\n%s", diff)
			}
		})
	}
}

func TestArgsErrors(t *testing.T) {
	for _, args := range [][]string{{"show"}, {"run"}, {"install"}, {"index"}, {"check", "a", "b"}, {"search", "a", "b"}, {"list", "x"},
		{"list", "--mcp"}, {"list", "--mcp", "--workflow", "w.yaml", "--tag", "a"}} {
		ios, _, _, _ := iostreams.Test()
		f := &cmdutil.Factory{IO: ios, Getenv: func(string) string { return "" }, Flags: &cmdutil.GlobalFlags{}}
		cmd := NewCmdTools(f, func(context.Context, any) error { return nil })
		cmd.SetArgs(args)
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		if err := cmd.ExecuteContext(t.Context()); kindOf(err) != fault.Usage {
			t.Errorf("awf tools %v = %v, want a usage error", args, err)
		}
	}
}

func TestIsWorkflowFile(t *testing.T) {
	for in, want := range map[string]bool{"wf.yaml": true, "a/b.YML": true, "file-report": false, "acme/greet@^1": false} {
		if got := isWorkflowFile(in); got != want {
			t.Errorf("isWorkflowFile(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestSummary(t *testing.T) {
	tests := []struct{ in, want string }{
		{"short", "short"},
		{"first line\nsecond", "first line"},
		{"  exactly 12 runes ", "exactly 12 …"},
		{"éééééééééééééé", "ééééééééééé…"},
	}
	for _, tc := range tests {
		if got := summary(tc.in, 12); got != tc.want {
			t.Errorf("summary(%q, 12) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A --schemas file saved with a byte order mark reads as without one; a UTF-16 one is refused
// with what to do.
func TestReadSchemasByteOrderMark(t *testing.T) {
	bomtest.TestFile(t, "schemas.json", []bomtest.Case{
		{Name: "valid", Doc: `{"echo": {"type": "object"}}`},
		{Name: "not an object", Doc: `[1]`, Err: "want a JSON object"},
	}, func(path string) (string, error) {
		got, err := readSchemas(path)
		return fmt.Sprintf("%s", got), err
	})
}
