package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/application/agent"
	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/infrastructure/loader"
	"github.com/awf-dev/awf/internal/infrastructure/providers/replay"
	"github.com/awf-dev/awf/internal/infrastructure/schema"
	"github.com/awf-dev/awf/internal/infrastructure/templater"
)

// The quick start replays workflows/cassettes/autonomous-coding.yaml through the agent step of
// workflows/autonomous-coding.yaml. This test runs that step on the cassette, so a change to
// the workflow, the prompt or the loop that would break the quick start fails here. With
// UPDATE_GOLDEN=1 it records the cassette again from the scripted model turns below.

const (
	repoRoot    = "../../.."
	quickFile   = "workflows/autonomous-coding.yaml"
	quickTape   = "workflows/cassettes/autonomous-coding.yaml"
	quickFeat   = "add a Reverse function to the strutil package, with a test"
	quickOutput = "Added `Reverse` to the strutil package"
)

const reverseGo = `package strutil

// Reverse returns s with its characters (runes) in reverse order.
func Reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}
`

const reverseTestGo = `package strutil

import "testing"

func TestReverse(t *testing.T) {
	for in, want := range map[string]string{"": "", "a": "a", "abc": "cba", "héllo": "olléh"} {
		if got := Reverse(in); got != want {
			t.Errorf("Reverse(%q) = %q, want %q", in, got, want)
		}
	}
}
`

// quickTurns are the model's turns of the recorded run.
func quickTurns() []portstest.Reply {
	args := func(v map[string]any) string {
		data, _ := json.Marshal(v)
		return string(data)
	}
	dir := "workflows/sample-project/src/strutil/"
	turn := func(content string, usage state.Tokens, calls ...state.CallRef) portstest.Reply {
		return portstest.Reply{Response: ports.ChatResponse{Content: content, ToolCalls: calls, Usage: usage, FinishReason: "tool_calls"}}
	}
	final := turn("Added `Reverse` to the strutil package (workflows/sample-project/src/strutil/reverse.go): it reverses "+
		"a string rune by rune, so multi-byte characters stay intact. reverse_test.go covers the empty string, a single "+
		"character, ASCII and accented text, and the whole test suite passes.", state.Tokens{Input: 3012, Output: 74, Total: 3086})
	final.Response.FinishReason = "stop"
	return []portstest.Reply{
		turn("I'll find the strutil package and read it first.", state.Tokens{Input: 1204, Output: 96, Total: 1300},
			state.CallRef{ID: "toolu_01", Name: "search_code", Arguments: args(map[string]any{"pattern": "package strutil"})},
			state.CallRef{ID: "toolu_02", Name: "read_file", Arguments: args(map[string]any{"path": dir + "strutil.go"})}),
		turn("Let me look at how its tests are written.", state.Tokens{Input: 1562, Output: 58, Total: 1620},
			state.CallRef{ID: "toolu_03", Name: "read_file", Arguments: args(map[string]any{"path": dir + "strutil_test.go"})}),
		turn("I'll add Reverse in its own file, working on runes so that multi-byte characters survive, with a table test in the same style.",
			state.Tokens{Input: 1840, Output: 402, Total: 2242},
			state.CallRef{ID: "toolu_04", Name: "write_file", Arguments: args(map[string]any{"path": dir + "reverse.go", "content": reverseGo})},
			state.CallRef{ID: "toolu_05", Name: "write_file", Arguments: args(map[string]any{"path": dir + "reverse_test.go", "content": reverseTestGo})}),
		turn("Now the tests.", state.Tokens{Input: 2310, Output: 31, Total: 2341},
			state.CallRef{ID: "toolu_06", Name: "run_tests", Arguments: "{}"}),
		final,
	}
}

