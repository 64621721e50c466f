package ports

import (
	"context"
	"errors"
	"time"

	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// The governance ports of DESIGN section 5: the sandbox policy (PolicyChecker), the person who
// approves calls (Approver) and the audit log (AuditSink), with the decisions that travel
// between them and the governed call path (internal/application/govern).

// Who decided a call: the values of ApprovalDecision.By, tool.Result.Approval and the audit
// record's approval.by.
const (
	ByAuto           = "auto"            // the tool's approval mode (or the default) is auto
	ByUser           = "user"            // the person at the terminal answered
	ByRule           = "rule"            // an approval rule of the workflow matched
	ByPolicy         = "policy"          // the sandbox policy, or a configured approval: deny
	ByQuota          = "quota"           // the tool's max_calls was reached in this run
	ByNonInteractive = "non_interactive" // approval was needed and nobody could be asked
	ByTimeout        = "timeout"         // the person did not answer in time
	ByFlag           = "flag"            // --approve or --yes on the command line
	ByGate           = "gate"            // the call gate: unknown tool, bad or oversized arguments
	ByTool           = "tool"            // a layer inside the tool (tool.Refused): path, host, command, size
)

// LayerGate and LayerApproval are the layers of the audit verdict for the call gate's and the
// approval flow's decisions; the sandbox policy and the tools name their own layers.
const (
	LayerGate     = "L0 gate"
	LayerApproval = "approval"
)

// Rules of the call gate's refusals, as the audit verdict names them.
const (
	RuleUnknownTool = "tool name"        // no tool has that name
	RuleStepTools   = "step tools"       // a tool outside the agent step's tools
	RuleArgsObject  = "arguments object" // arguments that are not a JSON object
	RuleArgsSchema  = "arguments schema" // arguments that do not match the tool's schema
	RuleArgsSize    = "max_arg_bytes"    // arguments too large
	RuleArgsDepth   = "max_arg_depth"    // arguments nested too deep
	RuleNesting     = "meta-tool depth"  // meta-tools nested too deep
)

// ErrNoApprover is returned by an Approver that has nobody to ask (no terminal, or prompts
// forbidden by --non-interactive or CI). The approval flow then follows the non-interactive
// mode at once; it never waits.
var ErrNoApprover = errors.New("no terminal to ask for approval")

// ErrApprovalDeferred is wrapped by the error of an Approver that will have the answer later,
// durably (the temporal engine waits for awf approve without holding a process). The
// approval flow and the governed path pass such an error up unchanged and write no audit
// record: nothing was decided and nothing ran. The caller asks again with the answer.
var ErrApprovalDeferred = errors.New("the approval is deferred")

// Answer is a person's answer to an approval request.
type Answer string

// Answers. Always approves this exact canonical call (tool and canonical form) for the rest of
// the run, never a prefix or a similar call.
const (
	AnswerYes     Answer = "yes"
	AnswerNo      Answer = "no"
	AnswerAlways  Answer = "always"
	AnswerTimeout Answer = "timeout"
)

// Approver asks a person whether one tool call may run. Implementations serialise their
// prompts, honour ctx (cancellation and deadline) and req.Timeout (answering AnswerTimeout when
// it passes), and return ErrNoApprover without blocking when nobody can be asked. They must be
// safe for concurrent use.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (Answer, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, req ApprovalRequest) (Answer, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req ApprovalRequest) (Answer, error) {
	return f(ctx, req)
}

// ApprovalRequest is what a person is shown: the tool, its one-line summary, the arguments as
// the model sent them and their canonical form, which is what an "always" answer approves.
type ApprovalRequest struct {
	RunID     string
	Step      string
	CallID    string
	Tool      string
	Meta      string
	Args      map[string]any
	Canonical tool.Canonical
	// Reason says why the call needs a person ("tool write_file asks for approval").
	Reason string
	// Timeout is how long to wait for an answer; 0 means until ctx is done.
	Timeout time.Duration
}

