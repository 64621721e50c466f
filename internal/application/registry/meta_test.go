package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// summarize and translate stand in for the seed 000 example's tools.
func textTools() tool.Set {
	summarize := &tool.Func{ToolName: "summarize",
		Params: tool.ObjectSchema([]tool.Param{{Name: "max_words", Type: "integer", Required: true}}),
		Fn: func(_ context.Context, c tool.Invocation) tool.Result {
			n, _ := c.Args["max_words"].(json.Number).Int64()
			words := strings.Fields(c.Input)
			return tool.OK(strings.Join(words[:min(int(n), len(words))], " "))
		}}
	translate := &tool.Func{ToolName: "translate",
		Params: tool.ObjectSchema([]tool.Param{{Name: "target_language", Type: "string", Required: true}}),
		Fn: func(_ context.Context, c tool.Invocation) tool.Result {
			return tool.OK(fmt.Sprintf("[%s] %s", c.Args["target_language"], strings.ToUpper(c.Input)))
		}}
	return tool.Set{Tools: []tool.Tool{summarize, translate}}
}

// summarizeAndTranslate is seed 000's example manifest.
func summarizeAndTranslate() *tool.Manifest {
	m := manifest("summarize-and-translate",
		tool.MetaStep{Tool: "summarize", Args: map[string]tool.StepArg{"max_words": tool.TextArg("{max}")}, OutputVar: "summary"},
		tool.MetaStep{Tool: "translate", Input: "{summary}", Args: map[string]tool.StepArg{"target_language": tool.TextArg("lang={language}")}, OutputVar: "translated"},
	)
	m.Arguments = []tool.Argument{
		{Flag: "--language", Variable: "language", Default: "Spanish", HasDefault: true},
		{Flag: "--max", Variable: "max", Type: "integer", Default: 3, HasDefault: true},
	}
	m.Output = "{translated} (from: {input})"
	return m
}

func TestMetaToolCallsTwoTools(t *testing.T) {
	set := textTools()
	set.Manifests = []*tool.Manifest{summarizeAndTranslate()}
	r := newRegistry(t, static(tool.LevelProject, set))
	got := r.Call(t.Context(), "summarize-and-translate", args("language", "French"), registry.CallOptions{Input: "one two three four five"})
	want := "[lang=French] ONE TWO THREE (from: one two three four five)"
	if got.Status != tool.OutcomeSuccess || got.Data != want {
		t.Fatalf("Call = %s %v %q, want %q", got.Status, got.Data, got.Message, want)
	}
	// Defaults apply; numbers given as numbers reach {max} as text and are converted back.
	got = r.Call(t.Context(), "summarize-and-translate", args("max", json.Number("1")), registry.CallOptions{Input: "alpha beta"})
	if got.Data != "[lang=Spanish] ALPHA (from: alpha beta)" {
		t.Errorf("Call with defaults = %v %q", got.Data, got.Message)
	}
	// The input may also come as an argument, as a model would give it.
	got = r.Call(t.Context(), "summarize-and-translate", args("input", "x y"), registry.CallOptions{})
	if got.Data != "[lang=Spanish] X Y (from: x y)" {
		t.Errorf("Call with input argument = %v %q", got.Data, got.Message)
	}
	got = r.Call(t.Context(), "summarize-and-translate", args("langauge", "German"), registry.CallOptions{})
	if got.Status != tool.OutcomeValidationError || !strings.Contains(got.Message, `$.langauge: unknown property (did you mean "language"?)`) {
		t.Errorf("Call with a misspelt argument = %s %q", got.Status, got.Message)
	}
}

func TestMetaToolStepFailure(t *testing.T) {
	set := textTools()
	m := manifest("broken",
		tool.MetaStep{Tool: "summarize", Args: map[string]tool.StepArg{"max_words": tool.TextArg("many")}, OutputVar: "s"},
	)
	set.Manifests = []*tool.Manifest{m, manifest("unbound", tool.MetaStep{Tool: "translate", Args: map[string]tool.StepArg{"target_language": tool.TextArg("{lang}")}, OutputVar: "t"})}
	r := newRegistry(t, static(tool.LevelProject, set))
	got := r.Call(t.Context(), "broken", nil, registry.CallOptions{Input: "a b"})
	want := `broken: step 1 (summarize) failed: invalid arguments for tool "summarize": $.max_words: want integer, got string`
	if got.Status != tool.OutcomeError || got.Message != want {
		t.Errorf("Call(broken) = %s %q, want %q", got.Status, got.Message, want)
	}
	got = r.Call(t.Context(), "unbound", nil, registry.CallOptions{})
	want = `unbound: steps[0].args.target_language: unknown variable {lang} (known: input)`
	if got.Message != want {
		t.Errorf("Call(unbound) = %q, want %q", got.Message, want)
	}
}

