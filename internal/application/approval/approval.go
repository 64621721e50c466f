// Package approval decides whether a tool call may run as far as people are concerned: the
// tool's approval mode (auto, prompt, deny), the workflow's default and rules, the command
// line's --approve and --yes, per-tool quotas, "always" answers and what happens when nobody
// can be asked. It asks through a ports.Approver and never prints; the sandbox policy and the
// audit record belong to the governed call path (package govern).
//
// A call is decided in this order:
//
//  1. Quota: a tool entry's max_calls counts the calls allowed in a run; one more is denied
//     (by quota) without asking anyone.
//  2. The workflow's setting: a tool whose entry says approval: deny is denied (by policy),
//     whatever a rule says. Otherwise the first rule whose tool (a name or a glob; empty for
//     every tool) and when (a bare expr over args, tool and step) match decides; else the
//     tool entry's approval; else approval.default; else auto for read-only tools (their
//     annotations, or read_only on the entry) and prompt for every other tool.
//  3. A deny from step 2 is final: neither --approve nor --yes lifts a deny the workflow
//     declares. Otherwise --approve MODE replaces the mode (deny refuses every call by flag,
//     prompt asks for every call, auto runs every call), and --yes turns prompt into auto;
//     --approve wins over --yes.
//  4. auto allows. prompt first looks for an "always" answer given in this run to the same
//     tool with the same canonical form (never a prefix), then asks the Approver with the
//     workflow's approval.timeout (DefaultTimeout when unset): yes and always allow, no and
//     a timeout deny. When nobody can be asked (no terminal, --non-interactive, CI) the call
//     is denied at once, or with --non-interactive=fail the run ends with fault.Denied.
//
// Rules see the canonical form of the call (tool.Canonical): `args` is one action of it. A
// rule that approves (auto) must hold for every action and never matches an opaque form, so a
// rule allowing `git status` does not allow `git status; rm -rf /`; a rule that asks or denies
// applies when it holds for any action. A condition that fails to evaluate never approves and
// always tightens.
package approval

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// DefaultTimeout is how long a person has to answer when the workflow sets no
// approval.timeout. An unanswered prompt denies the call.
const DefaultTimeout = 5 * time.Minute

// Non-interactive modes: what a call that needs a person gets when nobody can be asked.
const (
	NonInteractiveDeny = "deny" // the call is denied and the model is told why (default)
	NonInteractiveFail = "fail" // the run ends with a fault.Denied error (exit code 5)
)

// Evaluator evaluates the bare expr expressions of approval rules; ports.Templater is one.
type Evaluator interface {
	Eval(expr string, scope ports.Scope) (any, error)
}

// Config is what one Flow follows. The zero value of every field but Eval is usable.
type Config struct {
	// Policy is the workflow's approval: section; nil means no default and no rules.
	Policy *workflow.ApprovalPolicy
	// Tools are the workflow's tools: entries, for their approval mode and max_calls.
	Tools []workflow.ToolSpec
	// Override is --approve: "", auto, prompt or deny. It replaces every tool's mode, but
	// never lifts a deny the workflow declares (a tool's approval: deny, a deny rule).
	Override string
	// Yes is --yes: calls that would prompt run automatically; denials stay denials.
	Yes bool
	// NonInteractive is --non-interactive: deny (the default when empty) or fail.
	NonInteractive string
	// Approver asks the person at the terminal; nil means nobody can be asked.
	Approver ports.Approver
	// Eval evaluates rule conditions; required when the policy has rules with a when.
	Eval Evaluator
}

// Request is one call to decide.
type Request struct {
	RunID  string
	Step   string
	CallID string
	Tool   string
	// ReadOnly is the tool's declared read-only property: read-only tools default to auto,
	// others to prompt.
	ReadOnly  bool
	Meta      string
	Args      map[string]any
	Canonical tool.Canonical
}

