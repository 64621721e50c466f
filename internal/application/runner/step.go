package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// StepOutcome is what one attempt of a step produced. Fields a step type has no use for stay
// zero. Tool calls are not part of it: they are recorded as they happen, through the step's
// Save callback, so that they survive a crash in the middle of a step.
type StepOutcome struct {
	// Output is the step's text output, as templates see it in states.<step>.output.
	Output string
	// Response is structured output (parsed JSON, a tool's data); nil lets templates parse
	// Output when it is JSON.
	Response     any
	ExitCode     *int
	Command      [][]string // what a shell step ran (ports.BoundCommand.Argv)
	Stderr       string     // kept in the state only when the step fails
	Tokens       *state.Tokens
	Conversation *state.Conversation
	// Turns are an agent step's model replies, those of earlier attempts included.
	Turns []state.Turn
	// Agent is an agent step's model (provider, model, endpoint, cassette).
	Agent *state.AgentRecord
	Vars  map[string]string
}

// stepError is a step's failure, naming the step.
type stepError struct {
	step string
	err  error
}

func (e *stepError) Error() string { return fmt.Sprintf("step %q: %v", e.step, e.err) }
func (e *stepError) Unwrap() error { return e.err }

// timeoutError is a step attempt that ran out of time. It is an execution failure and
// matches context.DeadlineExceeded.
type timeoutError struct{ after time.Duration }

func (e *timeoutError) Error() string         { return fmt.Sprintf("timed out after %s", e.after) }
func (e *timeoutError) Unwrap() error         { return context.DeadlineExceeded }
func (e *timeoutError) FaultKind() fault.Kind { return fault.Execution }

// stepRun is one execution of one step: the context every attempt shares.
type stepRun struct {
	e    *execution
	step *workflow.Step
	log  *slog.Logger
	// prev is a copy of the step's record before this execution began (nil when the step
	// never ran): it lets a resumed workflow step continue its sub-run.
	prev *state.StepState
	// startSave is the deferred save of the step's start (Deps.StartSaveDelay), or nil.
	startSave *time.Timer
	// unsaved are the events of changes made to the step's record (note) and not saved yet:
	// the next save of the step emits them, once what they report is durable.
	unsaved []ports.Event
}

// save applies fn to the step's live record and saves it: through the store's journal,
// when it has one (see execution.saveStepLocked). The events of earlier changes (note)
// follow it.
func (sr *stepRun) save(ctx context.Context, fn func(*state.StepState)) error {
	sr.stopStartSave()
	err := sr.e.update(ctx, sr.step.Name, fn)
	sr.emitSaved()
	return err
}

// note applies fn to the step's live record without saving it, and keeps ev for after the
// step's next save: a change that another follows at once (a tool step's result, then its
// end) is made durable by one sync, and nothing reports it before.
func (sr *stepRun) note(fn func(*state.StepState), ev ports.Event) {
	e := sr.e
	e.mu.Lock()
	fn(e.st.Step(sr.step.Name))
	e.mu.Unlock()
	sr.unsaved = append(sr.unsaved, ev)
}

// emitSaved emits the events of the changes the step's last save made durable.
func (sr *stepRun) emitSaved() {
	for _, ev := range sr.unsaved {
		sr.e.emit(ev)
	}
	sr.unsaved = nil
}

// stopStartSave cancels the deferred save of the step's start: a save of the step records it
// as running, so that one would only write the run again.
func (sr *stepRun) stopStartSave() {
	if sr.startSave != nil {
		sr.startSave.Stop()
	}
}

// step runs one step to its end and records it. It returns nil when the step completed, was
// skipped, had already completed before a resume, or failed with continue_on_error.
func (e *execution) step(ctx context.Context, step *workflow.Step) error {
	if e.done(step.Name) {
		return nil
	}
	scope := e.scope()
	if step.When != "" {
		run, err := e.when(step.When, scope)
		if err != nil {
			sr := e.begin(ctx, step)
			return e.end(ctx, sr, StepOutcome{}, err)
		}
		if !run {
			e.skip(ctx, step)
			return nil
		}
	}
	sr := e.begin(ctx, step)
	out, err := e.attempts(ctx, sr)
	return e.end(ctx, sr, out, err)
}

