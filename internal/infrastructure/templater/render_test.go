package templater

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
)

// testScope is a scope shaped as the runner builds it.
func testScope() ports.Scope {
	exit := 0
	return ports.Scope{
		"inputs": map[string]any{
			"feature": "login page",
			"count":   3,
			"big":     int64(1) << 40,
			"ratio":   2.5,
			"whole":   3.0,
			"tiny":    1e-7,
			"huge":    1e21,
			"on":      true,
			"off":     false,
			"list":    []any{1, "two", 3.5},
			"obj":     map[string]any{"b": 2, "a": "<x>", "nested": map[string]any{"deep": "yes"}},
			"yamlmap": map[any]any{"k": 1},
			"strs":    []string{"x", "y"},
			"nothing": nil,
			"ptr":     &exit,
		},
		"states": map[string]any{
			"build": map[string]any{
				"output": "built", "status": "completed", "exit_code": 0, "response": nil,
				"error": "", "tokens": nil, "tool_calls": []any{}, "tool_stats": nil,
			},
			"plan": map[string]any{
				"output": `{"files":["a.go"]}`, "status": "completed", "exit_code": nil,
				"response": map[string]any{"files": []any{"a.go"}}, "error": "", "tokens": nil,
				"tool_calls": []any{}, "tool_stats": nil,
			},
		},
		"env":      map[string]any{"HOME": "/home/u"},
		"workflow": map[string]any{"name": "demo", "version": "1.0", "description": "", "dir": "/w"},
		"run":      map[string]any{"id": "r1", "dir": "/w/.awf/runs"},
	}
}

func TestRenderValues(t *testing.T) {
	tests := []struct {
		name, tmpl, want string
	}{
		{"plain text", "no placeholders here", "no placeholders here"},
		{"string verbatim", "{{inputs.feature}}", "login page"},
		{"text around", "Implement: {{ inputs.feature }}!", "Implement: login page!"},
		{"leading dot", "{{.inputs.feature}}", "login page"},
		{"leading dot with spaces", "{{  .inputs.count }}", "3"},
		{"several placeholders", "{{inputs.count}}-{{inputs.on}}-{{ .inputs.feature }}", "3-true-login page"},
		{"integer", "{{inputs.count}}", "3"},
		{"int64", "{{inputs.big}}", "1099511627776"},
		{"arithmetic stays integer", "{{inputs.count * 2}}", "6"},
		{"float", "{{inputs.ratio}}", "2.5"},
		{"whole float has no decimals", "{{inputs.whole}}", "3"},
		{"small float", "{{inputs.tiny}}", "1e-7"},
		{"large float", "{{inputs.huge}}", "1e+21"},
		{"division is float", "{{ 7 / 2 }}", "3.5"},
		{"true", "{{inputs.on}}", "true"},
		{"false", "{{inputs.off}}", "false"},
		{"list as JSON", "{{inputs.list}}", `[1,"two",3.5]`},
		{"typed list", "{{inputs.strs}}", `["x","y"]`},
		{"map as compact JSON, sorted, unescaped", "{{inputs.obj}}", `{"a":"<x>","b":2,"nested":{"deep":"yes"}}`},
		{"yaml map", "{{inputs.yamlmap}}", `{"k":1}`},
		{"pointer followed", "{{inputs.ptr}}", "0"},
		{"nested key", "{{inputs.obj.nested.deep}}", "yes"},
		{"index", "{{inputs.list[1]}}", "two"},
		{"negative index", "{{inputs.list[-1]}}", "3.5"},
		{"bracket key", `{{inputs["feature"]}}`, "login page"},
		{"step output", "{{states.build.output}}", "built"},
		{"step response", "{{states.plan.response.files[0]}}", "a.go"},
		{"exit code", "{{states.build.exit_code}}", "0"},
		{"dynamic step name", `{{states["bu" + "ild"].status}}`, "completed"},
		{"env", "{{env.HOME}}", "/home/u"},
		{"workflow", "{{workflow.name}}@{{workflow.version}}", "demo@1.0"},
		{"run", "{{run.id}}", "r1"},
		{"builtin", "{{ upper(inputs.feature) }}", "LOGIN PAGE"},
		{"map literal with braces", `{{ {"a": {"b": 1}} }}`, `{"a":{"b":1}}`},
		{"closing braces in a string", `{{ "}}" }}`, "}}"},
		{"literal braces", `{{ "{{" }}x}}`, "{{x}}"},
		{"let", "{{ let n = inputs.count; n + 1 }}", "4"},
		{"predicate", "{{ filter(inputs.list, # == 1) }}", "[1]"},
		{"optional chain tolerates a miss", "{{ inputs?.missing ?? 'default' }}", "default"},
		{"?? tolerates a miss at any depth", "{{ states.nope.output ?? 'none' }}", "none"},
		{"?? keeps a present value", "{{ inputs.feature ?? 'none' }}", "login page"},
		{"?. deeper", "{{ inputs.obj?.missing?.x ?? 'd' }}", "d"},
		{"in", "{{ 'feature' in inputs }}", "true"},
		{"raw is identity in text", "{{ raw(inputs.count) }}", "3"},
		{"unicode", "é{{inputs.feature}}ü", "élogin pageü"},
		{"single brace is text", "{ {x} }} {", "{ {x} }} {"},
		{"member of a literal", `{{ {"a": 1}.a }}`, "1"},
		{"$env", "{{ $env.inputs.feature }}", "login page"},
		{"conditional", "{{ inputs.on ? 'yes' : 'no' }}", "yes"},
	}
	tp := New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tp.Render(tc.tmpl, testScope())
			if err != nil {
				t.Fatalf("Render(%q) error: %v", tc.tmpl, err)
			}
			if got != tc.want {
				t.Errorf("Render(%q) = %q, want %q", tc.tmpl, got, tc.want)
			}
		})
	}
}

