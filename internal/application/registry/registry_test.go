package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
)

func TestNewNeedsDependencies(t *testing.T) {
	_, err := registry.New(registry.Config{})
	if err == nil || !strings.Contains(err.Error(), "Validator, Clock") || fault.KindOf(err) != fault.System {
		t.Fatalf("New({}) = %v, want a system error naming Validator and Clock", err)
	}
}

func TestRegisterGetListSearch(t *testing.T) {
	r := newRegistry(t)
	for _, tl := range []tool.Tool{echo("zeta", ""), add(), echo("alpha", "")} {
		if err := r.Register(tl); err != nil {
			t.Fatalf("Register(%s): %v", tl.Name(), err)
		}
	}
	err := r.Register(echo("add", ""))
	if err == nil || fault.KindOf(err) != fault.Invalid || !strings.Contains(err.Error(), `tool "add" is already registered`) {
		t.Errorf("Register(duplicate) = %v, want an invalid error", err)
	}
	if err := r.Register(echo("bad name", "")); err == nil {
		t.Error("Register(bad name) = nil, want an error")
	}
	if got, want := r.ListNames(), []string{"add", "alpha", "zeta"}; !cmp.Equal(got, want) {
		t.Errorf("ListNames() = %v, want %v", got, want)
	}
	if tl, ok := r.Get("add"); !ok || tl.Name() != "add" {
		t.Errorf("Get(add) = %v, %v", tl, ok)
	}
	if _, ok := r.Get("nope"); ok {
		t.Error("Get(nope) found something")
	}

	searches := []struct {
		name string
		q    tool.Query
		want []string
	}{
		{"everything", tool.Query{}, []string{"add", "alpha", "zeta"}},
		{"substring, any case", tool.Query{NameContains: "ET"}, []string{"zeta"}},
		{"any tag", tool.Query{Tags: []string{"pure", "nope"}}, []string{"add"}},
		{"all tags", tool.Query{Tags: []string{"pure", "nope"}, MatchAll: true}, nil},
		{"all tags present", tool.Query{Tags: []string{"MATH", "pure"}, MatchAll: true}, []string{"add"}},
		{"name and tag", tool.Query{NameContains: "z", Tags: []string{"math"}}, nil},
	}
	for _, tc := range searches {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range r.Search(tc.q) {
				got = append(got, e.Name)
			}
			if !cmp.Equal(got, tc.want) {
				t.Errorf("Search(%+v) = %v, want %v", tc.q, got, tc.want)
			}
		})
	}

	if !r.Unregister("alpha") || r.Unregister("alpha") {
		t.Error("Unregister(alpha) twice should report true then false")
	}
	if r.Contains("alpha") || r.Len() != 2 {
		t.Errorf("after Unregister: Contains(alpha) = %v, Len = %d", r.Contains("alpha"), r.Len())
	}
}

