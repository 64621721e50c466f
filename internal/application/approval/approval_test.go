package approval

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/templater"
)

// answering is an approver that answers every request with ans and counts the requests.
type answering struct {
	ans   ports.Answer
	asked atomic.Int32
}

func (a *answering) Approve(ctx context.Context, req ports.ApprovalRequest) (ports.Answer, error) {
	a.asked.Add(1)
	return a.ans, nil
}

func newFlow(t *testing.T, cfg Config) *Flow {
	t.Helper()
	if cfg.Eval == nil {
		cfg.Eval = templater.New()
	}
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// call is a request for tool with args as its only canonical action.
func call(name string, args map[string]any) Request {
	return Request{RunID: "run", Step: "step", CallID: "c", Tool: name, Args: args,
		Canonical: tool.Canonical{Actions: []map[string]any{args}}}
}

func decide(t *testing.T, f *Flow, req Request) ports.ApprovalDecision {
	t.Helper()
	d, err := f.Decide(t.Context(), req)
	if err != nil {
		t.Fatalf("Decide(%s) error: %v", req.Tool, err)
	}
	return d
}

func TestModes(t *testing.T) {
	tools := []workflow.ToolSpec{
		{Name: "read_file", Approval: "auto"},
		{Name: "write_file", Approval: "prompt"},
		{Name: "shell", Approval: "deny"},
		{Name: "ro_custom", ReadOnly: true},
		{Name: "custom"},
	}
	tests := []struct {
		name     string
		policy   *workflow.ApprovalPolicy
		tool     string
		readOnly bool
		answer   ports.Answer
		allowed  bool
		by       string
		rule     string
	}{
		{"tool auto", nil, "read_file", false, "", true, ports.ByAuto, "tools.read_file.approval"},
		{"tool prompt yes", nil, "write_file", false, ports.AnswerYes, true, ports.ByUser, ""},
		{"tool prompt no", nil, "write_file", false, ports.AnswerNo, false, ports.ByUser, ""},
		{"tool deny", nil, "shell", false, "", false, ports.ByPolicy, "tools.shell.approval"},
		{"default read-only tool", nil, "list_dir", true, "", true, ports.ByAuto, "default: read-only tool"},
		{"default read-only spec", nil, "ro_custom", false, "", true, ports.ByAuto, "default: read-only tool"},
		{"default other tool asks", nil, "custom", false, ports.AnswerNo, false, ports.ByUser, ""},
		{"workflow default", &workflow.ApprovalPolicy{Default: "auto"}, "custom", false, "", true, ports.ByAuto, "approval.default"},
		{"workflow default deny", &workflow.ApprovalPolicy{Default: "deny"}, "custom", false, "", false, ports.ByPolicy, "approval.default"},
		{"tool mode beats default", &workflow.ApprovalPolicy{Default: "deny"}, "read_file", false, "", true, ports.ByAuto, "tools.read_file.approval"},
		{"rule beats tool mode", &workflow.ApprovalPolicy{Rules: []workflow.ApprovalRule{{Tool: "write_file", Decision: "auto"}}},
			"write_file", false, "", true, ports.ByRule, "approval.rules[0]"},
		{"rule cannot lift tool deny", &workflow.ApprovalPolicy{Rules: []workflow.ApprovalRule{{Tool: "*", Decision: "auto"}}},
			"shell", false, "", false, ports.ByPolicy, "tools.shell.approval"},
		{"first matching rule wins", &workflow.ApprovalPolicy{Rules: []workflow.ApprovalRule{
			{Tool: "nothing", Decision: "deny"}, {Tool: "write_*", Decision: "deny"}, {Decision: "auto"}}},
			"write_file", false, "", false, ports.ByRule, "approval.rules[1]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ap := &answering{ans: tc.answer}
			f := newFlow(t, Config{Policy: tc.policy, Tools: tools, Approver: ap})
			req := call(tc.tool, map[string]any{"path": "x"})
			req.ReadOnly = tc.readOnly
			d := decide(t, f, req)
			if d.Allowed != tc.allowed || d.By != tc.by || d.Rule != tc.rule {
				t.Errorf("Decide(%s) = %+v, want allowed=%v by=%s rule=%q", tc.tool, d, tc.allowed, tc.by, tc.rule)
			}
			if asked := ap.asked.Load() > 0; asked != (tc.answer != "") {
				t.Errorf("Decide(%s) asked = %v, want %v", tc.tool, asked, tc.answer != "")
			}
			if !d.Allowed && d.Reason == "" {
				t.Errorf("Decide(%s) denied without a reason", tc.tool)
			}
		})
	}
}