func TestRenderMisses(t *testing.T) {
	tests := []struct {
		name, tmpl, want string
	}{
		{"missing input", "{{inputs.featur}}", `inputs.featur: no such input (did you mean "feature"?)`},
		{"missing input via leading dot", "{{.inputs.featur}}", `inputs.featur: no such input (did you mean "feature"?)`},
		{"step that has not run", "{{states.deploy.output}}", `states.deploy.output: no step "deploy" has run`},
		{"misspelt step", "{{states.buidl.output}}", `states.buidl.output: no step "buidl" has run (did you mean "build"?)`},
		{"missing step field", "{{states.build.outptu}}", `states.build.outptu: step "build" has no field "outptu" (did you mean "output"?)`},
		{"deep miss names the whole path", "{{inputs.obj.nested.deeep}}", `inputs.obj.nested.deeep: no key "deeep" in inputs.obj.nested (did you mean "deep"?)`},
		{"miss in the middle names the whole path", "{{inputs.obj.nope.deep}}", `inputs.obj.nope.deep: no key "nope" in inputs.obj`},
		{"nil response", "{{states.build.response}}", `states.build.response: the value is nil`},
		{"member of nil", "{{states.build.response.files}}", `states.build.response.files: states.build.response is nil`},
		{"nil input value", "{{inputs.nothing}}", `inputs.nothing: the value is nil`},
		{"member of a string", "{{inputs.feature.x}}", `inputs.feature.x: inputs.feature is a string, not an object or a list`},
		{"index out of range", "{{inputs.list[7]}}", `inputs.list[7]: index 7 is out of range: inputs.list has 3 items`},
		{"string index of a list", `{{inputs.list["a"]}}`, `inputs.list.a: inputs.list is a list; index it with a number, not "a"`},
		{"unset env", "{{env.TOKEN}}", `env.TOKEN: environment variable "TOKEN" is not set`},
		{"missing namespace", "{{args.pattern}}", `args.pattern: "args" is not available here`},
		{"unknown name", "{{inptus.x}}", `inptus.x: unknown name "inptus" (did you mean "inputs"?)`},
		{"bare unknown name", "{{foo}}", `foo: unknown name "foo"`},
		{"miss inside an operator", "{{ inputs.nope + 1 }}", `inputs.nope: no such input`},
		{"miss in a condition is not false", "{{ inputs.nope == 'x' }}", `inputs.nope: no such input`},
		{"miss in a predicate", "{{ map(inputs.list, #.x) }}", `.x: the current element is an integer, not an object or a list`},
		{"dynamic key miss", `{{states["dep" + "loy"].output}}`, `states["dep" + "loy"].output: no step "deploy" has run`},
		{"?. guards only what follows it", "{{ inputs.nope?.x }}", `inputs.nope?.x: no such input`},
		{"index of a literal", "{{ [1, 2][5] }}", `[1, 2][5]: index 5 is out of range: [1, 2] has 2 items`},
		{"$env miss", "{{ $env.nope }}", `$env.nope: no key "nope" in $env`},
	}
	tp := New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tp.Render(tc.tmpl, testScope())
			if err == nil {
				t.Fatalf("Render(%q) = %q, want error %q", tc.tmpl, got, tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("Render(%q) error = %q, want %q", tc.tmpl, err, tc.want)
			}
			if k := fault.KindOf(err); k != fault.Execution {
				t.Errorf("Render(%q) error kind = %v, want execution", tc.tmpl, k)
			}
		})
	}
}

