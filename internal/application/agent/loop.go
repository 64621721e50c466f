package agent

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// loop is one execution of one agent step. It is used by one goroutine, except that the
// calls of one reply may run concurrently (see runCalls), which touch only their own slots.
type loop struct {
	x    *Executor
	sc   runner.StepContext
	a    *workflow.AgentStep
	step string

	prov     ports.Provider
	provName string
	model    string
	options  map[string]any
	tools    []ports.ToolSchema
	info     map[string]ports.ToolInfo
	// toolNames lists the step's tools in order, for messages to the model.
	toolNames []string
	prompt    string

	conv       bool
	convOpts   workflow.ConversationOptions
	priorTurns int

	// hist is the conversation as the state records it: the system prompt first (when
	// sysOff is 1), then the messages sent to the model. It only grows by append, except
	// when the context window strategy replaces it by a new slice.
	hist   []state.Message
	sysOff int
	ids    map[string]bool
	nextID int

	// Token accounting for the context window: est estimates hist[sysOff:]; reported is what
	// the provider counted for the last request and its reply (0 when unknown) and since
	// estimates what was appended after that reply.
	est, reported, since int

	turn   int
	calls  int
	tokens state.Tokens
	// endpoint and cassette are the provider's, for the step's record.
	endpoint, cassette string
	// turns records each reply, those of earlier attempts first.
	turns     []state.Turn
	stoppedBy string
	content   string
	// lastOnly makes the next reply the last one: after a json correction, or when max_calls
	// is reached with on_max_calls: stop (then without tools).
	lastOnly  bool
	noTools   bool
	corrected bool
	// cutOff is true when the last reply ended at the token limit; allowTruncated accepts
	// such a reply as the final answer (options.allow_truncated).
	cutOff         bool
	allowTruncated bool

	maxCalls, maxRepeats int
	lastKey              string
	repeats              int

	resume *resume
}

// run turns the loop until the model answers without a call (or a limit ends it) and returns
// the step's outcome.
func (l *loop) run(ctx context.Context) (runner.StepOutcome, error) {
	for {
		if err := ctx.Err(); err != nil {
			return l.outcome(nil), context.Cause(ctx)
		}
		if err := l.fitContext(ctx); err != nil {
			return l.outcome(nil), err
		}
		resp, err := l.chat(ctx)
		if err != nil {
			return l.outcome(nil), err
		}
		calls := l.accept(resp)
		if err := l.finishOK(resp, calls); err != nil {
			return l.outcome(nil), err
		}
		done, err := l.next(ctx, calls)
		if err != nil {
			return l.outcome(nil), err
		}
		if !done {
			continue
		}
		out, value, again, err := l.output()
		if err != nil {
			return l.outcome(nil), err
		}
		if again {
			continue
		}
		if err := l.closeAbandoned(ctx); err != nil {
			return l.outcome(nil), err
		}
		o := l.outcome(value)
		o.Output = out
		return o, nil
	}
}

// next decides what follows a reply: running its calls, asking again, or the end.
func (l *loop) next(ctx context.Context, calls []state.CallRef) (done bool, err error) {
	if l.conv {
		stop, err := l.stopCondition()
		if err != nil {
			return false, err
		}
		if stop {
			l.stop(StoppedByCondition, calls)
			return true, nil
		}
	}
	if l.lastOnly {
		if len(calls) > 0 {
			l.warn(fmt.Sprintf("the model asked for %d more tool calls after being told it could not; they were not run", len(calls)))
			l.closeCalls(calls, "not run: no more tool calls are allowed in this step")
		}
		return true, nil
	}
	if len(calls) == 0 {
		return l.noCalls(ctx)
	}
	if l.conv && l.turn >= l.convOpts.MaxTurns {
		l.stop(StoppedByMaxTurns, calls)
		return true, nil
	}
	return false, l.runCalls(ctx, calls)
}

// noCalls handles a reply without a call: the answer, unless conversation mode asks again.
func (l *loop) noCalls(ctx context.Context) (done bool, err error) {
	if !l.conv {
		return true, nil
	}
	if l.convOpts.StopCondition == "" {
		l.stoppedBy = StoppedByNoCalls
		return true, nil
	}
	if l.turn >= l.convOpts.MaxTurns {
		l.stoppedBy = StoppedByMaxTurns
		return true, nil
	}
	// F033 refinement: the stop condition does not hold yet, so the step's prompt is sent
	// again for another turn. The turn is saved, as tool calls are.
	l.append(state.Message{Role: "user", Content: l.prompt})
	return false, l.save(ctx, nil, func(*state.StepState) {})
}

// stop ends a conversation early. Calls the last reply asked for are not run: the model
// would never see their results.
func (l *loop) stop(by string, calls []state.CallRef) {
	l.stoppedBy = by
	if len(calls) > 0 {
		l.warn(fmt.Sprintf("conversation stopped by %s; the %d tool calls of the last reply were not run", by, len(calls)))
		l.closeCalls(calls, "not run: the conversation stopped ("+by+")")
	}
}

// closeCalls answers calls that will not run, so that the recorded conversation stays well
// formed (every call has a result) should another step continue it.
func (l *loop) closeCalls(calls []state.CallRef, why string) {
	for _, c := range calls {
		l.append(state.Message{Role: "tool", ToolCallID: c.ID, Name: c.Name, Content: why, IsError: true})
	}
}