// chainOf builds manifests m1 -> m2 -> ... -> mN -> echo.
func chainOf(n int) []*tool.Manifest {
	var ms []*tool.Manifest
	for i := 1; i <= n; i++ {
		next := fmt.Sprintf("m%d", i+1)
		if i == n {
			next = "echo"
		}
		ms = append(ms, manifest(fmt.Sprintf("m%d", i), tool.MetaStep{Tool: next, OutputVar: "out"}))
	}
	return ms
}

func TestDepthLimit(t *testing.T) {
	r := bareRegistry(t, registry.Config{MaxDepth: 3})
	if _, err := r.Load(static(tool.LevelProject, tool.Set{Tools: []tool.Tool{echo("echo", "")}, Manifests: chainOf(4)})); err != nil {
		t.Fatal(err)
	}
	got := r.Call(t.Context(), "m2", nil, registry.CallOptions{Input: "deep enough"})
	if got.Data != "deep enough" {
		t.Errorf("Call(m2) = %v %q, want success within the limit", got.Data, got.Message)
	}
	got = r.Call(t.Context(), "m1", nil, registry.CallOptions{Input: "x"})
	want := "meta-tools nest deeper than the limit of 3: m1 -> m2 -> m3 -> m4 -> echo"
	if got.Status != tool.OutcomeError || !strings.Contains(got.Message, want) {
		t.Errorf("Call(m1) = %s %q, want it to contain %q", got.Status, got.Message, want)
	}
	if r2 := newRegistry(t, static(tool.LevelProject, tool.Set{Tools: []tool.Tool{echo("echo", "")}, Manifests: chainOf(10)})); r2.Call(t.Context(), "m1", nil, registry.CallOptions{}).Status != tool.OutcomeSuccess {
		t.Error("the default limit (10) should allow 10 nested meta-tools")
	}
}

func TestCycles(t *testing.T) {
	a := manifest("a", tool.MetaStep{Tool: "b", OutputVar: "o"})
	b := manifest("b", tool.MetaStep{Tool: "echo", OutputVar: "o1"}, tool.MetaStep{Tool: "c", OutputVar: "o2"})
	c := manifest("c", tool.MetaStep{Tool: "a", OutputVar: "o"})
	self := manifest("self", tool.MetaStep{Tool: "self", OutputVar: "o"})
	// A manifest calling its own name reaches the definition below it: no cycle.
	wrapper := manifest("echo", tool.MetaStep{Tool: "echo", OutputVar: "o"})
	wrapper.Output = "wrapped({o})"
	r := bareRegistry(t, registry.Config{})
	probs, err := r.Load(
		static(tool.LevelBuiltin, tools(echo("echo", ""))),
		static(tool.LevelProject, tool.Set{Manifests: []*tool.Manifest{a, b, c, wrapper}}),
		static(tool.LevelUser, tool.Set{Manifests: []*tool.Manifest{self}}),
	)
	if err == nil {
		t.Fatal("Load found no cycle")
	}
	got := problemsText(probs.Errors())
	want := "c.yaml:5:0: tool cycle: a -> b -> c -> a (a tool may not call itself, directly or through others)"
	if got != want {
		t.Errorf("Load errors =\n%s\nwant\n%s", got, want)
	}
	if out := r.Call(t.Context(), "echo", nil, registry.CallOptions{Input: "hi"}); out.Data != "wrapped(hi)" {
		t.Errorf("Call(echo wrapper) = %v %q", out.Data, out.Message)
	}
	if out := r.Call(t.Context(), "self", nil, registry.CallOptions{}); out.Status != tool.OutcomeError ||
		!strings.Contains(out.Message, `unknown tool "self"`) {
		t.Errorf("Call(self) = %s %q: a manifest's own name skips itself", out.Status, out.Message)
	}
}

func installed(owner, name, version string, steps ...tool.MetaStep) *tool.Manifest {
	m := manifest(name, steps...)
	m.Owner, m.Version = owner, version
	m.Path = fmt.Sprintf("installed/%s/%s/%s/config.yaml", owner, name, version)
	return m
}