func TestRenderRefErrorFields(t *testing.T) {
	_, err := New().Render("{{ states.deploy.output }}", testScope())
	var re *RefError
	if !errors.As(err, &re) {
		t.Fatalf("Render error = %v (%T), want *RefError", err, err)
	}
	want := RefError{Path: "states.deploy.output", Reason: `no step "deploy" has run`}
	if diff := cmp.Diff(want, *re); diff != "" {
		t.Errorf("RefError mismatch (-want +got):\n%s", diff)
	}
}

func TestRenderNoScope(t *testing.T) {
	_, err := New().Render("{{inputs.x}}", nil)
	if err == nil || !strings.Contains(err.Error(), `"inputs" is not available here`) {
		t.Errorf("Render with nil scope error = %v, want inputs not available", err)
	}
}

func TestRenderSyntaxErrors(t *testing.T) {
	tests := []struct {
		name, tmpl string
		offset     int
		msg        string
	}{
		{"unterminated", "abc {{ inputs.x", 4, `unterminated "{{"`},
		{"unterminated after a good one", "{{a}} {{ b", 6, `unterminated "{{"`},
		{"unterminated string", `{{ "abc }}`, 3, "unterminated string literal"},
		{"empty", "x {{   }}", 2, "empty {{ }}"},
		{"bad expression", "ab {{ 1 + }}", 9, "unexpected token EOF"},
		{"bad token", "{{ inputs.x @ 1 }}", 12, "unrecognized character"},
		{"raw arity", "{{ raw() }}", 3, "not enough arguments"},
	}
	tp := New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tp.Render(tc.tmpl, testScope())
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Render(%q) error = %v, want *SyntaxError", tc.tmpl, err)
			}
			if se.Offset != tc.offset || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("Render(%q) = offset %d %q, want offset %d containing %q", tc.tmpl, se.Offset, se.Msg, tc.offset, tc.msg)
			}
			if k := fault.KindOf(err); k != fault.Invalid {
				t.Errorf("Render(%q) error kind = %v, want invalid", tc.tmpl, k)
			}
		})
	}
}

func TestFormatFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"}, {1, "1"}, {-2.5, "-2.5"}, {0.1, "0.1"}, {1.0 / 3, "0.3333333333333333"},
		{1e20, "100000000000000000000"}, {1e21, "1e+21"}, {1e-6, "0.000001"}, {1e-7, "1e-7"},
		{math.Inf(1), "+Inf"}, {math.NaN(), "NaN"},
	}
	for _, tc := range tests {
		if got := formatFloat(tc.in, 64); got != tc.want {
			t.Errorf("formatFloat(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got, _ := text(float32(0.1)); got != "0.1" {
		t.Errorf("text(float32(0.1)) = %q, want 0.1", got)
	}
}

func TestEval(t *testing.T) {
	tests := []struct {
		name, expr string
		want       any
	}{
		{"comparison", "inputs.count > 2", true},
		{"braced", "{{ inputs.count == 3 }}", true},
		{"braced with spaces", "  {{inputs.on}}  ", true},
		{"leading dot", ".inputs.feature == 'login page'", true},
		{"value", "inputs.feature", "login page"},
		{"nil is a value", "states.build.response", nil},
		{"nil comparison", "states.build.response == nil", true},
		{"step status", "states.build.status == 'completed' && states.build.exit_code == 0", true},
		{"extra namespace", "turn >= 3 && response contains 'DONE'", true},
		{"startsWith", `args.command startsWith "git "`, true},
	}
	tp := New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scope := testScope()
			scope["turn"], scope["response"] = 3, "all DONE"
			scope["args"] = map[string]any{"command": "git status"}
			got, err := tp.Eval(tc.expr, scope)
			if err != nil {
				t.Fatalf("Eval(%q) error: %v", tc.expr, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Eval(%q) mismatch (-want +got):\n%s", tc.expr, diff)
			}
		})
	}
}

func TestEvalErrors(t *testing.T) {
	tests := []struct {
		name, expr, want string
	}{
		{"miss", "inputs.nope == 'x'", "inputs.nope: no such input"},
		{"unknown name", "tunr > 3", `tunr: unknown name "tunr"`},
		{"type error", "inputs.feature + 1", "inputs.feature + 1: invalid operation"},
		{"syntax", "inputs.count >", "unexpected token EOF"},
	}
	tp := New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tp.Eval(tc.expr, testScope())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Eval(%q) error = %v, want containing %q", tc.expr, err, tc.want)
			}
		})
	}
}