// quickTools stand in for the real tools: they read the real files of the sample project and
// answer the others as the real ones do.
func quickTools() (*portstest.ToolSet, portstest.Catalog) {
	read := func(_ context.Context, req ports.ToolRequest) (tool.Result, error) {
		data, err := os.ReadFile(filepath.Join(repoRoot, str(req.Args["path"])))
		if err != nil {
			return tool.Errorf(err.Error()), nil
		}
		return tool.OK(string(data)), nil
	}
	search := func(context.Context, ports.ToolRequest) (tool.Result, error) {
		return tool.OK("workflows/sample-project/src/strutil/strutil.go:3:package strutil\n" +
			"workflows/sample-project/src/strutil/strutil_test.go:1:package strutil\n"), nil
	}
	write := func(_ context.Context, req ports.ToolRequest) (tool.Result, error) {
		return tool.Result{Status: tool.StatusOK, Approval: ports.ByFlag,
			Output: fmt.Sprintf("wrote %d bytes to %s", len(str(req.Args["content"])), str(req.Args["path"]))}, nil
	}
	test := func(context.Context, ports.ToolRequest) (tool.Result, error) {
		return tool.OK("ok  \texample.com/sample\t0.004s\nok  \texample.com/sample/src/strutil\t0.005s\n"), nil
	}
	set := &portstest.ToolSet{Tools: map[string]portstest.ToolFunc{
		"read_file": read, "search_code": search, "write_file": write, "run_tests": test}}
	catalog := portstest.Catalog{
		"read_file":   {Annotations: tool.Annotations{ReadOnly: true}},
		"search_code": {},
		"write_file":  {},
		"run_tests":   {},
	}
	return set, catalog
}

func TestQuickStartCassette(t *testing.T) {
	wf, err := loader.New().Load(filepath.Join(repoRoot, quickFile))
	if err != nil {
		t.Fatal(err)
	}
	tape := filepath.Join(repoRoot, quickTape)
	var prov ports.Provider
	var player *replay.Player
	if os.Getenv("UPDATE_GOLDEN") != "" {
		rec := replay.NewRecorder(tape)
		rec.SetNote("Model turns scripted in internal/application/agent/workflow_test.go (TestQuickStartCassette, " +
			"rewritten with UPDATE_GOLDEN=1), not a live model's. Tool results show what stand-in tools returned; " +
			"replay does not compare them, since the real tools run and their output varies.")
		prov = rec.Wrap(wf.Name, "implement_feature", portstest.NewScriptedProvider(quickTurns()...))
	} else {
		if player, err = replay.Open(tape); err != nil {
			t.Fatal(err)
		}
		prov = player.Step(wf.Name, "implement_feature")
	}
	tools, catalog := quickTools()
	x, err := agent.New(agent.Deps{
		Providers: &portstest.Providers{Use: prov}, Tools: tools, Catalog: catalog, Refusals: noRefusals,
		Templater: templater.New(), Schemas: schema.New(), Clock: portstest.NewFakeClock(time.Unix(0, 0)),
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := &record{}
	out, err := x.Execute(t.Context(), runner.StepContext{
		RunID: "quick", Workflow: wf, Step: &wf.Steps[0], Attempt: 1, Save: rec.save,
		Scope: ports.Scope{"inputs": map[string]any{"project_path": "workflows/sample-project", "feature": quickFeat},
			"states": map[string]any{}, "env": map[string]string{}},
	})
	if err != nil {
		t.Fatalf("the quick start's agent step fails on its cassette: %v", err)
	}
	if !strings.HasPrefix(out.Output, quickOutput) {
		t.Errorf("Output = %q, want it to start with %q", out.Output, quickOutput)
	}
	s := rec.state()
	if s.ToolStats == nil || s.ToolStats.TotalCalls != 6 || s.ToolStats.Successful != 6 {
		t.Errorf("ToolStats = %+v, want 6 successful calls", s.ToolStats)
	}
	if player != nil {
		if u := player.Unused(); len(u) != 0 {
			t.Errorf("turns not played: %v", u)
		}
	}
	// The files the recorded model writes must be a package that builds and passes.
	if got := fmt.Sprint(s.ToolCalls[3].Arguments["content"]); got != reverseGo {
		t.Errorf("reverse.go in the cassette differs from the one this test knows")
	}
}

// noRefusals drops the audit records of refused calls, for tests that do not look at them.
var noRefusals = ports.CallRefuserFunc(func(context.Context, ports.ToolRequest, string, string) error { return nil })
