package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// located is a tool defined in a file.
type located struct {
	*tool.Func
	pos workflow.Pos
}

func (l located) Pos() workflow.Pos { return l.pos }

func at(t *tool.Func, file string, line int) tool.Tool {
	return located{t, workflow.Pos{File: file, Line: line, Col: 1}}
}

func TestResolutionOrder(t *testing.T) {
	r := bareRegistry(t, registry.Config{})
	probs, err := r.Load(
		static(tool.LevelBuiltin, tools(echo("grep", "builtin:"), echo("shell", "builtin:"), echo("only", "builtin:"))),
		static(tool.LevelUser, tools(at(echo("grep", "user:"), "user/grep.tool", 1), at(echo("fmt", "user:"), "user/fmt.tool", 1))),
		static(tool.LevelProject, tools(at(echo("grep", "project:"), ".awf/wrapped-tools/grep.tool", 3))),
		static(tool.LevelWorkflow, tools(at(echo("fmt", "workflow:"), "wf.yaml", 9))),
	)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := []string{
		".awf/wrapped-tools/grep.tool:3:1: warning: tool \"grep\" (project) shadows the builtin tool \"grep\" defined at builtin",
		".awf/wrapped-tools/grep.tool:3:1: warning: tool \"grep\" (project) shadows the user tool \"grep\" defined at user/grep.tool:1",
		"user/grep.tool:1:1: warning: tool \"grep\" (user) shadows the builtin tool \"grep\" defined at builtin",
		"wf.yaml:9:1: warning: tool \"fmt\" (workflow) shadows the user tool \"fmt\" defined at user/fmt.tool:1",
	}
	if diff := cmp.Diff(want, strings.Split(problemsText(probs), "\n")); diff != "" {
		t.Errorf("Load warnings (-want +got):\n%s", diff)
	}
	for name, want := range map[string]string{"grep": "project:x", "fmt": "workflow:x", "only": "builtin:x"} {
		if got := r.Call(t.Context(), name, args("text", "x"), registry.CallOptions{}); got.Data != want {
			t.Errorf("Call(%s) = %v (%s), want %q", name, got.Data, got.Message, want)
		}
	}
	defs := r.Definitions("grep")
	if len(defs) != 3 || defs[0].Level != tool.LevelProject || defs[0].Source != ".awf/wrapped-tools/grep.tool" ||
		len(defs[0].Shadows) != 2 {
		t.Errorf("Definitions(grep) = %+v", defs)
	}
	// Unregistering the visible definition uncovers the next one down.
	r.Unregister("grep")
	if got := r.Call(t.Context(), "grep", args("text", "x"), registry.CallOptions{}); got.Data != "user:x" {
		t.Errorf("after Unregister, Call(grep) = %v", got.Data)
	}
}

func TestSameLevelCollision(t *testing.T) {
	r := bareRegistry(t, registry.Config{})
	probs, err := r.Load(static(tool.LevelProject, tool.Set{
		Tools:     []tool.Tool{at(echo("lint", ""), ".awf/wrapped-tools/lint.tool", 2)},
		Manifests: []*tool.Manifest{manifest("lint", tool.MetaStep{Tool: "x", OutputVar: "o"})},
	}))
	want := `lint.yaml:1:1: tool "lint" is defined twice at the project level: here and at .awf/wrapped-tools/lint.tool:2`
	if err == nil || fault.KindOf(err) != fault.Invalid || problemsText(probs) != want {
		t.Errorf("Load(same name twice) = %q, %v; want %q", problemsText(probs), err, want)
	}
	if got := r.Definitions("lint"); len(got) != 1 || got[0].Kind != registry.KindTool {
		t.Errorf("the first definition should stay: %+v", got)
	}
}

// wrappable is a stand-in for the shell tool: it wraps command templates.
type wrappable struct{ *tool.Func }

func (w wrappable) Wrap(spec tool.WrapSpec) (tool.Tool, error) {
	if !strings.Contains(spec.Command, "{arguments}") {
		return nil, errors.New("@command has no {arguments}")
	}
	return &tool.Func{ToolName: spec.Name, Desc: spec.Description, Params: tool.ObjectSchema(spec.Params),
		Fn: func(_ context.Context, c tool.Invocation) tool.Result {
			return tool.OK(fmt.Sprint(strings.Replace(spec.Command, "{arguments}", fmt.Sprint(c.Args["arguments"]), 1)))
		}}, nil
}