func TestDependencies(t *testing.T) {
	pipeline := manifest("code-review",
		tool.MetaStep{Tool: "official/find-bugs", OutputVar: "bugs"},
		tool.MetaStep{Tool: "official/summarize@^1.0.0", Input: "{bugs}", OutputVar: "summary"},
	)
	pipeline.Dependencies = []tool.Dependency{{Ref: "official/find-bugs", Constraint: "^1.0.0"}, {Ref: "official/summarize", Constraint: "^1.0.0"}}
	tests := []struct {
		name      string
		installed []*tool.Manifest
		missing   []string
		call      string
	}{
		{"nothing installed", nil, []string{
			"tool code-review needs official/find-bugs@^1.0.0: not installed; install with: awf tools install --deps code-review",
			"tool code-review needs official/summarize@^1.0.0: not installed; install with: awf tools install --deps code-review",
		}, "tool code-review cannot run: missing official/find-bugs@^1.0.0 (not installed), official/summarize@^1.0.0 (not installed); nothing is installed automatically, install with: awf tools install --deps code-review"},
		{"out of range", []*tool.Manifest{
			installed("official", "find-bugs", "0.9.0", tool.MetaStep{Tool: "echo", OutputVar: "o"}),
			installed("official", "summarize", "1.4.0", tool.MetaStep{Tool: "echo", OutputVar: "o"}),
		}, []string{
			"tool code-review needs official/find-bugs@^1.0.0: no installed version satisfies ^1.0.0 (installed: 0.9.0); install with: awf tools install --deps code-review",
		}, "tool code-review cannot run: missing official/find-bugs@^1.0.0 (no installed version satisfies ^1.0.0 (installed: 0.9.0)); nothing is installed automatically, install with: awf tools install --deps code-review"},
		{"satisfied, highest matching version wins", []*tool.Manifest{
			installed("official", "find-bugs", "1.0.0", tool.MetaStep{Tool: "echo", OutputVar: "o"}),
			installed("official", "find-bugs", "1.2.0", tool.MetaStep{Tool: "echo", Input: "bugs in {input}", OutputVar: "o"}),
			installed("official", "find-bugs", "2.0.0", tool.MetaStep{Tool: "nope", OutputVar: "o"}),
			installed("official", "summarize", "1.4.0", tool.MetaStep{Tool: "echo", Input: "summary of {input}", OutputVar: "o"}),
		}, []string{
			"tool official/find-bugs@2.0.0 needs nope: unknown tool \"nope\"; define nope as a project or user tool (.awf/wrapped-tools/nope.tool, or .awf/tools/nope/config.yaml; see docs/tools.md); no registry provides bare names",
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRegistry(t,
				static(tool.LevelBuiltin, tools(echo("echo", ""))),
				static(tool.LevelProject, tool.Set{Manifests: []*tool.Manifest{pipeline}}),
				static(tool.LevelInstalled, tool.Set{Manifests: tc.installed}))
			missing, err := r.CheckDependencies()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range missing {
				got = append(got, m.String())
			}
			if diff := cmp.Diff(tc.missing, got); diff != "" {
				t.Errorf("CheckDependencies() (-want +got):\n%s", diff)
			}
			out := r.Call(t.Context(), "code-review", nil, registry.CallOptions{Input: "main.go"})
			switch {
			case tc.call != "" && out.Message != tc.call:
				t.Errorf("Call(code-review) = %q, want %q", out.Message, tc.call)
			case tc.call == "" && out.Data != "summary of bugs in main.go":
				t.Errorf("Call(code-review) = %v %q", out.Data, out.Message)
			}
		})
	}
}

func TestInstalledResolution(t *testing.T) {
	r := newRegistry(t,
		static(tool.LevelBuiltin, tools(echo("echo", ""))),
		static(tool.LevelInstalled, tool.Set{Manifests: []*tool.Manifest{
			installed("acme", "fmt", "1.0.0", tool.MetaStep{Tool: "echo", Input: "v1 {input}", OutputVar: "o"}),
			installed("acme", "fmt", "1.3.0", tool.MetaStep{Tool: "echo", Input: "v1.3 {input}", OutputVar: "o"}),
			installed("acme", "fmt", "2.0.0", tool.MetaStep{Tool: "echo", Input: "v2 {input}", OutputVar: "o"}),
			installed("other", "lint", "0.1.0", tool.MetaStep{Tool: "echo", OutputVar: "o"}),
			installed("third", "lint", "0.2.0", tool.MetaStep{Tool: "echo", OutputVar: "o"}),
		}}))
	tests := []struct{ ref, want string }{
		{"acme/fmt", "v2 x"},
		{"acme/fmt@^1.0.0", "v1.3 x"},
		{"acme/fmt@~1.0", "v1 x"},
		{"fmt", "v2 x"}, // a bare name no level defines falls back to the single installed owner
		{"acme/fmt@^3", "no installed version of acme/fmt satisfies ^3 (installed: 2.0.0, 1.3.0, 1.0.0); install one with: awf tools install acme/fmt@^3"},
		{"acme/nope", "tool acme/nope is not installed (install it with: awf tools install acme/nope)"},
		{"lint", `tool "lint" is ambiguous: installed as other/lint, third/lint; name one with owner/name`},
	}
	for _, tc := range tests {
		t.Run(tc.ref, func(t *testing.T) {
			got := r.Call(t.Context(), tc.ref, nil, registry.CallOptions{Input: "x"})
			if msg := fmt.Sprint(got.Data); msg != tc.want && got.Message != tc.want {
				t.Errorf("Call(%s) = %v %q, want %q", tc.ref, got.Data, got.Message, tc.want)
			}
		})
	}
	if names := r.ListNames(); !cmp.Equal(names, []string{"acme/fmt", "echo", "other/lint", "third/lint"}) {
		t.Errorf("ListNames() = %v", names)
	}
	if defs := r.Definitions("acme/fmt"); len(defs) != 3 || defs[0].Ref != "acme/fmt@2.0.0" {
		t.Errorf("Definitions(acme/fmt) = %+v", defs)
	}
}

