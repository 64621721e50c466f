package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// settle decides what happens to a call a crash left in flight, which the resumed model asks
// for again: nobody knows whether it took effect. In order:
//
//  1. the tool's check (tool.Checker: write_file compares the digest it meant to write, a
//     command tool runs its verify: command) says it took effect: the call is answered as a
//     success without running; it did not: it runs again;
//  2. an idempotent tool runs again;
//  3. the person at the terminal chooses: run again, skip, or mark done;
//  4. nobody can be asked: the model is told the outcome is unknown (outcome: unknown).
//
// A call that is not idempotent is never run again without a check or a person saying so.
func (l *loop) settle(ctx context.Context, p *pendingCall, rec state.ToolCallRecord) *pendingCall {
	var unsure string
	if c := p.info.Checker; c != nil {
		check := c.Check(ctx, l.invocation(p), rec.Intent)
		switch check.Verdict {
		case tool.VerdictDone:
			return l.settled(p, state.Recovery{Decision: state.RecoveryDone, By: state.RecoveredByCheck, Detail: check.Detail})
		case tool.VerdictNotDone:
			return l.settled(p, state.Recovery{Decision: state.RecoveryRerun, By: state.RecoveredByCheck, Detail: check.Detail})
		}
		unsure = "its check could not tell: " + check.Detail
	}
	if p.info.Annotations.Idempotent {
		return l.settled(p, state.Recovery{Decision: state.RecoveryRerun, By: state.RecoveredByIdempotent, Detail: unsure})
	}
	if s := l.x.d.Settler; s != nil {
		answer, err := s.Settle(ctx, ports.SettleRequest{RunID: l.sc.RunID, Step: l.step, CallID: p.prevID,
			Tool: p.ref.Name, Meta: l.meta(p), Args: p.args})
		decision := map[ports.Settlement]string{ports.SettleRerun: state.RecoveryRerun, ports.SettleSkip: state.RecoverySkip,
			ports.SettleDone: state.RecoveryDone}[answer]
		switch {
		case err == nil && decision != "":
			return l.settled(p, state.Recovery{Decision: decision, By: state.RecoveredByUser, Detail: unsure})
		case err != nil && !errors.Is(err, ports.ErrNoApprover):
			l.warn(fmt.Sprintf("tool call %s (%s): could not ask what to do with it: %v", p.prevID, p.ref.Name, err))
		}
	}
	why := "the tool declares no check and is not idempotent, and nobody could be asked"
	if unsure != "" {
		why = unsure + "; the tool is not idempotent, and nobody could be asked"
	}
	return l.settled(p, state.Recovery{Decision: state.RecoveryUnknown, By: state.RecoveredByNonInteractive, Detail: why})
}

// settled applies a decision about a call left in flight: a call to run again, or one
// answered without running.
func (l *loop) settled(p *pendingCall, r state.Recovery) *pendingCall {
	p.recovery = &r
	l.warn(fmt.Sprintf("tool call %s (%s) was in flight when the run stopped: %s (decided by %s%s)",
		p.prevID, p.ref.Name, recoveryText[r.Decision], r.By, detail(r.Detail)))
	p.kind = callAbandon
	switch r.Decision {
	case state.RecoveryRerun:
		p.kind = callRerun
	case state.RecoveryDone:
		p.res = state.ToolCallResult{Success: true, Approval: r.By,
			Output: "This call was in flight when the run stopped; it took effect (" + r.By + detail(r.Detail) + ")."}
	case state.RecoverySkip:
		p.res = state.ToolCallResult{Approval: r.By, Error: "not run: the run stopped while this call was in flight (about to run, or running), " +
			"and the person chose not to run it again; it may or may not have taken effect"}
	default:
		p.res = state.ToolCallResult{Approval: r.By, Error: "outcome unknown: the run stopped while this call was in flight (about to run, or running), " +
			"so it may or may not have taken effect, and awf could not check; it was not run again: check before trying it again"}
	}
	p.msg = resultText(p.res)
	return p
}

var recoveryText = map[string]string{
	state.RecoveryDone:    "it took effect; not running it again",
	state.RecoveryRerun:   "running it again",
	state.RecoverySkip:    "skipped, not running it again",
	state.RecoveryUnknown: "its outcome is unknown; not running it again (the model is told)",
}

func detail(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

// invocation is a call as its tool's check receives it.
func (l *loop) invocation(p *pendingCall) tool.Invocation {
	return tool.Invocation{ID: p.ref.ID, Args: p.args, Scope: l.sc.Scope}
}

// intent is what the tool's check will need of a call about to run, recorded with the call
// before it runs; nil for a tool without a check.
func (l *loop) intent(ctx context.Context, p *pendingCall) map[string]any {
	if p.info.Checker == nil {
		return nil
	}
	return p.info.Checker.Intent(ctx, l.invocation(p))
}

// settleRecord records the decision about the call at idx, with the intent of its new run
// (rerun) or, for a call answered without running, its outcome.
func settleRecord(s *state.StepState, idx int, r state.Recovery, intent map[string]any) {
	if idx < 0 || idx >= len(s.ToolCalls) {
		return
	}
	s.ToolCalls[idx].Recovery = &r
	if r.Decision == state.RecoveryRerun {
		s.ToolCalls[idx].Intent = intent
		return
	}
	if r.Decision != state.RecoveryDone {
		s.ToolCalls[idx].Outcome = state.OutcomeUnknown
	}
}

// auditSettled writes the audit record that closes a call a crash cut off, with what resume
// decided. It closes the call's started record when there is one: a crash after the call was
// recorded in flight but before the governed path wrote its started record (while it waited
// for approval, say) leaves none, and the call never ran.
func (l *loop) auditSettled(ctx context.Context, p *pendingCall) error {
	res := p.res
	if p.kind == callRerun {
		res = state.ToolCallResult{Error: "interrupted: the run stopped while this call was in flight (about to run, or running); it runs again"}
	}
	return l.audit(ctx, p.prevID, p.ref.Name, res, *p.recovery)
}

// audit records a decision about a call a crash cut off: outcome ok when it took effect,
// unknown otherwise, with the decision in the record's recovery. Without an audit sink it
// records nothing.
func (l *loop) audit(ctx context.Context, id, name string, res state.ToolCallResult, r state.Recovery) error {
	a := l.x.d.Audit
	if a == nil {
		return nil
	}
	outcome := ports.OutcomeUnknown
	if r.Decision == state.RecoveryDone {
		outcome = ports.OutcomeOK
	}
	// No arguments: the call's started record holds them, with secret values masked by the
	// governed path, which alone knows them.
	err := a.Record(ctx, ports.AuditRecord{Time: l.x.d.Clock.Now(), RunID: l.sc.RunID, Step: l.step, CallID: id, Tool: name,
		Outcome: outcome, Error: res.Error, Recovery: &r})
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("audit the recovery of call %s: %w", id, err))
	}
	return nil
}
