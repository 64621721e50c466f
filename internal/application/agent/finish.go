package agent

import (
	"fmt"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// OptionAllowTruncated is the agent step option (options.allow_truncated: true) that accepts
// a final answer cut off at the token limit as the step's output. awf reads it and does not
// send it to the provider.
const OptionAllowTruncated = "allow_truncated"

// finishOK fails the step on a reply without calls that is not an answer: the model refused
// ("the model refused: <its explanation>"), the provider's content filter withheld it, or it
// was cut off at the token limit and the step did not opt in with options.allow_truncated. A
// reply with calls goes on whatever its finish reason: a call whose arguments the limit cut
// off goes back to the model as an error result (see classify).
func (l *loop) finishOK(resp ports.ChatResponse, calls []state.CallRef) error {
	if len(calls) > 0 {
		return nil
	}
	switch resp.FinishReason {
	case ports.FinishRefusal:
		why := strings.TrimSpace(resp.Refusal)
		if why == "" {
			why = strings.TrimSpace(resp.Content)
		}
		if why == "" {
			why = "(it gave no explanation)"
		}
		return fault.New(fault.Execution, "the model refused: %s", why)
	case ports.FinishContentFilter:
		return fault.New(fault.Execution, "the provider's content filter withheld the model's answer (finish reason %s)", resp.FinishReason)
	case ports.FinishLength:
		if l.allowTruncated {
			l.warn("the model's answer was cut off at the token limit; accepted as the output (options.allow_truncated)")
			return nil
		}
		return fault.New(fault.Execution, "the model's answer was cut off at the token limit (finish reason length, %d characters): "+
			"raise options.max_tokens, or set options.%s: true to accept a cut-off answer", len(resp.Content), OptionAllowTruncated)
	}
	return nil
}

// truncatedArgs explains arguments that do not parse in a reply the token limit cut off.
func (l *loop) truncatedArgs(err error) string {
	if !l.cutOff {
		return err.Error()
	}
	return fmt.Sprintf("%v (your reply was cut off at the token limit inside these arguments: send shorter arguments, or split the work into several calls)", err)
}

// takeAllowTruncated reads options.allow_truncated out of the request options: it is awf's,
// not the API's.
func takeAllowTruncated(opts map[string]any) (bool, error) {
	v, ok := opts[OptionAllowTruncated]
	if !ok {
		return false, nil
	}
	delete(opts, OptionAllowTruncated)
	b, ok := v.(bool)
	if !ok {
		return false, fault.New(fault.Invalid, "options.%s: want true or false, got %v", OptionAllowTruncated, v)
	}
	return b, nil
}