// TestCall covers seed 003's invoke: statuses, data, messages, errors with JSON paths and
// durations from the injected clock.
func TestCall(t *testing.T) {
	r := newRegistry(t, static(tool.LevelBuiltin, tools(add(), echo("echo", "> "),
		&tool.Func{ToolName: "boom", Fn: func(context.Context, tool.Invocation) tool.Result { panic("kaboom") }},
		&tool.Func{ToolName: "fail", Fn: func(context.Context, tool.Invocation) tool.Result { return tool.Errorf("no luck") }},
	)))
	tests := []struct {
		name string
		tool string
		args map[string]any
		opts registry.CallOptions
		want tool.Outcome
	}{
		{"success with data", "add", args("a", num("2"), "b", num("3")), registry.CallOptions{},
			tool.Outcome{Status: tool.OutcomeSuccess, Data: map[string]any{"sum": int64(5)}}},
		{"1.0 is an integer", "add", args("a", num("1.0"), "b", num("0")), registry.CallOptions{},
			tool.Outcome{Status: tool.OutcomeSuccess, Data: map[string]any{"sum": int64(1)}}},
		{"true is not an integer", "add", args("a", true, "b", num("-1"), "cc", 1), registry.CallOptions{},
			tool.Outcome{Status: tool.OutcomeValidationError,
				Message: `invalid arguments for tool "add": $.a: want integer, got boolean; $.b: want >= 0, got -1; $.cc: unknown property (allowed: a, b)`,
				Errors: []tool.FieldError{{Path: "$.a", Message: "want integer, got boolean"}, {Path: "$.b", Message: "want >= 0, got -1"},
					{Path: "$.cc", Message: "unknown property (allowed: a, b)"}}}},
		{"missing required", "add", nil, registry.CallOptions{},
			tool.Outcome{Status: tool.OutcomeValidationError,
				Message: `invalid arguments for tool "add": $.a: is required; $.b: is required`,
				Errors:  []tool.FieldError{{Path: "$.a", Message: "is required"}, {Path: "$.b", Message: "is required"}}}},
		{"coerced strings", "add", args("a", "40", "b", "2"), registry.CallOptions{Coerce: true},
			tool.Outcome{Status: tool.OutcomeSuccess, Data: map[string]any{"sum": int64(42)}}},
		{"strings not coerced by default", "add", args("a", "40", "b", num("2")), registry.CallOptions{},
			tool.Outcome{Status: tool.OutcomeValidationError, Message: `invalid arguments for tool "add": $.a: want integer, got string`,
				Errors: []tool.FieldError{{Path: "$.a", Message: "want integer, got string"}}}},
		{"validation off", "echo", args("text", "hi", "extra", true), registry.CallOptions{NoValidate: true},
			tool.Outcome{Status: tool.OutcomeSuccess, Data: "> hi"}},
		{"input text", "echo", nil, registry.CallOptions{Input: "from stdin"},
			tool.Outcome{Status: tool.OutcomeSuccess, Data: "> from stdin"}},
		{"tool error", "fail", nil, registry.CallOptions{},
			tool.Outcome{Status: tool.OutcomeError, Message: "no luck"}},
		{"panic becomes an error", "boom", nil, registry.CallOptions{},
			tool.Outcome{Status: tool.OutcomeError, Message: `tool "boom" crashed: kaboom`}},
		{"not found", "ad", nil, registry.CallOptions{},
			tool.Outcome{Status: tool.OutcomeNotFound, Message: `unknown tool "ad" (did you mean "add"?)`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := r.Call(t.Context(), tc.tool, tc.args, tc.opts)
			tc.want.Tool = tc.tool
			tc.want.DurationMS = 5 // one clock step between the record stage's two readings
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Call(%s, %v) (-want +got):\n%s", tc.tool, tc.args, diff)
			}
		})
	}
}

func TestOutputValidation(t *testing.T) {
	out := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	mk := func(name, output string) *tool.Func {
		return &tool.Func{ToolName: name, Output: out,
			Fn: func(context.Context, tool.Invocation) tool.Result { return tool.OK(output) }}
	}
	r := newRegistry(t, static(tool.LevelBuiltin, tools(mk("good", `{"n": 3}`), mk("wrong", `{"n": 1.5}`), mk("text", `three`))))
	tests := []struct {
		tool   string
		status tool.OutcomeStatus
		data   any
		errs   []tool.FieldError
	}{
		{"good", tool.OutcomeSuccess, map[string]any{"n": json.Number("3")}, nil},
		{"wrong", tool.OutcomeValidationError, nil, []tool.FieldError{{Path: "$.n", Message: "want integer, got number"}}},
		{"text", tool.OutcomeValidationError, nil, []tool.FieldError{{Path: "$", Message: "the output is not JSON: invalid character 'h' in literal true (expecting 'r')"}}},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			got := r.Call(t.Context(), tc.tool, nil, registry.CallOptions{})
			if got.Status != tc.status || !cmp.Equal(got.Errors, tc.errs) {
				t.Errorf("Call(%s) = %s %v, want %s %v (%s)", tc.tool, got.Status, got.Errors, tc.status, tc.errs, got.Message)
			}
			if tc.data != nil && !cmp.Equal(got.Data, tc.data) {
				t.Errorf("Call(%s).Data = %#v, want %#v", tc.tool, got.Data, tc.data)
			}
		})
	}
	if got := r.Call(t.Context(), "wrong", nil, registry.CallOptions{NoValidate: true}); got.Status != tool.OutcomeSuccess {
		t.Errorf("Call(wrong, NoValidate) = %s, want success", got.Status)
	}
}

func TestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := &tool.Func{ToolName: "slow", Fn: func(ctx context.Context, _ tool.Invocation) tool.Result {
			<-ctx.Done()
			return tool.Errorf("interrupted: " + ctx.Err().Error())
		}}
		r := newRegistry(t, static(tool.LevelBuiltin, tools(slow)))
		got := r.Call(t.Context(), "slow", nil, registry.CallOptions{Timeout: time.Second})
		want := `tool "slow" timed out after 1s: interrupted: context deadline exceeded`
		if got.Status != tool.OutcomeTimeout || got.Message != want {
			t.Errorf("Call(slow) = %s %q, want timeout %q", got.Status, got.Message, want)
		}
	})
}

func TestInvoke(t *testing.T) {
	var seen tool.Invocation
	spy := &tool.Func{ToolName: "spy",
		Params: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"ok":{"type":"boolean"},"s":{"type":"string"},"l":{"type":"array"}}}`),
		Fn: func(_ context.Context, c tool.Invocation) tool.Result {
			seen = c
			return tool.OK("done")
		}}
	r := newRegistry(t, static(tool.LevelBuiltin, tools(spy)))
	req := ports.ToolRequest{RunID: "run", Step: "s1", CallID: "c1", Name: "spy", Input: "in",
		Args: map[string]any{"n": "7", "ok": "true", "s": "8", "l": `["x"]`}, Scope: ports.Scope{"inputs": map[string]any{"a": 1}}}
	res, err := r.Invoke(t.Context(), req)
	if err != nil || res.Output != "done" || res.Duration != 5*time.Millisecond {
		t.Fatalf("Invoke = %+v, %v", res, err)
	}
	want := tool.Invocation{ID: "c1", Input: "in", Args: map[string]any{"n": json.Number("7"), "ok": true, "s": "8", "l": []any{"x"}},
		Scope: map[string]any{"inputs": map[string]any{"a": 1}}}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("the tool received (-want +got):\n%s", diff)
	}
	if req.Args["n"] != "7" {
		t.Error("coercion changed the caller's arguments")
	}

	_, err = r.Invoke(t.Context(), ports.ToolRequest{Name: "spi"})
	if err == nil || fault.KindOf(err) != fault.Invalid || err.Error() != `unknown tool "spi" (did you mean "spy"?)` {
		t.Errorf("Invoke(spi) error = %v, want an invalid unknown-tool error with a hint", err)
	}
	res, err = r.Invoke(t.Context(), ports.ToolRequest{Name: "spy", Args: map[string]any{"n": "seven"}})
	if err != nil || res.Succeeded() || !strings.Contains(res.Error, "$.n: want integer, got string") {
		t.Errorf("Invoke(n=seven) = %+v, %v; want an error result for the model", res, err)
	}
}

// TestStages shows a governance stage inserted into the pipeline: it sees the resolved tool
// and validated arguments, and can refuse a call with a fault the caller receives.
func TestStages(t *testing.T) {
	var order []string
	deny := func(next registry.Handler) registry.Handler {
		return func(ctx context.Context, c *registry.Call) tool.Result {
			order = append(order, "policy:"+c.Tool.Name()+":"+c.Entry.Level.String())
			if c.Request.Args["text"] == "rm -rf" {
				c.Status, c.Err = tool.OutcomeDenied, fault.New(fault.Denied, "policy refuses %q", c.Request.Args["text"])
				return tool.Errorf(c.Err.Error())
			}
			return next(ctx, c)
		}
	}
	audit := func(next registry.Handler) registry.Handler {
		return func(ctx context.Context, c *registry.Call) tool.Result {
			res := next(ctx, c)
			order = append(order, "audit:"+string(res.Status))
			return res
		}
	}
	r := bareRegistry(t, registry.Config{Stages: []registry.Stage{audit, deny}})
	if err := r.Register(echo("echo", "")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Invoke(t.Context(), ports.ToolRequest{Name: "echo", Args: map[string]any{"text": "hi"}}); err != nil {
		t.Fatal(err)
	}
	_, err := r.Invoke(t.Context(), ports.ToolRequest{Name: "echo", Args: map[string]any{"text": "rm -rf"}})
	if fault.KindOf(err) != fault.Denied {
		t.Errorf("Invoke(denied) error = %v, want a denial", err)
	}
	// Invalid arguments never reach the policy stage.
	_, _ = r.Invoke(t.Context(), ports.ToolRequest{Name: "echo", Args: map[string]any{"text": 1}})
	want := []string{"policy:echo:builtin", "audit:ok", "policy:echo:builtin", "audit:error"}
	if !cmp.Equal(order, want) {
		t.Errorf("stage order = %v, want %v", order, want)
	}
	if got := r.Call(t.Context(), "echo", args("text", "rm -rf"), registry.CallOptions{}); got.Status != tool.OutcomeDenied {
		t.Errorf("Call(denied).Status = %s", got.Status)
	}
}

func TestConcurrentCalls(t *testing.T) {
	r := newRegistry(t, static(tool.LevelBuiltin, tools(add(), echo("echo", ""))))
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 32 {
		wg.Go(func() {
			got := r.Call(context.Background(), "add", args("a", num("1"), "b", json.Number(string(rune('0'+i%10)))), registry.CallOptions{})
			if !got.Succeeded() {
				errs <- errors.New(got.Message)
			}
			_ = r.List()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestSchemas(t *testing.T) {
	r := newRegistry(t, static(tool.LevelBuiltin, tools(add(), echo("echo", ""))))
	got, err := r.Schemas([]string{"echo", "add"})
	if err != nil || len(got) != 2 || got[0].Name != "echo" || got[1].Description != "add two integers" {
		t.Fatalf("Schemas = %+v, %v", got, err)
	}
	if _, err := r.Schemas([]string{"ech"}); err == nil || !strings.Contains(err.Error(), `did you mean "echo"?`) {
		t.Errorf("Schemas(ech) error = %v", err)
	}
}

// BenchmarkInvoke measures one call of an in-process tool through the whole pipeline with
// argument validation (target: under 20 microseconds).
func BenchmarkInvoke(b *testing.B) {
	r := newRegistry(b, static(tool.LevelBuiltin, tools(add())))
	req := ports.ToolRequest{Name: "add", CallID: "c", Args: map[string]any{"a": json.Number("2"), "b": json.Number("3")}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := r.Invoke(ctx, req)
		if err != nil || !res.Succeeded() {
			b.Fatal(res.Error, err)
		}
	}
}

func TestDescribe(t *testing.T) {
	r := newRegistry(t, static(tool.LevelBuiltin, tools(add())))
	infos, err := r.Describe(t.Context(), ports.ToolQuery{Names: []string{"add"}, WorkDir: "/w"})
	if err != nil || len(infos) != 1 || infos[0].Schema.Name != "add" || !cmp.Equal(infos[0].Annotations.Tags, []string{"math", "pure"}) {
		t.Fatalf("Describe = %+v, %v", infos, err)
	}
	if _, err := r.Describe(t.Context(), ports.ToolQuery{Names: []string{"ad"}}); fault.KindOf(err) != fault.Invalid {
		t.Errorf("Describe(ad) = %v, want an invalid error", err)
	}
}

// BenchmarkLoadManifestsCallingMissingTools loads n manifests whose step calls a tool that
// does not exist, with n aliases beside them: the cost per manifest must not grow with n
// (the cycle check once looked for a hint for every such reference).
func BenchmarkLoadManifestsCallingMissingTools(b *testing.B) {
	for _, n := range []int{200, 3200} {
		b.Run(fmt.Sprintf("manifests=%d", n), func(b *testing.B) {
			set := tool.Set{}
			for i := range n {
				set.Manifests = append(set.Manifests, manifest(fmt.Sprintf("m%d", i), tool.MetaStep{Tool: fmt.Sprintf("nope%d", i), OutputVar: "o"}))
				set.Tools = append(set.Tools, echo(fmt.Sprintf("t%d", i), ""))
			}
			for b.Loop() {
				r := bareRegistry(b, registry.Config{})
				if _, err := r.Load(static(tool.LevelProject, set)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/manifest")
		})
	}
}