func TestCaching(t *testing.T) {
	var pure, impure atomic.Int64
	imp := counter(&impure, false)
	imp.ToolName = "impure"
	cachedMeta := manifest("cached-meta", tool.MetaStep{Tool: "impure", OutputVar: "o"})
	cachedMeta.Cache = true
	r := newRegistry(t, static(tool.LevelBuiltin, tools(counter(&pure, true), imp)),
		static(tool.LevelProject, tool.Set{Manifests: []*tool.Manifest{cachedMeta}}))
	calls := []struct {
		tool, k string
		data    any
		cached  bool
	}{
		{"count", "a", "1", false},
		{"count", "a", "1", true},
		{"count", "b", "2", false},
		{"count", "a", "1", true},
		{"impure", "a", "1", false},
		{"impure", "a", "2", false},
		{"cached-meta", "", "3", false},
		{"cached-meta", "", "3", true},
	}
	for i, c := range calls {
		a := args("k", c.k)
		if c.k == "" {
			a = nil
		}
		got := r.Call(t.Context(), c.tool, a, registry.CallOptions{})
		if got.Data != c.data || got.Cached != c.cached {
			t.Errorf("call %d: Call(%s, %s) = %v cached=%v, want %v cached=%v", i, c.tool, c.k, got.Data, got.Cached, c.data, c.cached)
		}
	}
	// A new registry is a new run: nothing cached.
	r2 := newRegistry(t, static(tool.LevelBuiltin, tools(counter(&pure, true))))
	if got := r2.Call(t.Context(), "count", args("k", "a"), registry.CallOptions{}); got.Cached {
		t.Error("a new registry answered from another's cache")
	}
	res, _ := r.Invoke(t.Context(), ports.ToolRequest{Name: "count", Args: map[string]any{"k": "a"}})
	if !res.Cached {
		t.Error("Invoke did not mark the cached result")
	}
}

func TestPreflight(t *testing.T) {
	wf := &workflow.Workflow{Steps: []workflow.Step{
		{Name: "a", Type: workflow.StepTool, Tool: &workflow.ToolStep{Tool: "code-review"}},
		{Name: "b", Type: workflow.StepAgent, Agent: &workflow.AgentStep{Tools: []string{"echo", "ecoh"}}},
		{Name: "c", Type: workflow.StepParallel, Parallel: &workflow.ParallelStep{Steps: []workflow.Step{
			{Name: "d", Type: workflow.StepTool, Tool: &workflow.ToolStep{Tool: "{{ inputs.tool }}"}},
			{Name: "e", Type: workflow.StepTool, Tool: &workflow.ToolStep{Tool: "echo"}},
		}}},
	}}
	names := registry.WorkflowTools(wf)
	if !cmp.Equal(names, []string{"code-review", "echo", "ecoh"}) {
		t.Errorf("WorkflowTools = %v", names)
	}
	review := manifest("code-review", tool.MetaStep{Tool: "official/find-bugs", OutputVar: "o"})
	review.Dependencies = []tool.Dependency{{Ref: "official/find-bugs", Constraint: "^1.0.0"}}
	r := newRegistry(t, static(tool.LevelBuiltin, tools(echo("echo", ""))),
		static(tool.LevelProject, tool.Set{Manifests: []*tool.Manifest{review}}))
	err := r.Preflight(names...)
	want := "unknown tool \"ecoh\" (did you mean \"echo\"?)\n" +
		"tool code-review needs official/find-bugs@^1.0.0: not installed; install with: awf tools install --deps code-review"
	if err == nil || err.Error() != want || fault.KindOf(err) != fault.Invalid {
		t.Errorf("Preflight = %v, want %q", err, want)
	}
	if err := r.Preflight("echo"); err != nil {
		t.Errorf("Preflight(echo) = %v", err)
	}
}