// ApprovalDecision is the approval flow's verdict on one call.
type ApprovalDecision struct {
	Allowed bool
	// By is who decided: one of the By* constants.
	By string
	// Rule names the setting that decided: "approval.rules[2]", "tools.shell.approval",
	// "tools.shell.max_calls", "--yes", "always".
	Rule string
	// Answer is the person's answer when one was asked.
	Answer Answer
	// Reason is the message for the model when the call is denied.
	Reason string
	// User and TTY say who answered when a person did: the OS user running awf and the
	// terminal the answer came from (see ApproverIdentity).
	User, TTY string
}

// ApproverIdentity is implemented by approvers that know who answers: the OS user and the
// terminal device. The approval flow records both with every answer a person gives, so the
// audit log says who allowed a call, not only that a person did.
type ApproverIdentity interface {
	Identity() (user, tty string)
}

// GovernedCall is one tool call as the policy sees it.
type GovernedCall struct {
	RunID       string
	Step        string
	CallID      string
	Tool        string
	Args        map[string]any
	Canonical   tool.Canonical
	Annotations tool.Annotations
	// Depth is the meta-tool nesting depth (0 for a call from a step or a model).
	Depth int
}

// PolicyChecker decides whether the sandbox policy allows a call, before approval and
// execution (DESIGN section 5, layers L0 and L1). It must not block for long and must be safe
// for concurrent use. A checker that cannot decide must deny: the policy fails closed.
type PolicyChecker interface {
	Check(ctx context.Context, call GovernedCall) PolicyDecision
}

// PolicyCheckerFunc adapts a function to PolicyChecker.
type PolicyCheckerFunc func(ctx context.Context, call GovernedCall) PolicyDecision

// Check calls f.
func (f PolicyCheckerFunc) Check(ctx context.Context, call GovernedCall) PolicyDecision {
	return f(ctx, call)
}

// AllowAll is the policy used until a sandbox policy is configured: it allows every call and
// says so in the audit record (rule "allow_all").
var AllowAll PolicyChecker = PolicyCheckerFunc(func(context.Context, GovernedCall) PolicyDecision {
	return PolicyDecision{Allowed: true, Rule: "allow_all", Layer: "none"}
})

// PolicyDecision is the sandbox policy's verdict on one call, and what will enforce it.
type PolicyDecision struct {
	Allowed bool
	// Rule names the policy entry that decided ("sandbox.paths.write[0]").
	Rule string
	// Layer is the layer that decided (L0 gate, L1 tool semantics, L2 OS).
	Layer string
	// Reason is the message for the model when the call is denied, without the "denied by
	// policy:" prefix the governed path adds.
	Reason string
	// Backend and Applied describe the sandbox the call runs under (backend name; Landlock
	// ABI, namespaces, seccomp, uid, ...), copied into the audit record.
	Backend string
	Applied map[string]string
}

// Outcomes of a call in the audit log.
const (
	OutcomeOK      = "ok"
	OutcomeError   = "error"
	OutcomeDenied  = "denied"
	OutcomeTimeout = "timeout"
	// OutcomeStarted marks the record written when an allowed call is about to run, before
	// its result is known: a call that awf died in (or that is still running) is then in the
	// log. The call's completion record follows it; readers fold the two (audit.Fold).
	OutcomeStarted = "started"
	// OutcomeUnknown closes a call a crash cut off whose effect nobody established: its
	// started record, or, when the crash came before the call got one, its in-flight record
	// in the state. The record's recovery says what resume decided.
	OutcomeUnknown = "unknown"
)

// Decisions of the approval and sandbox parts of an audit record.
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"
)

// AuditSink receives one record per tool call, allowed or not (DESIGN section 5, layer L3),
// and for an allowed call a started record before it runs. Record must have made a completion
// record durable when it returns nil; a started record need only have left the process (the
// completion record's sync makes it durable too). Implementations mask secrets in arguments,
// meta and error text and must be safe for concurrent use.
type AuditSink interface {
	Record(ctx context.Context, rec AuditRecord) error
}

// AuditSinkFunc adapts a function to AuditSink.
type AuditSinkFunc func(ctx context.Context, rec AuditRecord) error

// Record calls f.
func (f AuditSinkFunc) Record(ctx context.Context, rec AuditRecord) error { return f(ctx, rec) }

