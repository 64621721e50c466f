package approval

import (
	"path"
	"testing"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/shellcanon"
)

func shellCall(script string) Request {
	args := map[string]any{"command": script}
	c, _ := shellcanon.Canonical(args, "command")
	return Request{RunID: "run", Tool: "shell", Args: args, Canonical: c}
}

// fileCall is a read_file call whose canonical form resolves the path against /work, as the
// file tools' Canonical does.
func fileCall(p string) Request {
	args := map[string]any{"path": p}
	resolved := p
	if !path.IsAbs(p) {
		resolved = path.Join("/work", p)
	}
	return Request{RunID: "run", Tool: "read_file", Args: args,
		Canonical: tool.Canonical{Actions: []map[string]any{{"path": path.Clean(resolved)}}}}
}

func TestRulesSeeCanonicalForm(t *testing.T) {
	policy := &workflow.ApprovalPolicy{Rules: []workflow.ApprovalRule{
		{Tool: "shell", When: `args.argv[0] == "rm"`, Decision: "deny"},
		{Tool: "shell", When: `args.command startsWith "git "`, Decision: "auto"},
		{Tool: "shell", When: `args.command == "make test"`, Decision: "auto"},
		{Tool: "read_file", When: `args.path startsWith "/work/src/"`, Decision: "auto"},
	}}
	tests := []struct {
		name string
		req  Request
		want string // allowed by rule "auto", "deny-rule", or "asked" (fell through to prompt)
	}{
		{"git status", shellCall("git status"), "auto"},
		{"git with extra spaces", shellCall("git   status"), "auto"},
		{"two git commands", shellCall("git status && git diff"), "auto"},
		{"git then rm is denied", shellCall("git status; rm -rf /"), "deny-rule"},
		{"git then curl is asked", shellCall("git status; curl http://x"), "asked"},
		{"substitution inside git", shellCall("git log $(curl http://x)"), "asked"},
		{"rm in substitution", shellCall("git log $(rm -rf /)"), "deny-rule"},
		{"rm behind env", shellCall("env X=1 rm -rf /"), "deny-rule"},
		{"rm behind sh -c", shellCall(`sh -c "rm -rf /"`), "deny-rule"},
		{"function shadowing git", shellCall("git() { curl x; }; git status"), "asked"},
		{"dynamic command name", shellCall("$(echo git) status"), "asked"},
		{"eval", shellCall(`git status; eval "curl x"`), "asked"},
		{"exact rule", shellCall("make test"), "auto"},
		{"exact rule with redirect", shellCall("make test > /etc/cron.d/x"), "asked"},
		{"exact rule with more", shellCall("make test; make install"), "asked"},
		{"path under src", fileCall("src/main.go"), "auto"},
		{"path through dotdot", fileCall("src/../../etc/passwd"), "asked"},
		{"absolute outside", fileCall("/etc/passwd"), "asked"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ap := &answering{ans: ports.AnswerNo}
			f := newFlow(t, Config{Policy: policy, Approver: ap})
			d := decide(t, f, tc.req)
			got := "asked"
			switch {
			case d.Allowed && d.By == ports.ByRule:
				got = "auto"
			case !d.Allowed && d.By == ports.ByRule:
				got = "deny-rule"
			case ap.asked.Load() == 0:
				got = "unexpected: " + d.By
			}
			if got != tc.want {
				t.Errorf("Decide(%s %v) = %+v (%s), want %s", tc.req.Tool, tc.req.Args, d, got, tc.want)
			}
		})
	}
}

func TestBrokenRuleFailsClosed(t *testing.T) {
	// args.missing is an error for the templater: a loosening rule then never approves and a
	// tightening one applies.
	tests := []struct {
		decision string
		want     string
	}{{"auto", "asked"}, {"deny", "denied"}}
	for _, tc := range tests {
		policy := &workflow.ApprovalPolicy{Rules: []workflow.ApprovalRule{{When: `args.missing startsWith "x"`, Decision: tc.decision}}}
		ap := &answering{ans: ports.AnswerNo}
		f := newFlow(t, Config{Policy: policy, Approver: ap})
		d := decide(t, f, call("custom", map[string]any{"a": 1}))
		got := "asked"
		if ap.asked.Load() == 0 {
			got = "denied"
			if d.Allowed || d.By != ports.ByRule {
				got = "unexpected"
			}
		}
		if got != tc.want {
			t.Errorf("broken %s rule: Decide = %+v (%s), want %s", tc.decision, d, got, tc.want)
		}
	}
	// A condition that is not a boolean counts as broken too.
	policy := &workflow.ApprovalPolicy{Rules: []workflow.ApprovalRule{{When: `"yes"`, Decision: "auto"}}}
	ap := &answering{ans: ports.AnswerNo}
	f := newFlow(t, Config{Policy: policy, Approver: ap})
	if d := decide(t, f, call("custom", nil)); d.Allowed {
		t.Errorf("non-boolean auto rule: Decide = %+v, want not approved", d)
	}
}

func TestNoArgumentCallsMatchRules(t *testing.T) {
	policy := &workflow.ApprovalPolicy{Rules: []workflow.ApprovalRule{{Tool: "run_tests", When: `tool == "run_tests"`, Decision: "deny"}}}
	f := newFlow(t, Config{Policy: policy})
	req := Request{RunID: "run", Tool: "run_tests", Canonical: tool.Canonical{}}
	if d := decide(t, f, req); d.Allowed || d.By != ports.ByRule {
		t.Errorf("Decide(run_tests {}) = %+v, want denied by the rule", d)
	}
}

func TestAlwaysKeyIsTheWholeCanonicalCall(t *testing.T) {
	a := alwaysKey(shellCall("git status"))
	for _, other := range []Request{shellCall("git status; rm -rf /"), shellCall("git status --short"), fileCall("git status")} {
		if alwaysKey(other) == a {
			t.Errorf("alwaysKey(%v) = alwaysKey(git status)", other.Args)
		}
	}
	if alwaysKey(shellCall("git  status")) != a {
		t.Error("two spellings of one canonical call have different keys")
	}
	op1, op2 := shellCall("$x a"), shellCall("$y a")
	if alwaysKey(op1) == alwaysKey(op2) {
		t.Error("opaque calls with different arguments share a key")
	}
}