func TestAliasesAndWrapped(t *testing.T) {
	shell := wrappable{echo("shell", "$ ")}
	r := bareRegistry(t, registry.Config{})
	arguments := []tool.Param{{Name: "arguments", Type: "array<string>", Required: true}}
	probs, err := r.Load(
		static(tool.LevelBuiltin, tool.Set{Tools: []tool.Tool{shell, echo("read_file", "read:")},
			Aliases: []tool.Alias{{Name: "run_command", Target: "shell", Source: "builtin"}}}),
		static(tool.LevelProject, tool.Set{
			Aliases: []tool.Alias{
				{Name: "Read", Target: "read_file", Pos: workflow.Pos{File: "Read.tool", Line: 1, Col: 1}},
				{Name: "R", Target: "Read", Pos: workflow.Pos{File: "R.tool", Line: 1, Col: 1}},
				{Name: "Reed", Target: "read_fil", Pos: workflow.Pos{File: "Reed.tool", Line: 1, Col: 1}},
				{Name: "loop1", Target: "loop2", Pos: workflow.Pos{File: "loop1.tool", Line: 1, Col: 1}},
				{Name: "loop2", Target: "loop1", Pos: workflow.Pos{File: "loop2.tool", Line: 1, Col: 1}},
			},
			Wrapped: []tool.WrapSpec{
				{Name: "glob", Wraps: "run_command", Command: "find {arguments} -type f", Params: arguments,
					Description: "find files", Pos: workflow.Pos{File: "glob.tool", Line: 4, Col: 1}},
				{Name: "fetch", Wraps: "read_file", Command: "x {arguments}", Params: arguments, Pos: workflow.Pos{File: "fetch.tool", Line: 4, Col: 1}},
				{Name: "bad", Wraps: "shell", Command: "ls", Pos: workflow.Pos{File: "bad.tool", Line: 4, Col: 1}},
			},
		}),
		static(tool.LevelWorkflow, tool.Set{Aliases: []tool.Alias{{Name: "read_file", Target: "read_file", Description: "restricted read"}}}),
	)
	got := problemsText(probs)
	for _, frag := range []string{
		`Reed.tool:1:1: alias "Reed": unknown tool "read_fil" (did you mean "read_file"?)`,
		`alias cycle: loop1 -> loop2 -> loop1`,
		`bad.tool:4:1: wrapped tool "bad": @command has no {arguments}`,
		`fetch.tool:4:1: wrapped tool "fetch": tool "read_file" cannot be wrapped with a @command (wrap run_command or shell)`,
	} {
		if !strings.Contains(got, frag) {
			t.Errorf("Load problems lack %q:\n%s", frag, got)
		}
	}
	if strings.Contains(got, "shadows") {
		t.Errorf("an alias refining its own name shadows nothing:\n%s", got)
	}
	if err == nil {
		t.Error("Load returned no error for bad definitions")
	}
	calls := []struct {
		name string
		args map[string]any
		want any
	}{
		{"run_command", args("text", "ls"), "$ ls"},
		{"Read", args("text", "a.go"), "read:a.go"},
		{"R", args("text", "b.go"), "read:b.go"},
		{"glob", args("arguments", []any{".", "-name", "*.go"}), "find [. -name *.go] -type f"},
	}
	for _, c := range calls {
		if got := r.Call(t.Context(), c.name, c.args, registry.CallOptions{}); got.Data != c.want {
			t.Errorf("Call(%s) = %v (%s), want %v", c.name, got.Data, got.Message, c.want)
		}
	}
	if got := r.Call(t.Context(), "glob", args("arguments", "."), registry.CallOptions{}); got.Status != tool.OutcomeValidationError ||
		got.Errors[0].String() != "$.arguments: want array, got string" {
		t.Errorf("Call(glob, string) = %s %v", got.Status, got.Errors)
	}
	for _, gone := range []string{"Reed", "loop1", "loop2", "fetch", "bad"} {
		if r.Contains(gone) {
			t.Errorf("broken definition %s is registered", gone)
		}
	}
	e, err := r.Lookup("read_file")
	if err != nil || e.Kind != registry.KindAlias || e.Description != "restricted read" || e.Level != tool.LevelWorkflow {
		t.Errorf("Lookup(read_file) = %+v, %v", e, err)
	}
	var params map[string]any
	_ = json.Unmarshal(e.Parameters, &params)
	if params["properties"] == nil {
		t.Errorf("an alias has its target's parameters, got %s", e.Parameters)
	}
}