// done reports whether the step already completed or was skipped (in the run being resumed).
func (e *execution) done(name string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.st.States[name]
	return ok && s.Status.Done()
}

func (e *execution) when(expr string, scope ports.Scope) (bool, error) {
	v, err := e.r.d.Templater.Eval(expr, scope)
	if err != nil {
		return false, fmt.Errorf("when: %w", err)
	}
	b, ok := v.(bool)
	if !ok {
		return false, fault.New(fault.Invalid, "when: %q is %T, want a boolean", expr, v)
	}
	return b, nil
}

func (e *execution) skip(ctx context.Context, step *workflow.Step) {
	e.mu.Lock()
	s := e.st.Step(step.Name)
	now := e.r.d.Clock.Now()
	*s = state.StepState{Status: state.Skipped, FinishedAt: &now, Vars: s.Vars}
	e.publishLocked(step.Name, s)
	_ = e.saveStepLocked(ctx, step.Name) // a failed save is kept in saveErr and ends the run
	e.mu.Unlock()
	e.log.Debug("step skipped", "step", step.Name)
	e.emit(ports.Event{Kind: ports.StepFinished, Step: step.Name, Status: string(state.Skipped)})
}

// begin marks the step running and saves. What earlier executions recorded of real tool
// calls, tokens, conversation and vars stays: those things happened.
func (e *execution) begin(ctx context.Context, step *workflow.Step) *stepRun {
	sr := &stepRun{e: e, step: step, log: e.log.With("step", step.Name)}
	e.mu.Lock()
	_, existed := e.st.States[step.Name]
	s := e.st.Step(step.Name)
	if existed {
		prev := *s
		sr.prev = &prev
	}
	now := e.r.d.Clock.Now()
	*s = state.StepState{
		Status:       state.Running,
		StartedAt:    &now,
		ToolCalls:    s.ToolCalls,
		ToolStats:    s.ToolStats,
		Tokens:       s.Tokens,
		Conversation: s.Conversation,
		Turns:        s.Turns,
		Vars:         s.Vars,
	}
	if d := e.r.d.StartSaveDelay; d > 0 {
		sr.startSave = time.AfterFunc(d, func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			if s.Status == state.Running {
				_ = e.saveStepLocked(context.WithoutCancel(ctx), step.Name)
			}
		})
	} else {
		_ = e.saveStepLocked(ctx, step.Name)
	}
	e.mu.Unlock()
	sr.log.Debug("step started", "type", step.Type)
	e.emit(ports.Event{Kind: ports.StepStarted, Step: step.Name, Attempt: 1})
	return sr
}

// end records the step's outcome, saves, and decides what its failure means for the run.
func (e *execution) end(ctx context.Context, sr *stepRun, out StepOutcome, err error) error {
	name := sr.step.Name
	status := state.Completed
	switch {
	case err != nil && ctx.Err() != nil:
		status = state.Interrupted
		err = fmt.Errorf("interrupted: %w", context.Cause(ctx))
	case err != nil:
		status = state.Failed
	}
	sr.stopStartSave()
	e.mu.Lock()
	s := e.st.Step(name)
	now := e.r.d.Clock.Now()
	s.Status = status
	s.FinishedAt = &now
	if s.StartedAt != nil {
		s.DurationMs = now.Sub(*s.StartedAt).Milliseconds()
	}
	record(s, out)
	s.Error, s.Stderr = "", ""
	if err != nil {
		s.Error = err.Error()
		s.Stderr = out.Stderr
	}
	if visible(status) {
		e.publishLocked(name, s)
	}
	_ = e.saveStepLocked(ctx, name)
	var took time.Duration
	if s.StartedAt != nil {
		took = now.Sub(*s.StartedAt)
	}
	e.mu.Unlock()
	sr.emitSaved()

	ev := ports.Event{Kind: ports.StepFinished, Step: name, Status: string(status), Duration: took}
	if err != nil {
		ev.Message = err.Error()
	}
	e.emit(ev)
	sr.log.Debug("step finished", "status", status, "err", err)
	switch {
	case err == nil:
		return nil
	case status == state.Failed && sr.step.ContinueOnError:
		sr.log.Info("step failed, continuing", "err", err)
		return nil
	default:
		return &stepError{step: name, err: err}
	}
}

