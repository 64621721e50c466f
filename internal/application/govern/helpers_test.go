package govern_test

import (
	"context"
	"encoding/json"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/application/approval"
	"github.com/awf-dev/awf/internal/application/govern"
	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/schema"
	"github.com/awf-dev/awf/internal/infrastructure/shellcanon"
	"github.com/awf-dev/awf/internal/infrastructure/templater"
)

// testTool is a tool with a summary, a canonical form and annotations, whose execution is fn.
type testTool struct {
	name     string
	params   string
	readOnly bool
	canon    func(args map[string]any) (tool.Canonical, error)
	fn       func(ctx context.Context, inv tool.Invocation) tool.Result
}

func (t *testTool) Name() string                    { return t.name }
func (t *testTool) Description(tool.Context) string { return "test tool " + t.name }
func (t *testTool) Parameters() json.RawMessage {
	if t.params == "" {
		return json.RawMessage(`{"type":"object"}`)
	}
	return json.RawMessage(t.params)
}
func (t *testTool) Annotations() tool.Annotations { return tool.Annotations{ReadOnly: t.readOnly} }
func (t *testTool) Meta(args map[string]any) string {
	b, _ := json.Marshal(args)
	return t.name + " " + string(b)
}
func (t *testTool) Canonical(args map[string]any) (tool.Canonical, error) {
	if t.canon == nil {
		return tool.Canonical{Actions: []map[string]any{args}}, nil
	}
	return t.canon(args)
}
func (t *testTool) Execute(ctx context.Context, inv tool.Invocation) tool.Result {
	if t.fn == nil {
		return tool.OK("ok")
	}
	return t.fn(ctx, inv)
}

// readFile reads nothing, but resolves its path against /work like the real file tools.
func readFile() *testTool {
	return &testTool{
		name: "read_file", readOnly: true,
		params: `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`,
		canon: func(args map[string]any) (tool.Canonical, error) {
			p, _ := args["path"].(string)
			if !path.IsAbs(p) {
				p = path.Join("/work", p)
			}
			return tool.Canonical{Actions: []map[string]any{{"path": path.Clean(p)}}}, nil
		},
		fn: func(_ context.Context, inv tool.Invocation) tool.Result {
			return tool.OK("contents of " + inv.Args["path"].(string))
		},
	}
}

func shell() *testTool {
	return &testTool{
		name:   "shell",
		params: `{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`,
		canon:  func(args map[string]any) (tool.Canonical, error) { return shellcanon.Canonical(args, "command") },
		fn: func(_ context.Context, inv tool.Invocation) tool.Result {
			return tool.OK("ran " + inv.Args["command"].(string))
		},
	}
}

// setup is a registry with govern's stage and invoker, over the given tools.
type setup struct {
	gate  *govern.Gate
	reg   *registry.Registry
	tools ports.ToolInvoker
	audit *portstest.AuditLog
}

type options struct {
	approval approval.Config
	policy   ports.PolicyChecker
	limits   govern.Limits
	secrets  []string
	audit    ports.AuditSink
}

func newSetup(t testing.TB, opts options, ts ...tool.Tool) *setup {
	t.Helper()
	if opts.approval.Eval == nil {
		opts.approval.Eval = templater.New()
	}
	flow, err := approval.New(opts.approval)
	if err != nil {
		t.Fatal(err)
	}
	s := &setup{audit: &portstest.AuditLog{}}
	var auditSink ports.AuditSink = s.audit
	if opts.audit != nil {
		auditSink = opts.audit
	}
	clock := portstest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	clock.SetStep(time.Millisecond)
	s.gate, err = govern.New(govern.Deps{Approval: flow, Policy: opts.policy, Audit: auditSink, Clock: clock,
		Limits: opts.limits, Secrets: opts.secrets})
	if err != nil {
		t.Fatal(err)
	}
	s.reg, err = registry.New(registry.Config{Validator: schema.New(), Clock: clock, Stages: []registry.Stage{s.gate.Stage}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.reg.Load(ports.StaticTools{At: tool.LevelBuiltin, Set: tool.Set{Tools: ts}}); err != nil {
		t.Fatal(err)
	}
	s.tools = s.gate.Invoker(s.reg)
	return s
}

func req(name string, args map[string]any) ports.ToolRequest {
	return ports.ToolRequest{RunID: "run-1", Step: "implement", CallID: "call_1", Name: name, Args: args}
}

// denyDotDot is a policy that refuses paths with "..", as the sandbox does for paths outside
// the workspace.
var denyDotDot = ports.PolicyCheckerFunc(func(_ context.Context, c ports.GovernedCall) ports.PolicyDecision {
	if p, _ := c.Args["path"].(string); strings.Contains(p, "..") {
		return ports.PolicyDecision{Rule: "sandbox.paths.read", Layer: "L1", Reason: `path "` + p + `" is outside the workspace`}
	}
	return ports.PolicyDecision{Allowed: true, Rule: "sandbox.paths.read[0]", Layer: "L1", Backend: "landlock",
		Applied: map[string]string{"landlock_abi": "7"}}
})

// rulePolicy approves git commands by rule, as a workflow would.
func rulePolicy() *workflow.ApprovalPolicy {
	return &workflow.ApprovalPolicy{Rules: []workflow.ApprovalRule{
		{Tool: "shell", When: `args.argv[0] == "rm"`, Decision: "deny"},
		{Tool: "shell", When: `args.command startsWith "git "`, Decision: "auto"},
	}}
}
