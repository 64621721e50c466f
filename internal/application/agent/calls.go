package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// What a call of a reply turns into before anything runs.
type callKind int

const (
	callRun       callKind = iota // run it through the invoker
	callReplay                    // answered from its record (resume)
	callRefused                   // answered without running: unknown tool, bad arguments, breaker
	callRerun                     // recorded in flight, settled as run again: run into its record
	callAbandon                   // recorded in flight, settled without running: closed with its result
	callOverLimit                 // beyond max_calls with on_max_calls: stop: not run, not recorded
)

// pendingCall is one call of a reply on its way to a result.
type pendingCall struct {
	ref  state.CallRef
	kind callKind
	args map[string]any
	info ports.ToolInfo
	// idx is the call's index in the step's tool_calls; -1 until recorded.
	idx int
	// res is the recorded result; msg the text the model gets back.
	res state.ToolCallResult
	msg string
	// rule is the call gate's rule (ports.Rule*) for a call refused before the invoker.
	rule string
	// abort is an invoker error that ends the step.
	abort error
	// recovery is what resume decided about a call a crash left in flight, whose id in the
	// earlier attempt (in the state and the audit log) is prevID.
	recovery *state.Recovery
	prevID   string
}

// runCalls runs the calls of one reply and appends their results to the conversation in the
// model's order. Calls beyond max_calls fail the step (on_max_calls: fail, the default) or are
// refused, after which the model must answer without tools (on_max_calls: stop).
func (l *loop) runCalls(ctx context.Context, calls []state.CallRef) error {
	allowed := l.maxCalls - l.calls
	if len(calls) > allowed && l.a.ToolOptions.OnMaxCalls != "stop" {
		l.closeCalls(calls, "not run: the step reached tool_options.max_calls")
		return fault.New(fault.Execution,
			"tool_options.max_calls: the model asked for %d more tool calls after %d of at most %d; "+
				"raise max_calls, or set on_max_calls: stop to end the step with the model's answer instead",
			len(calls), l.calls, l.maxCalls)
	}
	pending := make([]*pendingCall, len(calls))
	for i, c := range calls {
		if i >= allowed {
			pending[i] = &pendingCall{ref: c, kind: callOverLimit, idx: -1, rule: "tool_options.max_calls",
				msg: fmt.Sprintf("Error: not run: this step may make at most %d tool calls (tool_options.max_calls). "+
					"No more tools are available: give your final answer now.", l.maxCalls)}
			continue
		}
		l.calls++
		pending[i] = l.classify(ctx, c)
	}
	if err := l.execute(ctx, pending); err != nil {
		return err
	}
	for _, p := range pending {
		l.append(state.Message{Role: "tool", ToolCallID: p.ref.ID, Name: p.ref.Name, Content: p.msg,
			IsError: p.kind == callOverLimit || !p.res.Success})
	}
	if len(calls) > allowed {
		l.warn(fmt.Sprintf("tool_options.max_calls (%d) reached: asking the model for its final answer without tools", l.maxCalls))
		l.stoppedBy, l.lastOnly, l.noTools = StoppedByMaxCalls, true, true
	}
	return nil
}

// classify decides what happens to one call, in the model's order: replayed from the record
// of an earlier attempt, refused (unknown tool, arguments that are not a JSON object, the
// breaker), or run.
func (l *loop) classify(ctx context.Context, c state.CallRef) *pendingCall {
	p := &pendingCall{ref: c, idx: -1}
	args, argErr := decodeArgs(c.Arguments)
	p.args = args
	if argErr != nil {
		p.args = map[string]any{state.RawArgsKey: c.Arguments}
	}
	key := callKey(c.Name, p.args)
	repeats := l.breaker(key)
	if i := l.resume.match(key); i >= 0 {
		return l.replayed(ctx, p, i)
	}
	info, known := l.info[c.Name]
	p.info = info
	switch {
	case !known:
		return refuse(p, ports.RuleStepTools, l.unknownTool(c.Name))
	case argErr != nil:
		return refuse(p, ports.RuleArgsObject, fmt.Sprintf("invalid arguments for %s: %s; send the arguments as one JSON object", c.Name, l.truncatedArgs(argErr)))
	case repeats > l.maxRepeats:
		return refuse(p, "tool_options.max_repeats", fmt.Sprintf("not run: this is the same %s call, with the same arguments, %d times in a row "+
			"(tool_options.max_repeats is %d); its result will not change: try something else, or give your answer",
			c.Name, repeats, l.maxRepeats))
	}
	p.kind = callRun
	return p
}

// breaker counts identical calls in a row and returns how many this one makes.
func (l *loop) breaker(key string) int {
	if key == l.lastKey {
		l.repeats++
	} else {
		l.lastKey, l.repeats = key, 1
	}
	return l.repeats
}