// record copies an attempt's outcome into the step's record.
func record(s *state.StepState, out StepOutcome) {
	s.Output = out.Output
	s.Response = out.Response
	s.ExitCode = out.ExitCode
	s.Command = out.Command
	if out.Tokens != nil {
		s.Tokens = out.Tokens
	}
	if out.Conversation != nil {
		s.Conversation = out.Conversation
	}
	if out.Agent != nil {
		s.Agent = out.Agent
	}
	if out.Turns != nil {
		s.Turns = out.Turns
	}
	for k, v := range out.Vars {
		if s.Vars == nil {
			s.Vars = map[string]string{}
		}
		s.Vars[k] = v
	}
}

// attempts runs the step as often as its retry policy allows, waiting Retry.Delay between
// attempts. Each attempt has the step's whole timeout. Failures that another attempt cannot
// fix (see retryable) and interruptions are not retried.
func (e *execution) attempts(ctx context.Context, sr *stepRun) (StepOutcome, error) {
	step := sr.step
	maxAttempts := 1
	if step.Retry != nil && step.Retry.MaxAttempts > 1 {
		maxAttempts = step.Retry.MaxAttempts
	}
	for attempt := 1; ; attempt++ {
		e.mu.Lock()
		e.st.Step(step.Name).Attempts = attempt
		e.mu.Unlock()
		out, err := e.attempt(ctx, sr, attempt)
		if err == nil || ctx.Err() != nil || attempt >= maxAttempts || !retryable(err) {
			return out, err
		}
		delay := step.Retry.Delay(attempt)
		sr.log.Info("step failed, retrying", "attempt", attempt, "delay", delay, "err", err)
		_ = sr.save(ctx, func(s *state.StepState) { s.Error = err.Error() })
		e.emit(ports.Event{Kind: ports.StepRetrying, Step: step.Name, Attempt: attempt + 1,
			Duration: delay, Message: err.Error()})
		if err := e.r.d.Sleep(ctx, delay); err != nil {
			return out, err
		}
	}
}

// retryable reports whether trying again could help: not for mistakes in the workflow
// (Invalid), the user's input (Usage) or a policy's refusal (Denied).
func retryable(err error) bool {
	switch fault.KindOf(err) {
	case fault.Invalid, fault.Usage, fault.Denied:
		return false
	}
	return true
}

// attempt runs the step once, under its timeout.
func (e *execution) attempt(ctx context.Context, sr *stepRun, n int) (StepOutcome, error) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if t := sr.step.Timeout; t > 0 {
		actx, cancel = e.r.d.WithTimeout(ctx, t)
	}
	defer cancel()
	out, err := e.dispatch(actx, sr, n)
	if err != nil && sr.step.Timeout > 0 && ctx.Err() == nil &&
		(errors.Is(actx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded)) {
		err = &timeoutError{after: sr.step.Timeout}
	}
	return out, err
}

func (e *execution) dispatch(ctx context.Context, sr *stepRun, attempt int) (StepOutcome, error) {
	step := sr.step
	switch {
	case step.Type == workflow.StepShell && step.Shell != nil:
		return e.shell(ctx, sr)
	case step.Type == workflow.StepTool && step.Tool != nil:
		return e.tool(ctx, sr)
	case step.Type == workflow.StepAgent && step.Agent != nil:
		return e.agent(ctx, sr, attempt)
	case step.Type == workflow.StepParallel && step.Parallel != nil:
		return e.parallel(ctx, sr)
	case step.Type == workflow.StepWorkflow && step.Workflow != nil:
		return e.subWorkflow(ctx, sr, attempt)
	}
	return StepOutcome{}, fault.New(fault.Invalid, "step type %q has no %s settings", step.Type, step.Type)
}