// Flow decides tool calls. It keeps, per run id, the calls counted against quotas and the
// calls a person approved with "always"; End forgets a run. Prompts are serialised. Safe for
// concurrent use.
type Flow struct {
	cfg     Config
	tools   map[string]workflow.ToolSpec
	rules   []workflow.ApprovalRule
	timeout time.Duration

	prompt chan struct{} // one prompt at a time, so "always" is seen by the next identical call
	mu     sync.Mutex
	runs   map[string]*runState
}

type runState struct {
	calls  map[string]int
	always map[string]bool
}

// New checks cfg and returns a Flow. Unknown modes are fault.Usage errors (they come from
// flags); a rule with an unknown decision, or rules without an evaluator, fault.Invalid.
func New(cfg Config) (*Flow, error) {
	switch cfg.Override {
	case "", workflow.ApprovalAuto, workflow.ApprovalPrompt, workflow.ApprovalDeny:
	default:
		return nil, fault.New(fault.Usage, "--approve %q: want auto, prompt or deny", cfg.Override)
	}
	switch cfg.NonInteractive {
	case "":
		cfg.NonInteractive = NonInteractiveDeny
	case NonInteractiveDeny, NonInteractiveFail:
	default:
		return nil, fault.New(fault.Usage, "--non-interactive=%s: want deny or fail", cfg.NonInteractive)
	}
	f := &Flow{
		cfg:     cfg,
		tools:   make(map[string]workflow.ToolSpec, len(cfg.Tools)),
		timeout: DefaultTimeout,
		prompt:  make(chan struct{}, 1),
		runs:    map[string]*runState{},
	}
	for _, t := range cfg.Tools {
		f.tools[t.Name] = t
	}
	if p := cfg.Policy; p != nil {
		if p.Timeout > 0 {
			f.timeout = p.Timeout
		}
		if err := checkRules(p.Rules, cfg.Eval); err != nil {
			return nil, err
		}
		f.rules = p.Rules
	}
	return f, nil
}

func checkRules(rules []workflow.ApprovalRule, eval Evaluator) error {
	for i, r := range rules {
		if !validMode(r.Decision) {
			return fault.New(fault.Invalid, "approval.rules[%d]: decision %q: want auto, prompt or deny", i, r.Decision)
		}
		if r.When != "" && eval == nil {
			return fault.New(fault.Invalid, "approval.rules[%d]: rules with a when need an expression evaluator", i)
		}
	}
	return nil
}

func validMode(m string) bool {
	return m == workflow.ApprovalAuto || m == workflow.ApprovalPrompt || m == workflow.ApprovalDeny
}

// Decide returns the verdict on one call. A denial is a decision, not an error; the only
// errors are a cancelled ctx and, with --non-interactive=fail, a fault.Denied error for a call
// that needed a person when nobody could be asked (the decision is then a denial too).
func (f *Flow) Decide(ctx context.Context, req Request) (ports.ApprovalDecision, error) {
	spec := f.tools[req.Tool]
	if d, over := f.reserve(req.RunID, req.Tool, spec.MaxCalls); over {
		return d, nil
	}
	d, err := f.decide(ctx, req, spec)
	if !d.Allowed && spec.MaxCalls > 0 {
		f.release(req.RunID, req.Tool)
	}
	return d, err
}

// End forgets a run's quota counts and "always" answers.
func (f *Flow) End(runID string) {
	f.mu.Lock()
	delete(f.runs, runID)
	f.mu.Unlock()
}

// setting is the configured mode of a call, and where it came from.
type setting struct {
	mode string
	by   string
	rule string
}

func (f *Flow) decide(ctx context.Context, req Request, spec workflow.ToolSpec) (ports.ApprovalDecision, error) {
	s := f.configured(req, spec)
	if s.mode == workflow.ApprovalDeny {
		return deny(s.by, s.rule, f.denyReason(req, s)), nil
	}
	s = f.applyFlags(s)
	switch s.mode {
	case workflow.ApprovalDeny:
		return deny(s.by, s.rule, "denied: every tool call is refused by --approve deny"), nil
	case workflow.ApprovalAuto:
		return ports.ApprovalDecision{Allowed: true, By: s.by, Rule: s.rule}, nil
	}
	return f.ask(ctx, req, s)
}