func TestEvalBool(t *testing.T) {
	tests := []struct {
		expr    string
		want    bool
		wantErr string
	}{
		{"inputs.on", true, ""},
		{"inputs.count < 2", false, ""},
		{"inputs.feature", false, "must be a boolean, got string"},
		{"inputs.count", false, "must be a boolean, got integer"},
		{"states.build.response", false, "must be a boolean, got nil"},
		{"inputs.nope", false, "inputs.nope: no such input"},
	}
	tp := New()
	for _, tc := range tests {
		got, err := tp.EvalBool(tc.expr, testScope())
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("EvalBool(%q) error = %v, want %q", tc.expr, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("EvalBool(%q) = %v, %v, want %v", tc.expr, got, err, tc.want)
		}
	}
}

func TestCacheReusesCompiledForms(t *testing.T) {
	tp := New()
	const tmpl = "{{inputs.feature}} {{inputs.count}}"
	if _, err := tp.Render(tmpl, testScope()); err != nil {
		t.Fatal(err)
	}
	first, _ := tp.text(tmpl)
	if _, err := tp.Render(tmpl, testScope()); err != nil {
		t.Fatal(err)
	}
	second, _ := tp.text(tmpl)
	if first != second {
		t.Errorf("text(%q) compiled twice", tmpl)
	}
	p1, _ := tp.compiled("inputs.feature")
	p2, _ := tp.compiled("inputs.feature")
	if p1 != p2 || p1 != first.parts[0].prog {
		t.Errorf("expression inputs.feature compiled more than once")
	}
}

func TestConcurrentUse(t *testing.T) {
	tp := New()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				scope := testScope()
				scope["inputs"].(map[string]any)["feature"] = strings.Repeat("x", i+j)
				got, err := tp.Render("{{inputs.feature}}/{{inputs.count}}", scope)
				if err != nil || got != strings.Repeat("x", i+j)+"/3" {
					errs <- errors.New("render: " + got)
					return
				}
				if _, err := tp.Render("{{inputs.nope}}", scope); err == nil {
					errs <- errors.New("miss was not an error")
					return
				}
				b, err := tp.Command("echo {{inputs.feature}}", scope)
				if err != nil || b.Vars["AWF_T1"] != strings.Repeat("x", i+j) {
					errs <- errors.New("command binding")
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestRenderGoValues(t *testing.T) {
	type point struct{ X, Y int }
	var nilPtr *int
	scope := ports.Scope{"inputs": map[string]any{
		"env":    map[string]string{"A": "1"},
		"point":  point{X: 1, Y: 2},
		"pptr":   &point{X: 3},
		"dur":    90 * time.Second,
		"u8":     uint8(7),
		"i32":    int32(-4),
		"f32":    float32(2.5),
		"bytes":  []byte("raw"),
		"nilptr": nilPtr,
		"arr":    [2]string{"p", "q"},
	}}
	tests := []struct {
		tmpl, want, wantErr string
	}{
		{tmpl: "{{inputs.env.A}}", want: "1"},
		{tmpl: "{{inputs.env.B}}", wantErr: `inputs.env.B: no key "B" in inputs.env (did you mean "A"?)`},
		{tmpl: "{{inputs.env[1]}}", wantErr: "inputs.env[1]: inputs.env is an object; its keys are string, not int"},
		{tmpl: "{{inputs.point.Y}}", want: "2"},
		{tmpl: "{{inputs.pptr.X}}", want: "3"},
		{tmpl: "{{inputs.point.Z}}", wantErr: `inputs.point.Z: no key "Z" in inputs.point`},
		{tmpl: "{{inputs.point}}", want: `{"X":1,"Y":2}`},
		{tmpl: "{{inputs.dur}}", want: "1m30s"},
		{tmpl: "{{inputs.u8}} {{inputs.i32}} {{inputs.f32}}", want: "7 -4 2.5"},
		{tmpl: "{{inputs.bytes}}", want: "raw"},
		{tmpl: "{{inputs.nilptr}}", wantErr: "inputs.nilptr: the value is nil"},
		{tmpl: "{{inputs.nilptr.x}}", wantErr: "inputs.nilptr.x: inputs.nilptr is nil"},
		{tmpl: "{{inputs.arr[1]}}", want: "q"},
		{tmpl: "{{inputs.arr[0:1]}}", want: `["p"]`},
		{tmpl: "{{inputs.u8.x}}", wantErr: "inputs.u8.x: inputs.u8 is an integer, not an object or a list"},
	}
	tp := New()
	for _, tc := range tests {
		got, err := tp.Render(tc.tmpl, scope)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("Render(%q) = %q, %v; want error %q", tc.tmpl, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Render(%q) = %q, %v; want %q", tc.tmpl, got, err, tc.want)
		}
	}
}