// replayed answers a call from the record of an earlier attempt, or settles a call a crash
// left in flight (see settle).
func (l *loop) replayed(ctx context.Context, p *pendingCall, i int) *pendingCall {
	rec := l.resume.record(i)
	p.idx = i
	p.info = l.info[p.ref.Name]
	if rec.Result != nil {
		p.kind, p.res = callReplay, *rec.Result
		p.msg = resultText(p.res)
		return p
	}
	p.prevID = rec.ID
	return l.settle(ctx, p, rec)
}

// refuse answers a call without running it: the call gate refused it under rule.
func refuse(p *pendingCall, rule, why string) *pendingCall {
	p.kind, p.rule = callRefused, rule
	p.res = state.ToolCallResult{Error: why, Denied: true, Approval: ports.ByGate, Layer: ports.LayerGate, Rule: rule}
	p.msg = resultText(p.res)
	return p
}

// unknownTool tells the model which tools it has.
func (l *loop) unknownTool(name string) string {
	if len(l.toolNames) == 0 {
		return fmt.Sprintf("unknown tool %q: this step has no tools; answer without calling any", name)
	}
	msg := fmt.Sprintf("unknown tool %q: this step's tools are %s", name, strings.Join(l.toolNames, ", "))
	if hint := workflow.DidYouMean(name, l.toolNames); hint != "" {
		msg += " (" + hint + ")"
	}
	return msg
}

// execute records and runs the pending calls. Read-only calls of one reply run concurrently
// when every call to run is read-only and tool_options.parallel allows it; otherwise they run
// one after another in the model's order, and an error that ends the step stops the rest.
// Records are appended in the model's order either way. Records are saved in batches (see
// saves) before a call runs and after it, or, for calls run concurrently, once before they all
// run and once after: a reply of n concurrent calls costs 2 saves rather than 2n. A result is
// saved before the next call is recorded in flight, not with it: writing the next call's record
// before the result's flush to disk would leave a call in flight in a state that a kill -9
// can find while its audit record is not yet written, for longer than one fdatasync of the
// journal (this one also flushing what the call before wrote to disk).
func (l *loop) execute(ctx context.Context, pending []*pendingCall) (err error) {
	var b saves
	defer func() {
		if serr := l.flush(ctx, &b); err == nil {
			err = serr
		}
	}()
	toRun := slices.DeleteFunc(slices.Clone(pending), func(p *pendingCall) bool { return !p.runs() })
	if !l.parallel(toRun) {
		for _, p := range pending {
			if err := l.begin(ctx, p, &b); err != nil {
				return err
			}
			if !p.runs() {
				continue
			}
			if err := l.flush(ctx, &b); err != nil {
				return err
			}
			l.invoke(ctx, p)
			l.end(ctx, p, &b)
			if err := l.flush(ctx, &b); err != nil {
				return err
			}
			if p.abort != nil {
				return p.abort
			}
		}
		return nil
	}
	for _, p := range pending {
		if err := l.begin(ctx, p, &b); err != nil {
			return err
		}
	}
	if err := l.flush(ctx, &b); err != nil {
		return err
	}
	l.x.d.Fork(ctx, len(toRun), len(toRun), func(ctx context.Context, i int) { l.invoke(ctx, toRun[i]) })
	var first error
	for _, p := range toRun {
		l.end(ctx, p, &b)
		if first == nil {
			first = p.abort
		}
	}
	return first
}

// saves are changes to the step's record waiting to be saved together, and the indexes of
// the tool call records they change (see loop.save). Durability is batched, never dropped: a
// call in flight is saved before it runs, and every result before the model sees it or
// another call runs.
type saves struct {
	calls   []int
	changes []func(*state.StepState)
}

// add makes change wait for the next flush; calls are the records it changes.
func (b *saves) add(calls []int, change func(*state.StepState)) {
	b.calls = append(b.calls, calls...)
	b.changes = append(b.changes, change)
}

// flush saves the changes waiting in b, in the order they were made, with one save.
func (l *loop) flush(ctx context.Context, b *saves) error {
	if len(b.changes) == 0 {
		return nil
	}
	calls, changes := b.calls, b.changes
	*b = saves{}
	return l.save(ctx, calls, func(s *state.StepState) {
		for _, change := range changes {
			change(s)
		}
	})
}

// runs reports whether the call goes to the invoker.
func (p *pendingCall) runs() bool { return p.kind == callRun || p.kind == callRerun }

// parallel reports whether the calls may run concurrently.
func (l *loop) parallel(calls []*pendingCall) bool {
	if len(calls) < 2 || (l.a.ToolOptions.Parallel != nil && !*l.a.ToolOptions.Parallel) {
		return false
	}
	for _, p := range calls {
		if !p.info.Annotations.ReadOnly {
			return false
		}
	}
	return true
}

