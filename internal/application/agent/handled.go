package agent

import (
	"context"

	"github.com/awf-dev/awf/internal/domain/state"
)

// noResult is the error of a handled call that came without a result, which a provider
// should never send: recorded as a failure rather than as a call still in flight, since
// nothing will finish it.
const noResult = "the provider reported this call without its result"

// recordHandled records the calls the provider's agent already made through awf's governed
// path (ports.ChatResponse.HandledCalls: an agent CLI given the step's tools through `awf mcp
// serve`). They go into the step's tool_calls as completed records, with who approved or
// refused them and numbers in their arguments as for the model's calls, and into
// tool_stats, in one save; each gets a tool_finished event. The loop does not run them, does
// not count them against max_calls (they are the agent's own loop), and does not add them to
// the conversation.
func (l *loop) recordHandled(ctx context.Context, calls []state.ToolCallRecord) error {
	if len(calls) == 0 {
		return nil
	}
	recs := make([]state.ToolCallRecord, len(calls))
	for i, c := range calls {
		res := state.ToolCallResult{Error: noResult}
		if c.Result != nil {
			res = *c.Result
		}
		args := map[string]any{}
		if c.Arguments != nil {
			args = convertNumbers(c.Arguments).(map[string]any)
		}
		recs[i] = state.ToolCallRecord{ID: c.ID, Tool: c.Tool, Arguments: args, Result: &res}
	}
	err := l.save(ctx, nil, func(s *state.StepState) {
		for _, r := range recs {
			s.ToolCalls = append(s.ToolCalls, r)
			addStats(s, *r.Result)
		}
	})
	if err != nil {
		return err
	}
	for _, r := range recs {
		l.emit(finished(r.ID, r.Tool, summary(l.info[r.Tool], r.Arguments), *r.Result))
	}
	return nil
}
