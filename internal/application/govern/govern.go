// Package govern is the governed call path of DESIGN section 5: every tool call, of every
// kind and at every meta-tool depth, passes the call gate (size and depth of its arguments),
// the sandbox policy (ports.PolicyChecker), approval (package approval) and, allowed or not,
// leaves one audit record (ports.AuditSink). It plugs into the tool registry as a pipeline
// stage (Gate.Stage) after name resolution and schema validation, and wraps the registry's
// Invoke (Gate.Invoker) so that calls refused by those earlier checks are audited too.
// Denials are error results for the model; only --non-interactive=fail and a failed audit
// write are Go errors.
package govern

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/awf-dev/awf/internal/application/approval"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// Default call-gate limits.
const (
	DefaultMaxArgBytes = 1 << 20 // encoded size of a call's arguments, roughly
	DefaultMaxArgDepth = 32      // nesting of objects and arrays in a call's arguments
)

// Limits are the call gate's limits on arguments; zero fields take the defaults.
type Limits struct {
	MaxArgBytes int
	MaxArgDepth int
}

// Deps are what a Gate needs. Approval, Audit and Clock are required.
type Deps struct {
	Approval *approval.Flow
	// Policy checks the sandbox policy; nil means ports.AllowAll, which the audit record
	// shows as rule allow_all.
	Policy ports.PolicyChecker
	Audit  ports.AuditSink
	Clock  ports.Clock
	Log    *slog.Logger
	Limits Limits
	// Secrets are values masked in every audit record (the values of the environment
	// variables the policy marks secret).
	Secrets []string
}

// Gate runs calls through the governed path. Build it with New; safe for concurrent use.
type Gate struct {
	d Deps
}