// begin records a call before it runs, in b: in flight when it is about to run, with its
// result when it was answered without running. Replayed calls are recorded already.
func (l *loop) begin(ctx context.Context, p *pendingCall, b *saves) error {
	switch p.kind {
	case callReplay:
		l.emit(ports.Event{Kind: ports.ToolFinished, Tool: p.ref.Name, CallID: p.ref.ID, Meta: l.meta(p),
			Status: "replayed", Message: "result recorded before the run was resumed"})
		return nil
	case callOverLimit:
		return l.auditRefusal(ctx, p, strings.TrimPrefix(p.msg, "Error: "))
	case callAbandon:
		if err := l.auditSettled(ctx, p); err != nil {
			return err
		}
		l.emit(finished(p.ref.ID, p.ref.Name, l.meta(p), p.res))
		idx, res, rcv := p.idx, p.res, *p.recovery
		b.add([]int{idx}, func(s *state.StepState) {
			finishRecord(s, idx, res)
			settleRecord(s, idx, rcv, nil)
		})
		return nil
	case callRerun:
		if err := l.auditSettled(ctx, p); err != nil {
			return err
		}
		l.emit(ports.Event{Kind: ports.ToolStarted, Tool: p.ref.Name, CallID: p.ref.ID, Meta: l.meta(p)})
		idx, rcv, intent := p.idx, *p.recovery, l.intent(ctx, p)
		b.add([]int{idx}, func(s *state.StepState) { settleRecord(s, idx, rcv, intent) })
		return nil
	}
	rec := state.ToolCallRecord{ID: p.ref.ID, Tool: p.ref.Name, Arguments: p.args}
	if p.kind == callRun {
		rec.Intent = l.intent(ctx, p)
	}
	if p.kind == callRefused {
		if err := l.auditRefusal(ctx, p, p.res.Error); err != nil {
			return err
		}
		res := p.res
		rec.Result = &res
		l.emit(ports.Event{Kind: ports.ToolFinished, Tool: p.ref.Name, CallID: p.ref.ID, Status: "error", Message: p.res.Error})
	} else {
		rec.InFlight = true
		l.emit(ports.Event{Kind: ports.ToolStarted, Tool: p.ref.Name, CallID: p.ref.ID, Meta: l.meta(p)})
	}
	b.add(nil, func(s *state.StepState) {
		s.ToolCalls = append(s.ToolCalls, rec)
		p.idx = len(s.ToolCalls) - 1
		if rec.Result != nil {
			addStats(s, *rec.Result)
		}
	})
	return nil
}

// auditRefusal records a call that never reached the invoker as the call gate's denial. A name
// outside the step's tools that no tool has at all is recorded as unknown.
func (l *loop) auditRefusal(ctx context.Context, p *pendingCall, why string) error {
	rule := p.rule
	if rule == ports.RuleStepTools {
		if _, err := l.x.d.Catalog.Describe(ctx, ports.ToolQuery{RunID: l.sc.RunID, Step: l.step, Names: []string{p.ref.Name}}); err != nil {
			rule = ports.RuleUnknownTool
			p.res.Rule = rule
		}
	}
	args := p.args
	if args == nil { // beyond max_calls: not decoded yet
		var err error
		if args, err = decodeArgs(p.ref.Arguments); err != nil {
			args = map[string]any{state.RawArgsKey: p.ref.Arguments}
		}
	}
	err := l.x.d.Refusals.Refuse(ctx, ports.ToolRequest{RunID: l.sc.RunID, Step: l.step, CallID: p.ref.ID, Name: p.ref.Name, Args: args}, rule, why)
	if err != nil {
		return fmt.Errorf("tool %s: %w", p.ref.Name, err)
	}
	return nil
}

// invoke runs one call through the governed path. It touches only p.
func (l *loop) invoke(ctx context.Context, p *pendingCall) {
	start := l.x.d.Clock.Now()
	res, err := l.x.d.Tools.Invoke(ctx, ports.ToolRequest{
		RunID: l.sc.RunID, Step: l.step, CallID: p.ref.ID, Name: p.ref.Name, Args: p.args,
		Timeout: l.a.ToolOptions.TimeoutPerCall, Scope: l.sc.Scope,
	})
	took := res.Duration
	if took <= 0 {
		took = l.x.d.Clock.Now().Sub(start)
	}
	p.res = res.Record(err, took)
	switch {
	case err != nil && ctx.Err() != nil:
		p.abort = context.Cause(ctx)
	case err != nil && (errors.Is(err, ports.ErrAbortStep) || fault.KindOf(err) == fault.System):
		p.abort = fmt.Errorf("tool %s: %w", p.ref.Name, err)
	}
	p.msg = resultText(p.res)
}

