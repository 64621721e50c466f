package govern_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/awf-dev/awf/internal/application/approval"
	"github.com/awf-dev/awf/internal/application/govern"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/audit"
)

var ignoreTime = cmpopts.IgnoreFields(ports.AuditRecord{}, "Time")

func TestAllowedCall(t *testing.T) {
	s := newSetup(t, options{policy: denyDotDot}, readFile())
	res, err := s.tools.Invoke(t.Context(), req("read_file", map[string]any{"path": "src/a.go"}))
	if err != nil || !res.Succeeded() || res.Output != "contents of src/a.go" {
		t.Fatalf("Invoke = %+v, %v", res, err)
	}
	if res.Approval != ports.ByAuto || res.Denied {
		t.Errorf("result approval = %q, denied = %v; want auto, false", res.Approval, res.Denied)
	}
	started := ports.AuditRecord{
		RunID: "run-1", Step: "implement", CallID: "call_1", Tool: "read_file",
		Arguments: map[string]any{"path": "src/a.go"}, Meta: `read_file {"path":"src/a.go"}`,
		Approval: &ports.AuditApproval{Decision: "allow", By: "auto", Rule: "default: read-only tool"},
		Sandbox:  &ports.AuditSandbox{Decision: "allow", Rule: "sandbox.paths.read[0]", Layer: "L1", Backend: "landlock", Applied: map[string]string{"landlock_abi": "7"}},
		Verdict:  &ports.AuditVerdict{Decision: "allow", By: "auto", Layer: "approval", Rule: "default: read-only tool"},
		Outcome:  "started",
	}
	done := started
	done.Outcome, done.DurationMs, done.OutputSize = "ok", 1, len("contents of src/a.go")
	want := []ports.AuditRecord{started, done}
	if diff := cmp.Diff(want, s.audit.Records(), ignoreTime); diff != "" {
		t.Errorf("audit records (-want +got):\n%s", diff)
	}
}

