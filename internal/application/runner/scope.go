package runner

import (
	"encoding/json"
	"strings"

	"github.com/awf-dev/awf/internal/domain/state"
)

// stateEntry is what `states.<step>` shows templates. Keys use the state file's names. Every
// key is present so that a condition such as `states.x.exit_code == 0` sees nil rather than an
// error for a step without that field; a step that is absent is the error.
func stateEntry(s *state.StepState) map[string]any {
	var exitCode, tokens, toolStats any
	if s.ExitCode != nil {
		exitCode = *s.ExitCode
	}
	if t := s.Tokens; t != nil {
		tokens = map[string]any{"input": t.Input, "output": t.Output, "total": t.Total}
	}
	if ts := s.ToolStats; ts != nil {
		toolStats = map[string]any{
			"total_calls": ts.TotalCalls, "successful": ts.Successful, "failed": ts.Failed,
			"denied": ts.Denied, "total_duration_ms": ts.TotalDurationMs,
		}
	}
	return map[string]any{
		"output":     s.Output,
		"status":     string(s.Status),
		"error":      s.Error,
		"response":   response(s),
		"exit_code":  exitCode,
		"tokens":     tokens,
		"tool_calls": toolCalls(s.ToolCalls),
		"tool_stats": toolStats,
	}
}

// response is the step's structured output: what the step recorded, else its output parsed as
// JSON when it is a JSON object or array, else nil.
func response(s *state.StepState) any {
	if s.Response != nil {
		return s.Response
	}
	out := strings.TrimSpace(s.Output)
	if out == "" || (out[0] != '{' && out[0] != '[') {
		return nil
	}
	var v any
	if json.Unmarshal([]byte(out), &v) != nil {
		return nil
	}
	return v
}

// noCalls is the tool_calls of a step without any; templates only read it.
var noCalls = []any{}

func toolCalls(calls []state.ToolCallRecord) []any {
	if len(calls) == 0 {
		return noCalls
	}
	list := make([]any, len(calls))
	for i, c := range calls {
		call := map[string]any{"id": c.ID, "tool": c.Tool, "arguments": c.Arguments, "result": nil}
		if r := c.Result; r != nil {
			call["result"] = map[string]any{
				"success": r.Success, "output": r.Output, "error": r.Error,
				"duration_ms": r.DurationMs, "approval": r.Approval, "denied": r.Denied,
			}
		}
		list[i] = call
	}
	return list
}
