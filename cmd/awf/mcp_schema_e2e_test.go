package main

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

// nestDepth is how deep the model nests the nest tool's tree, within the call gate's limit on
// nesting (32): a validator that takes every way the schema's references branch takes
// 2^nestDepth steps (19 levels took 21 s), so the run below would not end within the test's
// time limit.
const nestDepth = 30

// nestWorkflow offers an agent the test MCP server's nest tool, whose input schema branches
// through a reference at every level (testdata/mcp/server, TESTSERVER_NEST).
const nestWorkflow = `name: mcp-nest
providers:
  local:
    type: openai
    base_url: __BASE_URL__
    model: gpt-e2e
mcp_servers:
  fs:
    command: ${TESTSERVER}
    env:
      TESTSERVER_NEST: "1"
steps:
  - name: measure
    type: agent
    provider: local
    prompt: How deep is the tree?
    tools: [fs.nest]
output: "{{states.measure.output}}"
`

// nestCall is a Chat Completions reply calling fs__nest with a tree nestDepth deep whose leaf
// is leaf.
func nestCall(id, leaf string) string {
	args, err := json.Marshal(map[string]json.RawMessage{
		"tree": json.RawMessage(strings.Repeat("[", nestDepth) + leaf + strings.Repeat("]", nestDepth)),
	})
	if err != nil {
		panic(err)
	}
	call, err := json.Marshal(map[string]any{"id": id, "type": "function",
		"function": map[string]string{"name": "fs__nest", "arguments": string(args)}})
	if err != nil {
		panic(err)
	}
	return `{"id":"chatcmpl-` + id + `","object":"chat.completion","created":1767225600,"model":"gpt-e2e",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` + string(call) + `]},` +
		`"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}`
}

// TestMCPSchemaThatBranchesIsCheckedOncePerPlace runs an agent whose MCP tool's input schema
// branches at every level, through the binary, with a model that sends a tree 30 levels deep:
// first with a string where a number must be (refused by awf before the server sees it, with
// a short message the model gets back), then a valid one (the server answers). Checked every
// way, either call would take 2^30 steps; the walker validates each place once.
func TestMCPSchemaThatBranchesIsCheckedOncePerPlace(t *testing.T) {
	bins := mcpPrograms(t)
	srv := &fakeOpenAI{replies: []string{
		nestCall("call_bad", `"leaf"`),
		nestCall("call_good", `7`),
		`{"id":"chatcmpl-end","object":"chat.completion","created":1767225601,"model":"gpt-e2e",` +
			`"choices":[{"index":0,"message":{"role":"assistant","content":"30 deep."},` +
			`"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13}}`,
	}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	e := newEnv(t)
	e.write("nest.yaml", strings.ReplaceAll(nestWorkflow, "__BASE_URL__", ts.URL+"/v1"))

	r := agentRun(e, []string{"TESTSERVER=" + bins.testServer}, "run", "nest.yaml", "--output", "json")
	if r.code != 0 {
		t.Fatalf("awf run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var res runResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("output %q: %v", r.stdout, err)
	}
	if res.Output != "30 deep." {
		t.Errorf("output = %q", res.Output)
	}

	calls := agentStep(t, e.state(res.RunID), "measure").ToolCalls
	if len(calls) != 2 || calls[0].Result == nil || calls[1].Result == nil {
		t.Fatalf("calls = %+v, want two with results", calls)
	}
	bad, good := calls[0].Result, calls[1].Result
	// The refusal is the schema's, short (the 2^30 ways the branches fail are not quoted),
	// and it names what to fix, 30 lists down.
	const refusal = `invalid arguments for tool "fs__nest": $.tree: matches none of the anyOf schemas`
	deepest := "; deepest: $.tree" + strings.Repeat("[0]", nestDepth) +
		": matches none of the anyOf schemas: (1) want array, got string; (2) want array, got string; (3) want number, got string"
	if bad.Success || !strings.HasPrefix(bad.Error, refusal) || !strings.HasSuffix(bad.Error, deepest) || len(bad.Error) > 4<<10 {
		t.Errorf("call with a string leaf: success %v, error (%d bytes) %q; want %q...%q, under 4 KB",
			bad.Success, len(bad.Error), bad.Error, refusal, deepest)
	}
	if !good.Success || good.Output != fmt.Sprintf("depth %d", nestDepth) {
		t.Errorf("valid call: success %v, output %q, error %q; want the server's answer", good.Success, good.Output, good.Error)
	}

	// The model was told why its first call failed, in the same short words.
	reqs := srv.got()
	if len(reqs) != 3 {
		t.Fatalf("the model got %d requests, want 3", len(reqs))
	}
	var told string
	for _, m := range reqs[1].Body.Messages {
		if m.Role == "tool" && m.ToolCallID == "call_bad" {
			told = fmt.Sprint(m.Content)
		}
	}
	if !strings.Contains(told, refusal) || !strings.HasSuffix(told, deepest) || len(told) > 4<<10 {
		t.Errorf("the model was told (%d bytes) %q; want the refusal", len(told), told)
	}
}