// end records a call's result in b and reports it. A call cut short by the end of ctx is
// left in flight in the state, which is the truth: nobody knows what it did.
func (l *loop) end(ctx context.Context, p *pendingCall, b *saves) {
	if p.abort != nil && ctx.Err() != nil {
		return
	}
	l.emit(finished(p.ref.ID, p.ref.Name, l.meta(p), p.res))
	idx, res := p.idx, p.res
	b.add([]int{idx}, func(s *state.StepState) { finishRecord(s, idx, res) })
}

// finished is the event of a call that has its result.
func finished(id, name, meta string, res state.ToolCallResult) ports.Event {
	status := "ok"
	switch {
	case res.Denied:
		status = "denied"
	case !res.Success:
		status = "error"
	}
	return ports.Event{Kind: ports.ToolFinished, Tool: name, CallID: id, Meta: meta,
		Status: status, Duration: time.Duration(res.DurationMs) * time.Millisecond, Message: res.Error}
}

// finishRecord sets the result of the call recorded at idx and counts it.
func finishRecord(s *state.StepState, idx int, res state.ToolCallResult) {
	if idx < 0 || idx >= len(s.ToolCalls) {
		return
	}
	s.ToolCalls[idx].Result = &res
	s.ToolCalls[idx].InFlight = false
	addStats(s, res)
}

func addStats(s *state.StepState, res state.ToolCallResult) {
	if s.ToolStats == nil {
		s.ToolStats = &state.ToolStats{}
	}
	s.ToolStats.Add(res)
}

func (l *loop) meta(p *pendingCall) string { return summary(p.info, p.args) }

// summary is a call's one-line summary for people, "" when its tool has none.
func summary(info ports.ToolInfo, args map[string]any) string {
	if info.Meta == nil {
		return ""
	}
	return info.Meta(args)
}

// resultText is what the model reads back: the output, or the error with whatever output the
// tool produced (a failing test run's report matters). Providers without an error flag see
// the "Error:" or "Denied:" prefix.
func resultText(r state.ToolCallResult) string {
	if r.Success {
		if r.Output == "" {
			return "(no output)"
		}
		return r.Output
	}
	prefix := "Error: "
	if r.Denied {
		prefix = "Denied: "
	}
	if r.Output == "" {
		return prefix + r.Error
	}
	return strings.TrimRight(r.Output, "\n") + "\n\n" + prefix + r.Error
}

// closeAbandoned closes the records a crash left in flight that the model did not ask for
// again, so that no call stays in flight once the step has ended. A tool with a check still
// says whether the call took effect; the others' outcome is unknown. None is run again.
func (l *loop) closeAbandoned(ctx context.Context) error {
	idxs := l.resume.abandoned()
	if len(idxs) == 0 {
		return nil
	}
	type closed struct {
		idx int
		res state.ToolCallResult
		rcv state.Recovery
	}
	var out []closed
	for _, i := range idxs {
		rec := l.resume.record(i)
		c := closed{idx: i,
			res: state.ToolCallResult{Error: "interrupted: the run stopped while this call was in flight (about to run, or running), and the resumed model did not ask for it again"},
			rcv: state.Recovery{Decision: state.RecoveryUnknown, By: state.RecoveredByNonInteractive, Detail: "the resumed model did not ask for this call again"}}
		if chk := l.info[rec.Tool].Checker; chk != nil {
			check := chk.Check(ctx, tool.Invocation{ID: rec.ID, Args: rec.Arguments, Scope: l.sc.Scope}, rec.Intent)
			if check.Verdict == tool.VerdictDone {
				c.res = state.ToolCallResult{Success: true, Approval: state.RecoveredByCheck,
					Output: "This call was in flight when the run stopped; it took effect (" + check.Detail + "). The resumed model did not ask for it again."}
				c.rcv = state.Recovery{Decision: state.RecoveryDone, By: state.RecoveredByCheck, Detail: check.Detail}
			} else {
				c.rcv.Detail += "; its check: " + check.Detail
			}
		}
		outcome := "its outcome is unknown"
		if c.res.Success {
			outcome = "its check says it took effect"
		}
		l.warn(fmt.Sprintf("tool call %s (%s) was in flight when the run stopped and the model did not ask for it again: %s",
			rec.ID, rec.Tool, outcome))
		if err := l.audit(ctx, rec.ID, rec.Tool, c.res, c.rcv); err != nil {
			return err
		}
		out = append(out, c)
	}
	return l.save(ctx, idxs, func(s *state.StepState) {
		for _, c := range out {
			finishRecord(s, c.idx, c.res)
			settleRecord(s, c.idx, c.rcv, nil)
		}
	})
}