func TestFlags(t *testing.T) {
	tools := []workflow.ToolSpec{{Name: "read_file", Approval: "auto"}, {Name: "write_file", Approval: "prompt"}, {Name: "shell", Approval: "deny"}}
	policy := &workflow.ApprovalPolicy{Rules: []workflow.ApprovalRule{{Tool: "http_request", Decision: "deny"}}}
	tests := []struct {
		name     string
		override string
		yes      bool
		tool     string
		allowed  bool
		asked    bool
		by       string
	}{
		{"--yes approves prompt", "", true, "write_file", true, false, ports.ByFlag},
		{"--yes keeps auto", "", true, "read_file", true, false, ports.ByAuto},
		{"--yes keeps tool deny", "", true, "shell", false, false, ports.ByPolicy},
		{"--yes keeps rule deny", "", true, "http_request", false, false, ports.ByRule},
		{"--approve auto approves prompt", "auto", false, "write_file", true, false, ports.ByFlag},
		{"--approve auto keeps tool deny", "auto", false, "shell", false, false, ports.ByPolicy},
		{"--approve auto keeps rule deny", "auto", false, "http_request", false, false, ports.ByRule},
		{"--approve prompt asks for auto tools", "prompt", false, "read_file", true, true, ports.ByUser},
		{"--approve prompt beats --yes", "prompt", true, "write_file", true, true, ports.ByUser},
		{"--approve deny refuses auto tools", "deny", false, "read_file", false, false, ports.ByFlag},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ap := &answering{ans: ports.AnswerYes}
			f := newFlow(t, Config{Policy: policy, Tools: tools, Override: tc.override, Yes: tc.yes, Approver: ap})
			d := decide(t, f, call(tc.tool, nil))
			if d.Allowed != tc.allowed || d.By != tc.by {
				t.Errorf("Decide(%s) = %+v, want allowed=%v by=%s", tc.tool, d, tc.allowed, tc.by)
			}
			if asked := ap.asked.Load() > 0; asked != tc.asked {
				t.Errorf("Decide(%s) asked = %v, want %v", tc.tool, asked, tc.asked)
			}
		})
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		kind fault.Kind
	}{
		{"approve flag", Config{Override: "yes"}, fault.Usage},
		{"non-interactive flag", Config{NonInteractive: "ask"}, fault.Usage},
		{"rule decision", Config{Policy: &workflow.ApprovalPolicy{Rules: []workflow.ApprovalRule{{Decision: "maybe"}}}}, fault.Invalid},
		{"rule without evaluator", Config{Policy: &workflow.ApprovalPolicy{Rules: []workflow.ApprovalRule{{When: "true", Decision: "auto"}}}}, fault.Invalid},
	}
	for _, tc := range tests {
		_, err := New(tc.cfg)
		if fault.KindOf(err) != tc.kind {
			t.Errorf("New(%s) = %v, want a %v error", tc.name, err, tc.kind)
		}
	}
}

func TestQuota(t *testing.T) {
	tools := []workflow.ToolSpec{{Name: "shell", Approval: "prompt", MaxCalls: 2}}
	ap := &answering{ans: ports.AnswerNo}
	f := newFlow(t, Config{Tools: tools, Approver: ap})
	// A refused call does not use the quota.
	if d := decide(t, f, call("shell", nil)); d.Allowed {
		t.Fatalf("Decide = %+v, want the user's no", d)
	}
	ap.ans = ports.AnswerYes
	for i := range 2 {
		if d := decide(t, f, call("shell", nil)); !d.Allowed {
			t.Fatalf("call %d = %+v, want allowed", i+1, d)
		}
	}
	asked := ap.asked.Load()
	d := decide(t, f, call("shell", nil))
	if d.Allowed || d.By != ports.ByQuota || d.Rule != "tools.shell.max_calls" || !strings.Contains(d.Reason, "at most 2") {
		t.Errorf("third call = %+v, want denied by quota", d)
	}
	if ap.asked.Load() != asked {
		t.Error("a call over its quota was put to the user")
	}
	other := call("shell", nil)
	other.RunID = "other-run"
	if d := decide(t, f, other); !d.Allowed {
		t.Errorf("another run's call = %+v, want allowed: quotas are per run", d)
	}
	f.End("run")
	if d := decide(t, f, call("shell", nil)); !d.Allowed {
		t.Errorf("after End = %+v, want allowed", d)
	}
}

