package agent

import (
	"slices"

	"github.com/awf-dev/awf/internal/domain/state"
)

// resume matches the calls a model asks for again, after a crash or in a retried attempt,
// with the calls the step recorded before (runner.StepContext.Previous). The loop starts the
// conversation over; as long as the model asks for the recorded calls in the recorded order
// (same tool, same arguments), a completed call is answered from its record instead of being
// run again, and a call the crash left in flight is reported and, if its tool is idempotent,
// run again. The first call that differs ends the matching: from then on calls run as new
// ones, and records left in flight after that point are closed as interrupted.
//
// Record indexes are those of the step's live record, which starts with the previous calls.
type resume struct {
	records []state.ToolCallRecord
	keys    []string // callKey of each record, computed once
	next    int
	done    bool
}

func newResume(prev *state.StepState) *resume {
	r := &resume{done: true}
	if prev == nil || len(prev.ToolCalls) == 0 {
		return r
	}
	r.records = slices.Clone(prev.ToolCalls)
	r.keys = make([]string, len(r.records))
	for i, rec := range r.records {
		r.keys[i] = callKey(rec.Tool, rec.Arguments)
	}
	r.done = false
	return r
}

// match returns the index of the record the next call replays, or -1 when the call is new.
// A mismatch ends the matching for the rest of the step.
func (r *resume) match(key string) int {
	if r.done {
		return -1
	}
	if r.next >= len(r.records) || r.keys[r.next] != key {
		r.done = true
		return -1
	}
	r.next++
	return r.next - 1
}

// record returns the recorded call at i.
func (r *resume) record(i int) state.ToolCallRecord { return r.records[i] }

// abandoned returns the indexes of records still in flight that no call replayed: the
// model went another way after the crash.
func (r *resume) abandoned() []int {
	var out []int
	for i := r.next; i < len(r.records); i++ {
		if r.records[i].InFlight && r.records[i].Result == nil {
			out = append(out, i)
		}
	}
	r.next = len(r.records)
	r.done = true
	return out
}