func TestDenials(t *testing.T) {
	userSaysNo := ports.ApproverFunc(func(context.Context, ports.ApprovalRequest) (ports.Answer, error) {
		return ports.AnswerNo, nil
	})
	tests := []struct {
		name     string
		opts     options
		tool     string
		args     map[string]any
		by       string
		message  string
		approval *ports.AuditApproval
		sandbox  string // sandbox decision in the record, "" for none
		verdict  ports.AuditVerdict
	}{
		{
			name: "policy", opts: options{policy: denyDotDot}, tool: "read_file", args: map[string]any{"path": "../x"},
			by: "policy", message: `denied by policy: path "../x" is outside the workspace`, sandbox: "deny",
			verdict: ports.AuditVerdict{Decision: "deny", By: "policy", Layer: "L1", Rule: "sandbox.paths.read"},
		},
		{
			name: "user", opts: options{approval: approval.Config{Approver: userSaysNo}}, tool: "shell", args: map[string]any{"command": "rm -rf build"},
			by: "user", message: "denied by the user", approval: &ports.AuditApproval{Decision: "deny", By: "user", Answer: "no",
				Reason: "denied by the user: the person at the terminal refused this call; do not retry it, try another way or explain what you need"}, sandbox: "allow",
			verdict: ports.AuditVerdict{Decision: "deny", By: "user", Layer: "approval"},
		},
		{
			name: "no terminal", tool: "shell", args: map[string]any{"command": "make"},
			by: "non_interactive", message: "denied: approval required and no terminal (run with --yes or --approve auto)",
			approval: &ports.AuditApproval{Decision: "deny", By: "non_interactive", Rule: "--non-interactive=deny",
				Reason: "denied: approval required and no terminal (run with --yes or --approve auto)"}, sandbox: "allow",
			verdict: ports.AuditVerdict{Decision: "deny", By: "non_interactive", Layer: "approval", Rule: "--non-interactive=deny"},
		},
		{
			name: "approval deny mode", opts: options{approval: approval.Config{Tools: []workflow.ToolSpec{{Name: "shell", Approval: "deny"}}}},
			tool: "shell", args: map[string]any{"command": "ls"},
			by: "policy", message: `denied: tool "shell" may not be called in this workflow (tools.shell.approval: deny)`,
			approval: &ports.AuditApproval{Decision: "deny", By: "policy", Rule: "tools.shell.approval",
				Reason: `denied: tool "shell" may not be called in this workflow (tools.shell.approval: deny)`}, sandbox: "allow",
			verdict: ports.AuditVerdict{Decision: "deny", By: "policy", Layer: "approval", Rule: "tools.shell.approval"},
		},
		{
			name: "gate size", opts: options{limits: govern.Limits{MaxArgBytes: 100}}, tool: "shell", args: map[string]any{"command": strings.Repeat("x", 200)},
			by: "gate", message: "denied by the call gate: arguments are about",
			approval: &ports.AuditApproval{Decision: "deny", By: "gate", Rule: "call gate"},
			verdict:  ports.AuditVerdict{Decision: "deny", By: "gate", Layer: "L0 gate", Rule: "max_arg_bytes"},
		},
		{
			name: "tool refusal", tool: "read_file", args: map[string]any{"path": "refuse"},
			by: "tool", message: "read_file: outside", sandbox: "deny",
			verdict: ports.AuditVerdict{Decision: "deny", By: "tool", Layer: "L1 os.Root", Rule: "sandbox.paths.read"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ran := false
			sh := shell()
			sh.fn = func(context.Context, tool.Invocation) tool.Result { ran = true; return tool.OK("") }
			rf := readFile()
			rf.fn = func(ctx context.Context, inv tool.Invocation) tool.Result {
				if inv.Args["path"] == "refuse" { // a layer inside the tool refuses: it did nothing
					return tool.Refused("L1 os.Root", "sandbox.paths.read", "read_file: outside")
				}
				return sh.fn(ctx, inv)
			}
			s := newSetup(t, tc.opts, sh, rf)
			res, err := s.tools.Invoke(t.Context(), req(tc.tool, tc.args))
			if err != nil {
				t.Fatalf("Invoke error: %v (denials are results)", err)
			}
			if ran {
				t.Error("the denied tool ran")
			}
			if res.Succeeded() || !res.Denied || res.Approval != tc.by || !strings.HasPrefix(res.Error, tc.message) {
				t.Errorf("result = %+v, want denied by %s: %q", res, tc.by, tc.message)
			}
			recs := slices.DeleteFunc(s.audit.Records(), func(r ports.AuditRecord) bool { return r.Outcome == ports.OutcomeStarted })
			if len(recs) != 1 {
				t.Fatalf("%d audit records, want 1 (besides a started record)", len(recs))
			}
			r := recs[0]
			if r.Outcome != ports.OutcomeDenied || r.Error != res.Error {
				t.Errorf("record outcome %q, error %q; want denied, %q", r.Outcome, r.Error, res.Error)
			}
			if tc.approval != nil || tc.by == "policy" && tc.sandbox == "deny" {
				if diff := cmp.Diff(tc.approval, r.Approval); diff != "" {
					t.Errorf("record approval (-want +got):\n%s", diff)
				}
			}
			got := ""
			if r.Sandbox != nil {
				got = r.Sandbox.Decision
			}
			if got != tc.sandbox {
				t.Errorf("record sandbox decision = %q, want %q", got, tc.sandbox)
			}
			tc.verdict.Reason = res.Error
			if diff := cmp.Diff(&tc.verdict, r.Verdict); diff != "" {
				t.Errorf("record verdict (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNonInteractiveFailEndsTheRun(t *testing.T) {
	s := newSetup(t, options{approval: approval.Config{NonInteractive: "fail"}}, shell())
	res, err := s.tools.Invoke(t.Context(), req("shell", map[string]any{"command": "make"}))
	if fault.KindOf(err) != fault.Denied {
		t.Fatalf("Invoke error = %v, want fault.Denied", err)
	}
	if !res.Denied || res.Approval != ports.ByNonInteractive {
		t.Errorf("result = %+v, want denied by non_interactive", res)
	}
	recs := s.audit.Records()
	if len(recs) != 1 || recs[0].Outcome != ports.OutcomeDenied || recs[0].Approval.By != ports.ByNonInteractive {
		t.Errorf("audit = %+v, want one denied record", recs)
	}
}

func TestErroredAndTimedOutCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fails := &testTool{name: "fails", readOnly: true, fn: func(context.Context, tool.Invocation) tool.Result {
			return tool.Errorf("exit status 2: no such file")
		}}
		hangs := &testTool{name: "hangs", readOnly: true, fn: func(ctx context.Context, _ tool.Invocation) tool.Result {
			<-ctx.Done()
			return tool.Errorf("killed")
		}}
		s := newSetup(t, options{}, fails, hangs)
		res, err := s.tools.Invoke(t.Context(), req("fails", nil))
		if err != nil || res.Succeeded() || res.Denied {
			t.Errorf("fails: %+v, %v", res, err)
		}
		r := req("hangs", nil)
		r.Timeout = time.Second
		if res, err = s.tools.Invoke(t.Context(), r); err != nil || res.Succeeded() {
			t.Errorf("hangs: %+v, %v", res, err)
		}
		recs := completions(s.audit.Records())
		if len(recs) != 2 {
			t.Fatalf("%d completion records, want 2", len(recs))
		}
		if recs[0].Outcome != ports.OutcomeError || recs[0].Error != "exit status 2: no such file" {
			t.Errorf("fails record: outcome %q error %q", recs[0].Outcome, recs[0].Error)
		}
		if recs[1].Outcome != ports.OutcomeTimeout || !strings.Contains(recs[1].Error, "timed out") {
			t.Errorf("hangs record: outcome %q error %q", recs[1].Outcome, recs[1].Error)
		}
	})
}

func TestGateRefusalsBeforeTheStageAreAudited(t *testing.T) {
	s := newSetup(t, options{}, readFile())
	tests := []struct {
		name string
		req  ports.ToolRequest
		kind fault.Kind
		msg  string
		rule string
	}{
		{"unknown tool", req("read_fil", map[string]any{"path": "a"}), fault.Invalid, "read_file", ports.RuleUnknownTool},
		{"unknown argument", req("read_file", map[string]any{"path": "a", "mode": "x"}), fault.System, "invalid arguments", ports.RuleArgsSchema},
		{"missing argument", req("read_file", map[string]any{}), fault.System, "invalid arguments", ports.RuleArgsSchema},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(s.audit.Records())
			res, err := s.tools.Invoke(t.Context(), tc.req)
			if tc.kind != fault.System && fault.KindOf(err) != tc.kind {
				t.Errorf("error = %v, want kind %v", err, tc.kind)
			}
			if tc.kind == fault.System && err != nil {
				t.Errorf("error = %v, want an error result only", err)
			}
			if !res.Denied || res.Approval != ports.ByGate || !strings.Contains(res.Error, tc.msg) {
				t.Errorf("result = %+v, want denied by the gate mentioning %q", res, tc.msg)
			}
			recs := s.audit.Records()
			if len(recs) != before+1 {
				t.Fatalf("%d new records, want 1", len(recs)-before)
			}
			r := recs[len(recs)-1]
			if r.Tool != tc.req.Name || r.Outcome != ports.OutcomeDenied || r.Approval.By != ports.ByGate || r.Error != res.Error {
				t.Errorf("record = %+v", r)
			}
			want := &ports.AuditVerdict{Decision: "deny", By: "gate", Layer: "L0 gate", Rule: tc.rule, Reason: res.Error}
			if diff := cmp.Diff(want, r.Verdict); diff != "" {
				t.Errorf("record verdict (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeepArgumentsRefused(t *testing.T) {
	s := newSetup(t, options{limits: govern.Limits{MaxArgDepth: 3}}, &testTool{name: "deep", readOnly: true})
	deep := map[string]any{"a": map[string]any{"b": []any{map[string]any{"c": "d"}}}}
	res, _ := s.tools.Invoke(t.Context(), req("deep", deep))
	if !res.Denied || !strings.Contains(res.Error, "nest deeper than 3") {
		t.Errorf("result = %+v, want refused for depth", res)
	}
	shallow := map[string]any{"a": map[string]any{"b": "c"}}
	if res, _ := s.tools.Invoke(t.Context(), req("deep", shallow)); !res.Succeeded() {
		t.Errorf("shallow result = %+v, want ok", res)
	}
}

func TestNestedCallsAreGoverned(t *testing.T) {
	s := newSetup(t, options{policy: denyDotDot}, readFile())
	meta := &tool.Manifest{Name: "peek", Description: "read a file twice", Path: "peek.yaml",
		Steps: []tool.MetaStep{
			{Tool: "read_file", Input: "{input}", Args: map[string]tool.StepArg{"path": tool.TextArg("src/a.go")}},
			{Tool: "read_file", Input: "{input}", Args: map[string]tool.StepArg{"path": tool.TextArg("../etc/passwd")}},
		}}
	if _, err := s.reg.Load(ports.StaticTools{At: tool.LevelProject, Set: tool.Set{Manifests: []*tool.Manifest{meta}}}); err != nil {
		t.Fatal(err)
	}
	s.tools.Invoke(t.Context(), req("peek", map[string]any{}))
	type seen struct {
		Tool, Outcome string
		Depth         int
	}
	var got []seen
	for _, r := range s.audit.Records() {
		got = append(got, seen{r.Tool, r.Outcome, r.Depth})
	}
	// peek itself is not read-only: without a terminal it is denied before its steps run.
	want := []seen{{"peek", "denied", 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}

	s2 := newSetup(t, options{policy: denyDotDot, approval: approval.Config{Tools: []workflow.ToolSpec{{Name: "peek", Approval: "auto"}}}}, readFile())
	if _, err := s2.reg.Load(ports.StaticTools{At: tool.LevelProject, Set: tool.Set{Manifests: []*tool.Manifest{meta}}}); err != nil {
		t.Fatal(err)
	}
	s2.tools.Invoke(t.Context(), req("peek", map[string]any{}))
	got = nil
	for _, r := range s2.audit.Records() {
		got = append(got, seen{r.Tool, r.Outcome, r.Depth})
	}
	want = []seen{{"peek", "started", 0}, {"read_file", "started", 1}, {"read_file", "ok", 1}, {"read_file", "denied", 1}, {"peek", "error", 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records with peek approved (-want +got):\n%s", diff)
	}
}

func TestAuditFailureIsAFault(t *testing.T) {
	broken := &portstest.AuditLog{Err: errors.New("disk full")}
	s := newSetup(t, options{audit: broken}, readFile())
	_, err := s.tools.Invoke(t.Context(), req("read_file", map[string]any{"path": "a"}))
	if fault.KindOf(err) != fault.System || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Invoke with a failing audit log: error %v, want fault.System", err)
	}
	_, err = s.tools.Invoke(t.Context(), req("nope", nil))
	if !strings.Contains(fmtErr(err), "disk full") {
		t.Errorf("refused call with a failing audit log: error %v, want it to mention the audit failure", err)
	}
}

// TestStartedRecordBeforeTheToolRuns: the started record is in the log while the tool runs,
// so a call awf is killed in leaves a trace; if it cannot be written the tool does not run.
func TestStartedRecordBeforeTheToolRuns(t *testing.T) {
	var s *setup
	var during []ports.AuditRecord
	probe := &testTool{name: "probe", readOnly: true, fn: func(context.Context, tool.Invocation) tool.Result {
		during = s.audit.Records()
		return tool.OK("done")
	}}
	s = newSetup(t, options{}, probe)
	if res, err := s.tools.Invoke(t.Context(), req("probe", nil)); err != nil || !res.Succeeded() {
		t.Fatalf("Invoke = %+v, %v", res, err)
	}
	if len(during) != 1 || during[0].Outcome != ports.OutcomeStarted || during[0].Approval == nil || during[0].Sandbox == nil {
		t.Errorf("records while the tool ran = %+v, want one started record with its approval and sandbox", during)
	}

	ran := false
	failStarted := ports.AuditSinkFunc(func(_ context.Context, rec ports.AuditRecord) error {
		if rec.Outcome == ports.OutcomeStarted {
			return errors.New("disk full")
		}
		return nil
	})
	s2 := newSetup(t, options{audit: failStarted}, &testTool{name: "probe", readOnly: true, fn: func(context.Context, tool.Invocation) tool.Result {
		ran = true
		return tool.OK("done")
	}})
	res, err := s2.tools.Invoke(t.Context(), req("probe", nil))
	if ran || fault.KindOf(err) != fault.System || !strings.Contains(err.Error(), "disk full") || !res.Denied {
		t.Errorf("with the started record failing: ran %v, result %+v, error %v; want not run, denied, a fault.System error", ran, res, err)
	}
}

// completions drops started records: one record per call, with its outcome.
func completions(recs []ports.AuditRecord) []ports.AuditRecord {
	var out []ports.AuditRecord
	for _, r := range recs {
		if r.Outcome != ports.OutcomeStarted {
			out = append(out, r)
		}
	}
	return out
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestInvokerDetectsMissingStage(t *testing.T) {
	s := newSetup(t, options{}, readFile())
	// An invoker that runs calls without the stage, as a registry built without it does.
	ungoverned := s.gate.Invoker(invokerFunc(func(ctx context.Context, r ports.ToolRequest) (tool.Result, error) {
		return tool.OK("ran anyway"), nil
	}))
	_, err := ungoverned.Invoke(t.Context(), req("read_file", map[string]any{"path": "a"}))
	if fault.KindOf(err) != fault.System || !strings.Contains(err.Error(), "outside the governed path") {
		t.Errorf("Invoke through a registry without the stage: %v, want a fault.System error", err)
	}
}

type invokerFunc func(ctx context.Context, r ports.ToolRequest) (tool.Result, error)

func (f invokerFunc) Invoke(ctx context.Context, r ports.ToolRequest) (tool.Result, error) {
	return f(ctx, r)
}

func TestConcurrentCallsEachAudited(t *testing.T) {
	s := newSetup(t, options{}, readFile())
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { s.tools.Invoke(t.Context(), req("read_file", map[string]any{"path": "a"})) })
	}
	wg.Wait()
	recs := s.audit.Records()
	if n, done := len(recs), len(completions(recs)); n != 100 || done != 50 {
		t.Errorf("%d records, %d of them completions, for 50 calls; want 100 and 50", n, done)
	}
}

func TestNewNamesMissingDeps(t *testing.T) {
	_, err := govern.New(govern.Deps{})
	if fault.KindOf(err) != fault.System || !strings.Contains(err.Error(), "Approval, Audit, Clock") {
		t.Errorf("New({}) = %v", err)
	}
}

// TestAuditFileEndToEnd runs allowed, denied and failing calls into the real audit log and
// reads it back: masked secrets, mode 0600, one valid line per call.
func TestAuditFileEndToEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".awf", "audit.jsonl")
	log, err := audit.Open(path, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	httpTool := &testTool{name: "http_request", readOnly: true, fn: func(context.Context, tool.Invocation) tool.Result {
		return tool.Errorf("GET failed: 401 for token sk-abcdefghijklmnopqrstuv")
	}}
	s := newSetup(t, options{policy: denyDotDot, audit: log, secrets: []string{"hunter2-db-pass"}}, readFile(), shell(), httpTool)
	calls := []ports.ToolRequest{
		req("read_file", map[string]any{"path": "src/a.go"}),
		req("read_file", map[string]any{"path": "../../etc/shadow"}),
		req("shell", map[string]any{"command": "psql postgres://app:hunter2-db-pass@db/app"}),
		req("http_request", map[string]any{"url": "https://api.example.com", "headers": map[string]any{"Authorization": "Bearer abcdefghijkl"}}),
	}
	for _, c := range calls {
		s.tools.Invoke(t.Context(), c)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2-db-pass", "abcdefghijkl", "sk-abcdefghijklmnopqrstuv"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("audit log contains %q:\n%s", secret, data)
		}
	}
	if n := strings.Count(string(data), "\n"); n != 6 {
		t.Errorf("audit log has %d lines, want 6: a started record for each of the 2 calls that ran, and 4 results", n)
	}
	recs, stats, err := audit.ReadFile(path, audit.Filter{})
	if err != nil || stats != (audit.Stats{}) {
		t.Fatalf("ReadFile = %v, %+v", err, stats)
	}
	var outcomes []string
	for _, r := range recs {
		outcomes = append(outcomes, r.Tool+":"+r.Outcome)
	}
	want := []string{"read_file:ok", "read_file:denied", "shell:denied", "http_request:error"}
	if diff := cmp.Diff(want, outcomes); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("audit log mode = %v, %v; want 0600", st.Mode(), err)
	}
}