// configured returns the workflow's verdict for the call: the first matching rule, else the
// tool's mode, else the workflow default, else auto for read-only tools and prompt for others.
func (f *Flow) configured(req Request, spec workflow.ToolSpec) setting {
	if spec.Approval == workflow.ApprovalDeny {
		// A tool the workflow denies stays denied whatever a rule says.
		return setting{workflow.ApprovalDeny, ports.ByPolicy, "tools." + req.Tool + ".approval"}
	}
	if i, ok := f.matchRule(req); ok {
		return setting{f.rules[i].Decision, ports.ByRule, fmt.Sprintf("approval.rules[%d]", i)}
	}
	if spec.Approval != "" {
		return setting{spec.Approval, modeBy(spec.Approval), "tools." + req.Tool + ".approval"}
	}
	if p := f.cfg.Policy; p != nil && p.Default != "" {
		return setting{p.Default, modeBy(p.Default), "approval.default"}
	}
	if req.ReadOnly || spec.ReadOnly {
		return setting{workflow.ApprovalAuto, ports.ByAuto, "default: read-only tool"}
	}
	return setting{workflow.ApprovalPrompt, ports.ByUser, "default: tool may change things"}
}

func modeBy(mode string) string {
	switch mode {
	case workflow.ApprovalAuto:
		return ports.ByAuto
	case workflow.ApprovalDeny:
		return ports.ByPolicy
	}
	return ports.ByUser
}

// applyFlags applies --approve and --yes to a setting that is not a deny.
func (f *Flow) applyFlags(s setting) setting {
	if o := f.cfg.Override; o != "" {
		return setting{o, ports.ByFlag, "--approve " + o}
	}
	if f.cfg.Yes && s.mode == workflow.ApprovalPrompt {
		return setting{workflow.ApprovalAuto, ports.ByFlag, "--yes"}
	}
	return s
}

func (f *Flow) denyReason(req Request, s setting) string {
	if s.by == ports.ByRule {
		return fmt.Sprintf("denied by approval rule %s", s.rule)
	}
	return fmt.Sprintf("denied: tool %q may not be called in this workflow (%s: deny)", req.Tool, s.rule)
}

func deny(by, rule, reason string) ports.ApprovalDecision {
	return ports.ApprovalDecision{By: by, Rule: rule, Reason: reason}
}