// New checks deps and returns a Gate, or a fault.System error naming what is missing.
func New(d Deps) (*Gate, error) {
	var missing []string
	if d.Approval == nil {
		missing = append(missing, "Approval")
	}
	if d.Audit == nil {
		missing = append(missing, "Audit")
	}
	if d.Clock == nil {
		missing = append(missing, "Clock")
	}
	if len(missing) > 0 {
		return nil, fault.New(fault.System, "govern: missing %s", strings.Join(missing, ", "))
	}
	if d.Policy == nil {
		d.Policy = ports.AllowAll
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Limits.MaxArgBytes <= 0 {
		d.Limits.MaxArgBytes = DefaultMaxArgBytes
	}
	if d.Limits.MaxArgDepth <= 0 {
		d.Limits.MaxArgDepth = DefaultMaxArgDepth
	}
	return &Gate{d: d}, nil
}

// Call is one resolved, schema-valid call on its way through the governed path.
type Call struct {
	RunID  string
	Step   string
	CallID string
	Tool   tool.Tool
	Name   string
	Args   map[string]any
	Depth  int
}

// Verdict is what the governed path decided about a call, for the caller's records.
type Verdict struct {
	// Denied is true when the call did not run; By says who refused or allowed it.
	Denied bool
	By     string
	// TimedOut is true when the tool ran out of time.
	TimedOut bool
	// Err is a fault that ends the run (--non-interactive=fail, a failed audit write).
	Err error
}

// Exec runs an allowed call and reports whether it ran out of time.
type Exec func(ctx context.Context) (res tool.Result, timedOut bool)

// Run governs one call: gate, policy, approval, then exec when everything allows it, then the
// audit record. The result of a refused call is an error result marked Denied, whose Error
// tells the model why; its Approval field says who decided.
func (g *Gate) Run(ctx context.Context, c Call, exec Exec) (tool.Result, Verdict) {
	rec := ports.AuditRecord{
		Time: g.d.Clock.Now(), RunID: c.RunID, Step: c.Step, CallID: c.CallID, Tool: c.Name,
		Depth: c.Depth, Arguments: c.Args, Meta: meta(c.Tool, c.Args), Secrets: g.d.Secrets,
	}
	res, v := g.run(ctx, c, &rec, exec)
	if errors.Is(v.Err, ports.ErrApprovalDeferred) {
		return res, v // undecided, not run: audited when it is decided
	}
	rec.Outcome = outcome(res, v)
	rec.Command, rec.Changes = res.Command, res.Changes
	if v.Denied && rec.Verdict != nil {
		rec.Verdict.Reason = res.Error
	}
	if !res.Succeeded() {
		rec.Error = res.Error
	}
	if v.Err != nil && rec.Error == "" {
		rec.Error = v.Err.Error()
	}
	rec.OutputSize = len(res.Output)
	rec.Truncated = res.Truncated
	if err := g.d.Audit.Record(context.WithoutCancel(ctx), rec); err != nil {
		g.d.Log.Error("audit record not written", "tool", c.Name, "call_id", c.CallID, "error", err)
		v.Err = errors.Join(v.Err, fault.Wrap(fault.System, fmt.Errorf("audit log: %w (no call runs unaudited)", err)))
	}
	res.Approval, res.Denied, res.Args = v.By, v.Denied, c.Args
	return res, v
}

func (g *Gate) run(ctx context.Context, c Call, rec *ports.AuditRecord, exec Exec) (tool.Result, Verdict) {
	if rule, msg := g.checkSize(c.Args); msg != "" {
		rec.Approval = &ports.AuditApproval{Decision: ports.DecisionDeny, By: ports.ByGate, Rule: "call gate"}
		rec.Verdict = deny(ports.ByGate, ports.LayerGate, rule)
		return refused(msg), Verdict{Denied: true, By: ports.ByGate}
	}
	canon := canonical(c.Tool, c.Args)
	ann := annotations(c.Tool)
	pd := g.d.Policy.Check(ctx, ports.GovernedCall{
		RunID: c.RunID, Step: c.Step, CallID: c.CallID, Tool: c.Name, Args: c.Args,
		Canonical: canon, Annotations: ann, Depth: c.Depth,
	})
	rec.Sandbox = sandboxRecord(pd)
	if !pd.Allowed {
		rec.Verdict = deny(ports.ByPolicy, pd.Layer, pd.Rule)
		return refused("denied by policy: " + policyReason(pd)), Verdict{Denied: true, By: ports.ByPolicy}
	}
	ad, err := g.d.Approval.Decide(ctx, approval.Request{
		RunID: c.RunID, Step: c.Step, CallID: c.CallID, Tool: c.Name, ReadOnly: ann.ReadOnly,
		Meta: rec.Meta, Args: c.Args, Canonical: canon,
	})
	rec.Approval = approvalRecord(ad)
	rec.Verdict = &ports.AuditVerdict{Decision: rec.Approval.Decision, By: ad.By, Layer: ports.LayerApproval, Rule: ad.Rule}
	if err != nil {
		return refused(ad.Reason), Verdict{Denied: true, By: ad.By, Err: err}
	}
	if !ad.Allowed {
		return refused(ad.Reason), Verdict{Denied: true, By: ad.By}
	}
	if err := g.started(ctx, *rec); err != nil {
		rec.Verdict = deny(ports.ByGate, "L3 audit", "no call runs unaudited")
		return refused("not run: its audit record could not be written"), Verdict{Denied: true, By: ports.ByGate, Err: err}
	}
	start := g.d.Clock.Now()
	res, timedOut := exec(ctx)
	if res.Duration == 0 {
		res.Duration = g.d.Clock.Now().Sub(start)
	}
	rec.DurationMs = res.Duration.Milliseconds()
	if r := res.Refusal; r != nil {
		rec.Sandbox = &ports.AuditSandbox{Decision: ports.DecisionDeny, Rule: r.Rule, Layer: r.Layer,
			Reason: res.Error, Backend: rec.Sandbox.Backend, Applied: rec.Sandbox.Applied}
		rec.Verdict = deny(ports.ByTool, r.Layer, r.Rule)
		return res, Verdict{Denied: true, By: ports.ByTool}
	}
	return res, Verdict{By: ad.By, TimedOut: timedOut}
}

// started writes the record of an allowed call about to run, so that a call awf dies in is
// in the log too. No call runs unaudited: an error here stops it.
func (g *Gate) started(ctx context.Context, rec ports.AuditRecord) error {
	rec.Outcome = ports.OutcomeStarted
	if err := g.d.Audit.Record(context.WithoutCancel(ctx), rec); err != nil {
		g.d.Log.Error("audit record not written", "tool", rec.Tool, "call_id", rec.CallID, "error", err)
		return fault.Wrap(fault.System, fmt.Errorf("audit log: %w (no call runs unaudited)", err))
	}
	return nil
}

var _ ports.CallRefuser = (*Gate)(nil)

// Refuse audits a call refused before the governed path could run it: an unknown name, a
// tool outside the step's tools, arguments that are not an object or do not match the
// schema, nesting too deep. These are the call gate's refusals, recorded under rule.
func (g *Gate) Refuse(ctx context.Context, req ports.ToolRequest, rule, reason string) error {
	return g.refuse(ctx, Call{RunID: req.RunID, Step: req.Step, CallID: req.CallID, Name: req.Name, Args: req.Args},
		ports.LayerGate, rule, reason)
}

// refuse writes the denial record of a call refused by layer under rule before it ran.
func (g *Gate) refuse(ctx context.Context, c Call, layer, rule, reason string) error {
	v := deny(ports.ByGate, layer, rule)
	v.Reason = reason
	rec := ports.AuditRecord{
		Time: g.d.Clock.Now(), RunID: c.RunID, Step: c.Step, CallID: c.CallID, Tool: c.Name,
		Depth: c.Depth, Arguments: c.Args, Secrets: g.d.Secrets, Outcome: ports.OutcomeDenied, Error: reason,
		Approval: &ports.AuditApproval{Decision: ports.DecisionDeny, By: ports.ByGate, Rule: "call gate"},
		Verdict:  v,
	}
	if err := g.d.Audit.Record(context.WithoutCancel(ctx), rec); err != nil {
		g.d.Log.Error("audit record not written", "tool", c.Name, "call_id", c.CallID, "error", err)
		return fault.Wrap(fault.System, fmt.Errorf("audit log: %w (no call runs unaudited)", err))
	}
	return nil
}

// deny is the verdict of a denial by whom, at layer, under rule; Run adds the reason.
func deny(by, layer, rule string) *ports.AuditVerdict {
	return &ports.AuditVerdict{Decision: ports.DecisionDeny, By: by, Layer: layer, Rule: rule}
}

func refused(msg string) tool.Result {
	return tool.Result{Status: tool.StatusError, Error: msg, Denied: true}
}

func policyReason(pd ports.PolicyDecision) string {
	if pd.Reason != "" {
		return pd.Reason
	}
	if pd.Rule != "" {
		return "refused by " + pd.Rule
	}
	return "refused"
}

// outcome classifies a finished call for the audit log.
func outcome(res tool.Result, v Verdict) string {
	switch {
	case v.Denied:
		return ports.OutcomeDenied
	case v.TimedOut:
		return ports.OutcomeTimeout
	case res.Succeeded():
		return ports.OutcomeOK
	}
	return ports.OutcomeError
}

func sandboxRecord(pd ports.PolicyDecision) *ports.AuditSandbox {
	d := ports.DecisionDeny
	if pd.Allowed {
		d = ports.DecisionAllow
	}
	return &ports.AuditSandbox{Decision: d, Rule: pd.Rule, Layer: pd.Layer, Reason: pd.Reason,
		Backend: pd.Backend, Applied: pd.Applied}
}

func approvalRecord(ad ports.ApprovalDecision) *ports.AuditApproval {
	d := ports.DecisionDeny
	if ad.Allowed {
		d = ports.DecisionAllow
	}
	return &ports.AuditApproval{Decision: d, By: ad.By, Rule: ad.Rule, Answer: string(ad.Answer),
		User: ad.User, TTY: ad.TTY, Reason: ad.Reason}
}

// meta returns the tool's one-line summary of the call; a panicking Meta gives none.
func meta(t tool.Tool, args map[string]any) (s string) {
	m, ok := t.(tool.Summarizer)
	if !ok {
		return ""
	}
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	return m.Meta(args)
}

// canonical returns the call's canonical form; a panicking Canonical makes it opaque.
func canonical(t tool.Tool, args map[string]any) (c tool.Canonical) {
	defer func() {
		if p := recover(); p != nil {
			c = tool.Canonical{Actions: []map[string]any{args}, Opaque: fmt.Sprintf("canonical form failed: %v", p)}
		}
	}()
	return tool.CanonicalOf(t, args)
}

func annotations(t tool.Tool) tool.Annotations {
	if a, ok := t.(tool.Annotated); ok {
		return a.Annotations()
	}
	return tool.Annotations{}
}
