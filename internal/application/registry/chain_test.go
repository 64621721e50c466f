package registry_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// chainTools: fetch_user returns a nested object, score reads a name and an age, label
// returns a plain string, boom fails.
func chainTools() tool.Set {
	fetch := &tool.Func{ToolName: "fetch_user",
		Params: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"],"additionalProperties":false}`),
		Fn: func(_ context.Context, c tool.Invocation) tool.Result {
			return tool.Result{Status: tool.StatusOK, Data: map[string]any{
				"profile": map[string]any{"name": "Ada", "age": json.Number("36")},
				"tags":    []any{"admin", "ops"},
			}}
		}}
	score := &tool.Func{ToolName: "score",
		Params: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name","age"]}`),
		Fn: func(_ context.Context, c tool.Invocation) tool.Result {
			age, _ := c.Args["age"].(json.Number).Int64()
			return tool.Result{Status: tool.StatusOK, Data: map[string]any{"score": age * 2, "rated": c.Args["name"]}}
		}}
	label := &tool.Func{ToolName: "label",
		Params: json.RawMessage(`{"type":"object","properties":{"tag":{"type":"string"}}}`),
		Fn: func(_ context.Context, c tool.Invocation) tool.Result {
			return tool.OK("label:" + c.Args["tag"].(string))
		}}
	boom := &tool.Func{ToolName: "boom", Fn: func(context.Context, tool.Invocation) tool.Result { return tool.Errorf("it broke") }}
	return tool.Set{Tools: []tool.Tool{fetch, score, label, boom}}
}

func TestRunChain(t *testing.T) {
	r := newRegistry(t, static(tool.LevelBuiltin, chainTools()))
	fetch := tool.ChainStep{Tool: "fetch_user", InputMapping: map[string]string{"id": "request.id"}, OutputKey: "user"}
	tests := []struct {
		name    string
		chain   tool.Chain
		success bool
		context map[string]any
		errors  []string
		steps   []tool.OutcomeStatus
	}{
		{"nested mapping, output key and merge", tool.Chain{Steps: []tool.ChainStep{
			fetch,
			{Tool: "score", InputMapping: map[string]string{"name": "user.profile.name", "age": "user.profile.age"}, Merge: true},
			{Tool: "label", InputMapping: map[string]string{"tag": "user.tags.1"}, OutputKey: "label"},
		}}, true, map[string]any{
			"request": map[string]any{"id": json.Number("7")},
			"user":    map[string]any{"profile": map[string]any{"name": "Ada", "age": json.Number("36")}, "tags": []any{"admin", "ops"}},
			"score":   int64(72), "rated": "Ada", "label": "label:ops",
		}, nil, []tool.OutcomeStatus{"success", "success", "success"}},
		{"missing source names the path", tool.Chain{Steps: []tool.ChainStep{
			fetch,
			{Tool: "score", InputMapping: map[string]string{"name": "user.profile.nmae", "age": "user.profile.age"}, OutputKey: "s"},
			{Tool: "label", InputMapping: map[string]string{"tag": "user.tags.0"}, OutputKey: "label"},
		}}, false, nil, []string{
			`step 2 (score): input_mapping.name: no value at user.profile.nmae (user.profile has: age, name); did you mean "name"?`,
		}, []tool.OutcomeStatus{"success", "error"}},
		{"merging a non-object is an error", tool.Chain{Steps: []tool.ChainStep{
			{Tool: "label", InputMapping: map[string]string{"tag": "request.id"}, Merge: true},
		}}, false, nil, []string{
			`step 1 (label): invalid arguments for tool "label": $.tag: want string, got integer`,
		}, []tool.OutcomeStatus{"validation_error"}},
		{"continue on failure", tool.Chain{ContinueOnFailure: true, Steps: []tool.ChainStep{
			{Tool: "boom", OutputKey: "b"},
			{Tool: "label", InputMapping: map[string]string{"tag": "request.name"}, Merge: true},
			{Tool: "label", InputMapping: map[string]string{"tag": "request.name"}, OutputKey: "l"},
		}}, false, nil, []string{
			"step 1 (boom): it broke",
			"step 2 (label): merge: the result is a string, not an object; set output_key instead",
		}, []tool.OutcomeStatus{"error", "success", "success"}},
		{"pre-validation: unknown tool and bad shape", tool.Chain{Steps: []tool.ChainStep{
			fetch,
			{Tool: "scroe", OutputKey: "s"},
			{Tool: "label"},
		}}, false, nil, []string{
			"step 3 (label): set output_key to keep the result, or merge: true to merge an object result into the context",
			`step 2 (scroe): unknown tool "scroe" (did you mean "score"?)`,
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			initial := map[string]any{"request": map[string]any{"id": json.Number("7"), "name": "ada"}}
			got := r.RunChain(t.Context(), tc.chain, initial)
			if got.Success != tc.success || !cmp.Equal(got.Errors, tc.errors) {
				t.Errorf("RunChain = success %v, errors %q; want %v, %q", got.Success, got.Errors, tc.success, tc.errors)
			}
			var statuses []tool.OutcomeStatus
			for _, s := range got.StepResults {
				statuses = append(statuses, s.Status)
			}
			if !cmp.Equal(statuses, tc.steps) {
				t.Errorf("step statuses = %v, want %v", statuses, tc.steps)
			}
			if tc.context != nil {
				tc.context["request"].(map[string]any)["name"] = "ada"
				if diff := cmp.Diff(tc.context, got.Context); diff != "" {
					t.Errorf("context (-want +got):\n%s", diff)
				}
			}
			if got.DurationMS <= 0 {
				t.Errorf("DurationMS = %v, want the clock's time", got.DurationMS)
			}
			if _, ok := initial["user"]; ok {
				t.Error("RunChain changed the initial context")
			}
		})
	}
}

func TestChainManifest(t *testing.T) {
	m := &tool.Manifest{Name: "rate-user", Description: "fetch and rate", Path: "rate.yaml",
		Arguments: []tool.Argument{{Variable: "id", Type: "integer", Required: true}},
		Chain: &tool.Chain{Steps: []tool.ChainStep{
			{Tool: "fetch_user", InputMapping: map[string]string{"id": "id"}, OutputKey: "user"},
			{Tool: "score", InputMapping: map[string]string{"name": "user.profile.name", "age": "user.profile.age"}, OutputKey: "rating"},
		}},
		Output: "{rating}",
	}
	r := newRegistry(t, static(tool.LevelBuiltin, chainTools()), static(tool.LevelProject, tool.Set{Manifests: []*tool.Manifest{m}}))
	got := r.Call(t.Context(), "rate-user", args("id", "5"), registry.CallOptions{Coerce: true})
	if got.Status != tool.OutcomeSuccess {
		t.Fatalf("Call(rate-user) = %s %q", got.Status, got.Message)
	}
	ctx, _ := got.Data.(map[string]any)
	if ctx["rating"] == nil || ctx["id"] != json.Number("5") {
		t.Errorf("Call(rate-user).Data = %#v", got.Data)
	}
	res, _ := r.Get("rate-user")
	out := res.Execute(t.Context(), tool.Invocation{Args: map[string]any{"id": json.Number("1")}})
	if out.Output != `{"rated":"Ada","score":72}` {
		t.Errorf("output = %q, want the rating as JSON", out.Output)
	}
	got = r.Call(t.Context(), "rate-user", nil, registry.CallOptions{})
	if got.Status != tool.OutcomeValidationError || !strings.Contains(got.Message, "$.id: is required") {
		t.Errorf("Call(rate-user) without id = %s %q", got.Status, got.Message)
	}
}