// TestBuiltinEntry: a workflow's `builtin: true` entry means the built-in, even when a
// project tool has the same name.
func TestBuiltinEntry(t *testing.T) {
	r := newRegistry(t,
		static(tool.LevelBuiltin, tools(echo("grep", "builtin:"))),
		static(tool.LevelProject, tools(echo("grep", "project:"))),
		static(tool.LevelWorkflow, tool.Set{Aliases: []tool.Alias{{Name: "grep", Target: "grep", Level: tool.LevelBuiltin}}}))
	if got := r.Call(t.Context(), "grep", args("text", "x"), registry.CallOptions{}); got.Data != "builtin:x" {
		t.Errorf("Call(grep) = %v %q, want the built-in", got.Data, got.Message)
	}
	r2 := bareRegistry(t, registry.Config{})
	probs, err := r2.Load(static(tool.LevelBuiltin, tools(echo("grep", ""))),
		static(tool.LevelWorkflow, tool.Set{Aliases: []tool.Alias{{Name: "gerp", Target: "gerp", Level: tool.LevelBuiltin,
			Pos: workflow.Pos{File: "wf.yaml", Line: 3, Col: 5}}}}))
	want := `wf.yaml:3:5: alias "gerp": there is no builtin tool "gerp" (did you mean "grep"?)`
	if err == nil || problemsText(probs) != want {
		t.Errorf("Load(unknown builtin) = %q, want %q", problemsText(probs), want)
	}
}

func TestEntryJSON(t *testing.T) {
	r := newRegistry(t, static(tool.LevelProject, tools(at(echo("echo", ""), "e.tool", 2))))
	e, err := r.Lookup("echo")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"echo","ref":"echo","kind":"tool","level":"project","source":"e.tool","description":"echo ",` +
		`"parameters":{"type":"object","properties":{"text":{"type":"string"}},"additionalProperties":false}}`
	if string(b) != want {
		t.Errorf("json = %s\nwant   %s", b, want)
	}
}

// TestRefinedBuiltinShadowsNothing: a workflow's narrowed built-in (builtin: true with
// restrictions) replaces the built-in on purpose and is not reported; another tool of a
// built-in's name at the workflow level is, and a refined tool over a non-built-in is too.
func TestRefinedBuiltinShadowsNothing(t *testing.T) {
	r := bareRegistry(t, registry.Config{})
	probs, err := r.Load(
		static(tool.LevelBuiltin, tool.Set{Tools: []tool.Tool{echo("read_file", "read:"), echo("grep", "grep:")}}),
		static(tool.LevelUser, tool.Set{Tools: []tool.Tool{echo("fmt", "user fmt:")}}),
		static(tool.LevelWorkflow, tool.Set{
			Refined: []tool.Tool{echo("read_file", "narrow read:"), echo("fmt", "narrow fmt:")},
			Tools:   []tool.Tool{echo("grep", "my grep:")},
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	got := problemsText(probs)
	if strings.Contains(got, `"read_file"`) {
		t.Errorf("the refined read_file is reported:\n%s", got)
	}
	for _, want := range []string{`tool "grep" (workflow) shadows the builtin tool "grep"`, `tool "fmt" (workflow) shadows the user tool "fmt"`} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if res := r.Call(t.Context(), "read_file", map[string]any{}, registry.CallOptions{}); !strings.HasPrefix(fmt.Sprint(res.Data), "narrow read:") {
		t.Errorf("read_file resolves to %+v; want the refined tool", res)
	}
}

// TestUnknownToolHintFollowsChanges: the names an unknown reference is compared with are
// kept between references, and dropped when a tool comes or goes.
func TestUnknownToolHintFollowsChanges(t *testing.T) {
	r := newRegistry(t)
	describe := func(name string) string {
		_, err := r.Describe(context.Background(), ports.ToolQuery{Names: []string{name}})
		if err == nil {
			return ""
		}
		return err.Error()
	}
	if err := r.Register(echo("alpha", "a:")); err != nil {
		t.Fatal(err)
	}
	if got := describe("alpah"); !strings.Contains(got, `did you mean "alpha"?`) {
		t.Fatalf("alpah: %q", got)
	}
	if err := r.Register(echo("bravo", "b:")); err != nil {
		t.Fatal(err)
	}
	if got := describe("bravvo"); !strings.Contains(got, `did you mean "bravo"?`) {
		t.Errorf("after registering bravo, bravvo: %q", got)
	}
	r.Unregister("bravo")
	if got := describe("bravvo"); strings.Contains(got, "did you mean") {
		t.Errorf("after unregistering bravo, bravvo: %q", got)
	}
	// A name defined at two levels stays a hint until both definitions are gone.
	if _, err := r.Load(static(tool.LevelProject, tools(echo("alpha", "project:")))); err != nil {
		t.Fatal(err)
	}
	describe("alpah")
	r.Unregister("alpha")
	if got := describe("alpah"); !strings.Contains(got, `did you mean "alpha"?`) {
		t.Errorf("with alpha still built in, alpah: %q", got)
	}
	r.Unregister("alpha")
	if got := describe("alpah"); strings.Contains(got, "did you mean") {
		t.Errorf("with no alpha left, alpah: %q", got)
	}
}
