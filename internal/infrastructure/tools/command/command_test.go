package command_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/process"
	"github.com/awf-dev/awf/internal/infrastructure/templater"
	"github.com/awf-dev/awf/internal/infrastructure/tools/command"
)

// hostile are values a model or an input might send to break out of a command.
var hostile = []struct{ name, value string }{
	{"single quote", `it's`},
	{"double quotes", `say "hi"`},
	{"semicolon", `x; touch pwned`},
	{"and", `x && touch pwned`},
	{"pipe", `x | tee pwned`},
	{"command substitution", `$(touch pwned)`},
	{"backticks", "`touch pwned`"},
	{"variable", `$HOME ${IFS} $AWF_T1`},
	{"newline", "a\ntouch pwned\n"},
	{"carriage return", "a\rb"},
	{"option", "--output=pwned"},
	{"short option", "-rf"},
	{"glob", `* ?.go [a-z]`},
	{"brace expansion", `{a,b}`},
	{"tilde", `~root`},
	{"backslash", `a\`},
	{"redirect", `> pwned`},
	{"empty", ``},
	{"spaces", `  two  spaces  `},
	{"unicode", "naïve — 日本 \u200b"},
	{"history", `!!`},
	{"heredoc", "<<EOF\ntouch pwned\nEOF"},
}

func exe(t *testing.T) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func quoted(t *testing.T, s string) string {
	t.Helper()
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func config(t *testing.T) command.Config {
	return command.Config{Process: process.New(process.Config{}), Templater: templater.New(), Dir: t.TempDir(),
		Scope: ports.Scope{"inputs": map[string]any{"greeting": "hello"}}}
}

func argvOf(t *testing.T, res tool.Result) []string {
	t.Helper()
	if !res.Succeeded() {
		t.Fatalf("result = %+v, want success", res)
	}
	var argv []string
	if err := json.Unmarshal([]byte(res.Output), &argv); err != nil {
		t.Fatalf("output %q: %v", res.Output, err)
	}
	return argv
}

func noPwned(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t.Errorf("a value created %s in the working directory", e.Name())
	}
}

// TestTemplateHostileValues runs hostile values through the real templater and process
// runner: the program receives each value verbatim as one argument.
func TestTemplateHostileValues(t *testing.T) {
	cfg := config(t)
	spec := workflow.ToolSpec{Name: "probe", Command: quoted(t, exe(t)) + " " + argvFlag + " -- {{args.a}} x{{args.b}}y {{inputs.greeting}}",
		Parameters: []workflow.Param{{Name: "a", Type: workflow.TypeString, Required: true}, {Name: "b", Type: workflow.TypeString, Required: true}}}
	tl, err := command.New(spec, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			res := tl.Execute(t.Context(), tool.Invocation{Args: map[string]any{"a": h.value, "b": h.value}})
			want := []string{"--", h.value, "x" + h.value + "y", "hello"}
			if diff := cmp.Diff(want, argvOf(t, res)); diff != "" {
				t.Errorf("argv for %q (-want +got):\n%s", h.value, diff)
			}
		})
	}
	noPwned(t, cfg.Dir)
}

// TestTemplateOptionInjection: a value from the model that starts an argument with no "--"
// before it, and would be read as an option, is refused before anything runs; a number, a
// value inside a word, or one after "--" is not.
func TestTemplateOptionInjection(t *testing.T) {
	cfg := config(t)
	spec := workflow.ToolSpec{Name: "probe", Command: quoted(t, exe(t)) + " " + argvFlag + " {{args.a}} x{{args.a}} -- {{args.a}}",
		Parameters: []workflow.Param{{Name: "a", Type: workflow.TypeString, Required: true}}}
	tl, err := command.New(spec, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"--output=pwned", "-rf", "--", "-x5", "-.5."} {
		res := tl.Execute(t.Context(), tool.Invocation{Args: map[string]any{"a": v}})
		if res.Succeeded() || !res.Denied || res.Refusal == nil || res.Refusal.Rule != command.RuleOptionInjection {
			t.Errorf("value %q: result %+v, want refused as option injection", v, res)
		}
	}
	for _, v := range []string{"-5", "-1.5", "-", "a-b", ""} {
		res := tl.Execute(t.Context(), tool.Invocation{Args: map[string]any{"a": v}})
		if diff := cmp.Diff([]string{v, "x" + v, "--", v}, argvOf(t, res)); diff != "" {
			t.Errorf("value %q (-want +got):\n%s", v, diff)
		}
	}
	noPwned(t, cfg.Dir)
}

// TestTemplateLargeValue binds a 200 KB value: bound as a variable, it is not limited by the
// kernel's argument size, and a builtin prints it back byte for byte.
func TestTemplateLargeValue(t *testing.T) {
	big := strings.Repeat("a'b\"c$(d)`e`;\n", 200<<10/14+1)[:200<<10]
	tl, err := command.New(workflow.ToolSpec{Name: "big", Command: `printf '%s\0' {{args.v}} end`,
		Parameters: []workflow.Param{{Name: "v", Required: true}}}, config(t))
	if err != nil {
		t.Fatal(err)
	}
	res := tl.Execute(t.Context(), tool.Invocation{Args: map[string]any{"v": big}})
	if !res.Succeeded() || res.Output != big+"\x00end\x00" {
		t.Errorf("200 KB value came back as %d bytes (%s), want %d verbatim", len(res.Output), res.Error, len(big))
	}
}

func TestTemplateTool(t *testing.T) {
	cfg := config(t)
	spec := workflow.ToolSpec{Name: "greet", Description: "greets", Command: `printf '%s %s %s|' {{inputs.greeting}} {{args.who}} {{args.times}}; cat; exit {{args.code}}`,
		Parameters: []workflow.Param{
			{Name: "who", Type: workflow.TypeString, Default: "world"},
			{Name: "times", Type: workflow.TypeInteger, Required: true},
			{Name: "code", Type: workflow.TypeInteger, Default: 0, Enum: []any{0, 3}},
		}, Cache: true, ReadOnly: true, Pos: workflow.Pos{File: "wf.yaml", Line: 7, Col: 5}}
	tl, err := command.New(spec, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"additionalProperties":false,"properties":{"code":{"default":0,"enum":[0,3],"type":"integer"},` +
		`"times":{"type":"integer"},"who":{"default":"world","type":"string"}},"required":["times"],"type":"object"}`
	if got := string(tl.Parameters()); got != want {
		t.Errorf("Parameters() =\n%s\nwant\n%s", got, want)
	}
	if n := tl.Annotations(); !n.Cacheable || !n.ReadOnly || n.Source != "wf.yaml" || tl.Pos().Line != 7 {
		t.Errorf("Annotations() = %+v, Pos() = %v", n, tl.Pos())
	}
	res := tl.Execute(t.Context(), tool.Invocation{Args: map[string]any{"times": json.Number("2")}, Input: "from stdin"})
	if res.Output != "hello world 2|from stdin" || !res.Succeeded() {
		t.Errorf("Execute = %+v", res)
	}
	// The call's scope wins over the configured one.
	res = tl.Execute(t.Context(), tool.Invocation{Args: map[string]any{"times": json.Number("1"), "who": "you"},
		Scope: map[string]any{"inputs": map[string]any{"greeting": "hi"}}})
	if res.Output != "hi you 1|" {
		t.Errorf("Execute with scope = %q", res.Output)
	}
	res = tl.Execute(t.Context(), tool.Invocation{Args: map[string]any{"times": json.Number("1"), "code": json.Number("3")}})
	if res.Succeeded() || res.Output != "hello world 1|" || !strings.Contains(res.Error, "greet: exit status 3") {
		t.Errorf("Execute(exit 3) = %+v, want an error result with the output", res)
	}
	res = tl.Execute(t.Context(), tool.Invocation{Args: map[string]any{}})
	if res.Succeeded() || !strings.Contains(res.Error, "args.times") {
		t.Errorf("Execute without times = %+v, want an error naming args.times", res)
	}
	res = tl.Execute(t.Context(), tool.Invocation{Args: map[string]any{"times": json.Number("1"), "who": "a\x00b"}})
	if res.Succeeded() || !strings.Contains(res.Error, "NUL") {
		t.Errorf("Execute(NUL) = %+v, want a clear NUL error", res)
	}
	if got := tl.Meta(map[string]any{"who": "x", "times": 2}); got != `greet times=2 who="x"` {
		t.Errorf("Meta = %q", got)
	}
}

func TestNewErrors(t *testing.T) {
	cfg := config(t)
	tests := []struct {
		name string
		spec workflow.ToolSpec
		want string
	}{
		{"no command", workflow.ToolSpec{Name: "x"}, `tool "x" has no command`},
		{"bad type", workflow.ToolSpec{Name: "x", Command: "true", Parameters: []workflow.Param{{Name: "p", Type: "strng"}}},
			`tool "x": parameter "p": unknown type "strng"`},
		{"duplicate", workflow.ToolSpec{Name: "x", Command: "true", Parameters: []workflow.Param{{Name: "p"}, {Name: "p"}}},
			`parameter "p" is declared twice`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := command.New(tc.spec, cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := command.New(workflow.ToolSpec{Name: "x", Command: "true"}, command.Config{}); err == nil {
		t.Error("New without a process runner succeeded")
	}
}

func TestSource(t *testing.T) {
	cfg := config(t)
	pos := func(line int) workflow.Pos { return workflow.Pos{File: "wf.yaml", Line: line, Col: 5} }
	src := command.Source{Config: cfg, Specs: []workflow.ToolSpec{
		{Name: "search_code", Command: "rg -- {{args.pattern}}", Parameters: []workflow.Param{{Name: "pattern", Required: true}}, Pos: pos(1)},
		{Name: "read_file", Builtin: true, Description: "read, restricted", Pos: pos(2)},
		{Name: "summarize", Use: "official/summarize@^1.0.0", Pos: pos(3)},
		{Name: "broken", Use: "official/", Pos: pos(4)},
		{Name: "empty", Pos: pos(5)},
	}}
	if src.Level() != tool.LevelWorkflow {
		t.Errorf("Level() = %v", src.Level())
	}
	set, err := src.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Tools) != 1 || set.Tools[0].Name() != "search_code" {
		t.Errorf("Tools = %v", set.Tools)
	}
	wantAliases := []tool.Alias{
		{Name: "read_file", Target: "read_file", Level: tool.LevelBuiltin, Description: "read, restricted", Source: "wf.yaml", Pos: pos(2)},
		{Name: "summarize", Target: "official/summarize", Constraint: "^1.0.0", Source: "wf.yaml", Pos: pos(3)},
	}
	if diff := cmp.Diff(wantAliases, set.Aliases); diff != "" {
		t.Errorf("Aliases (-want +got):\n%s", diff)
	}
	var probs []string
	for _, p := range set.Problems {
		probs = append(probs, p.String())
	}
	wantProbs := []string{
		`wf.yaml:4:5: tool "broken": use: tool reference "official/": bad name "" (letters, digits, _ and -)`,
		`wf.yaml:5:5: tool "empty" needs one of command, use or builtin: true`,
	}
	if diff := cmp.Diff(wantProbs, probs); diff != "" {
		t.Errorf("Problems (-want +got):\n%s", diff)
	}
	restricted := &tool.Func{ToolName: "read_file"}
	src.Builtin = func(workflow.ToolSpec) (tool.Tool, error) { return restricted, nil }
	set, _ = src.Load()
	if len(set.Tools) != 1 || len(set.Refined) != 1 || set.Refined[0] != restricted {
		t.Errorf("with Builtin, Tools = %v, Refined = %v; want the restricted built-in refined", set.Tools, set.Refined)
	}
}