func TestQuotaUnderConcurrency(t *testing.T) {
	f := newFlow(t, Config{Tools: []workflow.ToolSpec{{Name: "read_file", Approval: "auto", MaxCalls: 5}}})
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if d, _ := f.Decide(t.Context(), call("read_file", nil)); d.Allowed {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	if got := allowed.Load(); got != 5 {
		t.Errorf("%d of 50 concurrent calls allowed, want 5", got)
	}
}

func TestNonInteractive(t *testing.T) {
	noTerminal := ports.ApproverFunc(func(context.Context, ports.ApprovalRequest) (ports.Answer, error) {
		return "", ports.ErrNoApprover
	})
	tools := []workflow.ToolSpec{{Name: "write_file", Approval: "prompt"}}
	for _, approver := range []ports.Approver{nil, noTerminal} {
		f := newFlow(t, Config{Tools: tools, Approver: approver})
		d := decide(t, f, call("write_file", nil))
		if d.Allowed || d.By != ports.ByNonInteractive ||
			d.Reason != "denied: approval required and no terminal (run with --yes or --approve auto)" {
			t.Errorf("deny mode: Decide = %+v", d)
		}

		f = newFlow(t, Config{Tools: tools, Approver: approver, NonInteractive: "fail"})
		d, err := f.Decide(t.Context(), call("write_file", nil))
		if fault.KindOf(err) != fault.Denied || d.Allowed || d.By != ports.ByNonInteractive {
			t.Errorf("fail mode: Decide = %+v, %v; want a fault.Denied error", d, err)
		}
		if err != nil && !strings.Contains(err.Error(), `tool "write_file" needs approval`) {
			t.Errorf("fail mode error = %q", err)
		}
	}
	// Auto calls never need a terminal.
	f := newFlow(t, Config{Tools: []workflow.ToolSpec{{Name: "read_file", Approval: "auto"}}, NonInteractive: "fail"})
	if d := decide(t, f, call("read_file", nil)); !d.Allowed {
		t.Errorf("auto call without terminal = %+v, want allowed", d)
	}
}

func TestApproverFailureIsNonInteractive(t *testing.T) {
	broken := ports.ApproverFunc(func(context.Context, ports.ApprovalRequest) (ports.Answer, error) {
		return "", errors.New("read answer: EOF")
	})
	f := newFlow(t, Config{Tools: []workflow.ToolSpec{{Name: "w", Approval: "prompt"}}, Approver: broken})
	d := decide(t, f, call("w", nil))
	if d.Allowed || d.By != ports.ByNonInteractive || !strings.Contains(d.Reason, "read answer: EOF") {
		t.Errorf("Decide with a broken terminal = %+v", d)
	}
}

func TestAlways(t *testing.T) {
	ap := &answering{ans: ports.AnswerAlways}
	f := newFlow(t, Config{Tools: []workflow.ToolSpec{{Name: "shell", Approval: "prompt"}}, Approver: ap})
	first := call("shell", map[string]any{"command": "git status"})
	if d := decide(t, f, first); !d.Allowed || d.Answer != ports.AnswerAlways {
		t.Fatalf("first call = %+v, want allowed always", d)
	}
	if d := decide(t, f, first); !d.Allowed || d.By != ports.ByUser || d.Rule != "always" {
		t.Errorf("identical call = %+v, want allowed by the earlier always", d)
	}
	if n := ap.asked.Load(); n != 1 {
		t.Errorf("asked %d times, want 1", n)
	}
	ap.ans = ports.AnswerNo
	for _, cmd := range []string{"git status --porcelain", "git", "git status; rm -rf /"} {
		if d := decide(t, f, call("shell", map[string]any{"command": cmd})); d.Allowed {
			t.Errorf("call %q after always for git status = %+v, want asked and refused", cmd, d)
		}
	}
	other := first
	other.RunID = "next-run"
	if d := decide(t, f, other); d.Allowed {
		t.Errorf("same call in another run = %+v, want asked again", d)
	}
}

func TestAlwaysConcurrentCallsAskOnce(t *testing.T) {
	ap := &answering{ans: ports.AnswerAlways}
	f := newFlow(t, Config{Tools: []workflow.ToolSpec{{Name: "shell", Approval: "prompt"}}, Approver: ap})
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { decide(t, f, call("shell", map[string]any{"command": "make"})) })
	}
	wg.Wait()
	if n := ap.asked.Load(); n != 1 {
		t.Errorf("10 identical concurrent calls asked %d times, want 1", n)
	}
}

func TestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen time.Duration
		waits := ports.ApproverFunc(func(ctx context.Context, req ports.ApprovalRequest) (ports.Answer, error) {
			seen = req.Timeout
			<-ctx.Done()
			return "", ctx.Err()
		})
		f := newFlow(t, Config{Policy: &workflow.ApprovalPolicy{Timeout: 30 * time.Second}, Approver: waits})
		start := time.Now()
		d := decide(t, f, call("custom", nil))
		if d.Allowed || d.By != ports.ByTimeout || d.Answer != ports.AnswerTimeout || !strings.Contains(d.Reason, "30s") {
			t.Errorf("Decide = %+v, want denied by timeout", d)
		}
		if waited := time.Since(start); waited != 30*time.Second || seen != 30*time.Second {
			t.Errorf("waited %v, approver told %v; want 30s", waited, seen)
		}
	})
}

func TestApproverAnswersTimeout(t *testing.T) {
	f := newFlow(t, Config{Approver: &answering{ans: ports.AnswerTimeout}})
	if d := decide(t, f, call("custom", nil)); d.Allowed || d.By != ports.ByTimeout {
		t.Errorf("Decide = %+v, want denied by timeout", d)
	}
	if f.timeout != DefaultTimeout {
		t.Errorf("timeout = %v, want the default %v", f.timeout, DefaultTimeout)
	}
}

func TestCancelledWhileAsking(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	waits := ports.ApproverFunc(func(ctx context.Context, req ports.ApprovalRequest) (ports.Answer, error) {
		cancel()
		<-ctx.Done()
		return "", ctx.Err()
	})
	f := newFlow(t, Config{Approver: waits})
	d, err := f.Decide(ctx, call("custom", nil))
	if !errors.Is(err, context.Canceled) || d.Allowed {
		t.Errorf("Decide after cancel = %+v, %v; want context.Canceled", d, err)
	}
}