// chat sends the conversation to the provider.
func (l *loop) chat(ctx context.Context) (ports.ChatResponse, error) {
	req := ports.ChatRequest{
		Model:    l.model,
		System:   l.system(),
		Messages: l.hist[l.sysOff:len(l.hist):len(l.hist)],
		Options:  l.options,
	}
	if !l.noTools {
		req.Tools = l.tools
	}
	resp, err := l.prov.Chat(ctx, req)
	if herr := l.recordHandled(ctx, resp.HandledCalls); herr != nil {
		if err == nil {
			return ports.ChatResponse{}, herr
		}
		l.warn(herr.Error())
	}
	if err != nil {
		if ctx.Err() != nil {
			return ports.ChatResponse{}, context.Cause(ctx)
		}
		return ports.ChatResponse{}, err
	}
	return resp, nil
}

func (l *loop) system() string {
	if l.sysOff == 1 {
		return l.hist[0].Content
	}
	return ""
}

// accept records a reply: tokens, the assistant message with its calls (ids made unique
// within the conversation) and an event.
func (l *loop) accept(resp ports.ChatResponse) []state.CallRef {
	l.turn++
	l.tokens.Add(resp.Usage)
	turn := state.Turn{FinishReason: resp.FinishReason, Divergence: resp.Divergence, Text: resp.Content}
	if resp.Usage != (state.Tokens{}) {
		u := resp.Usage
		turn.Usage = &u
	}
	if resp.Divergence != "" {
		l.warn("replay: " + resp.Divergence)
	}
	var calls []state.CallRef
	for _, c := range resp.ToolCalls {
		if c.ID == "" || l.ids[c.ID] {
			c.ID = l.freshID()
		}
		l.ids[c.ID] = true
		calls = append(calls, c)
		turn.Calls = append(turn.Calls, c.ID)
	}
	l.turns = append(l.turns, turn)
	l.content = resp.Content
	l.cutOff = resp.FinishReason == ports.FinishLength
	l.append(state.Message{Role: "assistant", Content: resp.Content, ToolCalls: calls, Thinking: resp.Thinking})
	if u := resp.Usage; u.Input > 0 || u.Output > 0 {
		l.reported, l.since = u.Input+u.Output, 0
	}
	status := "answer"
	if len(calls) > 0 {
		status = strconv.Itoa(len(calls)) + " tool calls"
	}
	l.emit(ports.Event{Kind: ports.ModelResponse, Status: status, Message: firstLine(resp.Content, 200)})
	// No save of its own: the tokens and conversation go with the save before the first call
	// (every save carries them), or with the runner's save at the end of the step. A save is
	// an fsync; one per reply would add half again to the cost of a call.
	return calls
}

// freshID returns a call id not yet used in the conversation.
func (l *loop) freshID() string {
	for {
		l.nextID++
		id := "call_" + strconv.Itoa(l.nextID)
		if !l.ids[id] {
			return id
		}
	}
}

// append adds a message to the conversation, keeping the token estimates.
func (l *loop) append(m state.Message) {
	l.hist = append(l.hist, m)
	n := estimateMessage(m)
	l.est += n
	l.since += n
}

// save persists the step's live record: tokens, the conversation in conversation mode, and
// whatever mutate changes. calls are the indexes of the tool call records already saved that
// mutate changes; records it appends need no mention. The store is told so
// (ports.StepChanges), and that the conversation and the turns are only appended to (or
// replaced whole, see compact), so that a save does not compare every earlier call.
func (l *loop) save(ctx context.Context, calls []int, mutate func(*state.StepState)) error {
	tokens := l.tokens
	conv := l.conversation()
	turns := l.turns[:len(l.turns):len(l.turns)]
	ctx = ports.WithStepChanges(ctx, ports.StepChanges{Calls: calls})
	err := l.sc.Save(ctx, func(s *state.StepState) {
		if tokens != (state.Tokens{}) {
			s.Tokens = &tokens
		}
		if len(turns) > 0 {
			s.Turns = turns
		}
		s.Agent = l.agentRecord()
		if conv != nil {
			s.Conversation = conv
		}
		mutate(s)
	})
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("save step state: %w", err))
	}
	return nil
}

// conversation is the state's view of the conversation, nil outside conversation mode. The
// slice is capped so that later appends never write into what the state holds.
func (l *loop) conversation() *state.Conversation {
	if !l.conv {
		return nil
	}
	return &state.Conversation{
		Turns:     l.priorTurns + l.turn,
		StoppedBy: l.stoppedBy,
		Messages:  l.hist[:len(l.hist):len(l.hist)],
	}
}

// outcome is what the step records, also when it fails.
func (l *loop) outcome(resp any) runner.StepOutcome {
	o := runner.StepOutcome{Output: l.content, Response: resp, Conversation: l.conversation(),
		Turns: l.turns[:len(l.turns):len(l.turns)], Agent: l.agentRecord()}
	if l.tokens != (state.Tokens{}) {
		t := l.tokens
		o.Tokens = &t
	}
	return o
}

func (l *loop) emit(e ports.Event) {
	if l.sc.Emit != nil {
		l.sc.Emit(e)
	}
}

// warn tells the person running awf, once: as a Warning event when there is an event sink
// (the progress output prints it), else as a log line. Both would print it twice on stderr.
func (l *loop) warn(msg string) {
	switch {
	case l.sc.Emit != nil:
		l.emit(ports.Event{Kind: ports.Warning, Message: msg})
	case l.sc.Log != nil:
		l.sc.Log.Warn(msg)
	}
}

// firstLine returns the first non-empty line of s, cut to about n bytes, for events.
func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " ..."
	}
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// agentRecord says which model the step talks to, for its record.
func (l *loop) agentRecord() *state.AgentRecord {
	return &state.AgentRecord{Provider: l.provName, Model: l.model, Endpoint: l.endpoint, Cassette: l.cassette}
}