// ask asks the person, unless an "always" answer in this run already covers the exact call.
func (f *Flow) ask(ctx context.Context, req Request, s setting) (ports.ApprovalDecision, error) {
	select {
	case f.prompt <- struct{}{}:
		defer func() { <-f.prompt }()
	case <-ctx.Done():
		return deny(ports.ByUser, s.rule, "denied: the run was cancelled while waiting for approval"), ctx.Err()
	}
	key := alwaysKey(req)
	if f.approvedAlways(req.RunID, key) {
		return ports.ApprovalDecision{Allowed: true, By: ports.ByUser, Rule: "always", Answer: ports.AnswerAlways}, nil
	}
	if f.cfg.Approver == nil {
		return f.nobody(req, nil)
	}
	actx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	ans, err := f.cfg.Approver.Approve(actx, ports.ApprovalRequest{
		RunID: req.RunID, Step: req.Step, CallID: req.CallID, Tool: req.Tool, Meta: req.Meta,
		Args: req.Args, Canonical: req.Canonical, Reason: askReason(req, s), Timeout: f.timeout,
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return deny(ports.ByUser, s.rule, "denied: the run was cancelled while waiting for approval"), ctx.Err()
	case errors.Is(err, ports.ErrApprovalDeferred):
		return deny(ports.ByUser, s.rule, "not decided yet: the call waits for a person"), err
	case err != nil && errors.Is(actx.Err(), context.DeadlineExceeded):
		ans, err = ports.AnswerTimeout, nil
	case err != nil:
		return f.nobody(req, err)
	}
	d := f.answered(req, key, ans)
	if d.By == ports.ByUser {
		if id, ok := f.cfg.Approver.(ports.ApproverIdentity); ok {
			d.User, d.TTY = id.Identity()
		}
		if d.Allowed {
			d.Reason = askReason(req, s) + "; the person answered " + string(ans)
		}
	}
	return d, nil
}

func askReason(req Request, s setting) string {
	switch s.by {
	case ports.ByRule:
		return fmt.Sprintf("approval rule %s asks for this call", s.rule)
	case ports.ByFlag:
		return fmt.Sprintf("%s asks for every call", s.rule)
	}
	return fmt.Sprintf("tool %s asks for approval (%s)", req.Tool, s.rule)
}

func (f *Flow) answered(req Request, key string, ans ports.Answer) ports.ApprovalDecision {
	switch ans {
	case ports.AnswerYes:
		return ports.ApprovalDecision{Allowed: true, By: ports.ByUser, Answer: ans}
	case ports.AnswerAlways:
		f.rememberAlways(req.RunID, key)
		return ports.ApprovalDecision{Allowed: true, By: ports.ByUser, Rule: "always", Answer: ans}
	case ports.AnswerTimeout:
		d := deny(ports.ByTimeout, "", fmt.Sprintf("denied: nobody approved the call within %s", f.timeout))
		d.Answer = ans
		return d
	}
	d := deny(ports.ByUser, "", "denied by the user: the person at the terminal refused this call; do not retry it, try another way or explain what you need")
	d.Answer = ports.AnswerNo
	return d
}

// nobody handles a call that needs a person when none can be asked: a denial the model hears
// about, or with --non-interactive=fail also a fault.Denied error that ends the run.
func (f *Flow) nobody(req Request, cause error) (ports.ApprovalDecision, error) {
	why := "no terminal"
	if cause != nil && !errors.Is(cause, ports.ErrNoApprover) {
		why = fmt.Sprintf("no terminal (%v)", cause)
	}
	d := deny(ports.ByNonInteractive, "--non-interactive="+f.cfg.NonInteractive,
		fmt.Sprintf("denied: approval required and %s (run with --yes or --approve auto)", why))
	if f.cfg.NonInteractive == NonInteractiveFail {
		// ErrAbortStep tells the agent loop to end the step instead of telling the model.
		return d, fault.New(fault.Denied, "tool %q needs approval and there is %s to ask: --non-interactive=fail ends the run (run with --yes or --approve auto to allow such calls)%w", req.Tool, why, abortMarker{})
	}
	return d, nil
}

func (f *Flow) run(id string) *runState {
	r := f.runs[id]
	if r == nil {
		r = &runState{calls: map[string]int{}, always: map[string]bool{}}
		f.runs[id] = r
	}
	return r
}

// reserve counts the call against the tool's quota; over is true when the quota is spent.
func (f *Flow) reserve(runID, name string, max int) (ports.ApprovalDecision, bool) {
	if max <= 0 {
		return ports.ApprovalDecision{}, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.run(runID)
	if r.calls[name] >= max {
		return deny(ports.ByQuota, "tools."+name+".max_calls",
			fmt.Sprintf("denied: quota: tool %q may be called at most %d times in a run, and that many calls were allowed already", name, max)), true
	}
	r.calls[name]++
	return ports.ApprovalDecision{}, false
}

func (f *Flow) release(runID, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.runs[runID]; r != nil && r.calls[name] > 0 {
		r.calls[name]--
	}
}

func (f *Flow) approvedAlways(runID, key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.runs[runID]
	return key != "" && r != nil && r.always[key]
}

func (f *Flow) rememberAlways(runID, key string) {
	if key == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.run(runID).always[key] = true
}

// abortMarker wraps ports.ErrAbortStep into an error message without changing its text.
type abortMarker struct{}

func (abortMarker) Error() string { return "" }
func (abortMarker) Unwrap() error { return ports.ErrAbortStep }