// AuditRecord is one line of the audit log. Its JSON names are the file format that `awf
// audit` and people's scripts read.
type AuditRecord struct {
	Time      time.Time      `json:"time"`
	RunID     string         `json:"run_id,omitempty"`
	Step      string         `json:"step,omitempty"`
	CallID    string         `json:"call_id,omitempty"`
	Tool      string         `json:"tool"`
	Depth     int            `json:"depth,omitempty"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Meta      string         `json:"meta,omitempty"`
	// Approval is nil when the call was refused before approval was asked.
	Approval *AuditApproval `json:"approval,omitempty"`
	// Sandbox is nil when the call was refused before the policy was checked.
	Sandbox *AuditSandbox `json:"sandbox,omitempty"`
	// Verdict is the decision on the call in one shape, whoever made it: for a denial, the
	// layer and the rule that refused it and why. Approval and Sandbox keep the detail of
	// each stage.
	Verdict *AuditVerdict `json:"verdict,omitempty"`
	// Command is the argv a command tool ran, after binding its arguments (a custom command
	// template's rendered command), so that a reviewer sees what ran.
	Command [][]string `json:"command,omitempty"`
	// Changes are the files the call changed (write_file): digests before and after, and a
	// unified diff for text files within the limit.
	Changes    []state.FileChange `json:"changes,omitempty"`
	Outcome    string             `json:"outcome"`
	Error      string             `json:"error,omitempty"`
	DurationMs int64              `json:"duration_ms"`
	OutputSize int                `json:"output_size"`
	Truncated  bool               `json:"truncated,omitempty"`
	// Recovery is set on the record resume writes for a call a crash cut off: what was
	// decided (state.Recovery*), by whom and why.
	Recovery *state.Recovery `json:"recovery,omitempty"`
	// Secrets are values to mask wherever they appear in the record (the values of the
	// environment variables the policy marks secret). They are never written.
	Secrets []string `json:"-"`
}

// AuditVerdict is the one shape of every decision on a call: allow or deny, who decided (a
// By* value), the layer (L0 gate, L1 ..., approval) and the rule, and for a denial the
// reason given to the model.
type AuditVerdict struct {
	Decision string `json:"decision"`
	By       string `json:"by,omitempty"`
	Layer    string `json:"layer,omitempty"`
	Rule     string `json:"rule,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// CallRefuser audits a call refused before it could reach the tool invoker: a tool name the
// step does not have (unknown, outside the step's tools, a near miss) or arguments that are
// not a JSON object. Its audit record is a denial by the call gate under rule (one of the
// Rule* values) with the arguments as sent (state.RawArgsKey for non-objects), masked. An
// error means the record was not written (kind fault.System). Safe for concurrent use.
type CallRefuser interface {
	Refuse(ctx context.Context, req ToolRequest, rule, reason string) error
}

// CallRefuserFunc adapts a function to CallRefuser.
type CallRefuserFunc func(ctx context.Context, req ToolRequest, rule, reason string) error

// Refuse calls f.
func (f CallRefuserFunc) Refuse(ctx context.Context, req ToolRequest, rule, reason string) error {
	return f(ctx, req, rule, reason)
}

// AuditApproval is the approval part of an audit record.
type AuditApproval struct {
	Decision string `json:"decision"`
	By       string `json:"by,omitempty"`
	Rule     string `json:"rule,omitempty"`
	Answer   string `json:"answer,omitempty"`
	// User and TTY are who answered at the prompt (the OS user, the terminal device).
	User string `json:"user,omitempty"`
	TTY  string `json:"tty,omitempty"`
	// Reason says why: the message a denied call's model got, or why the call was asked about.
	Reason string `json:"reason,omitempty"`
}

// AuditSandbox is the sandbox part of an audit record: the policy's decision and the
// enforcement applied.
type AuditSandbox struct {
	Decision string            `json:"decision"`
	Rule     string            `json:"rule,omitempty"`
	Layer    string            `json:"layer,omitempty"`
	Reason   string            `json:"reason,omitempty"`
	Backend  string            `json:"backend,omitempty"`
	Applied  map[string]string `json:"applied,omitempty"`
}

// Denied reports whether the call was refused (by the gate, the policy or approval).
func (r AuditRecord) Denied() bool { return r.Outcome == OutcomeDenied }
