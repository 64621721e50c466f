package durable

import (
	"maps"
	"slices"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// eventTail is how many of its latest progress events a run carries into the execution it
// continues as: a submitter further behind than that misses the ones before.
const eventTail = 1000

// Continuation is what a run carries into its next workflow execution when it continues as
// new (its history grew long): its state (the steps that ended, with their outputs), the
// states of its sub-workflows' runs, the counter of its ids, its latest progress events and
// the decisions received for calls that do not wait yet. The definition travels unchanged in
// RunInput (its digests in the state's sources). Large, it goes to the payload store like any
// payload: the history carries its reference.
type Continuation struct {
	State     *state.RunState
	Children  []*state.RunState
	IDs       int
	Events    []Event
	EventBase int
	Decisions []Decision
	// Queue is the task queue its workspace's worker claimed ("" for a shared workspace).
	Queue string
	// Executions counts the executions the run continued from.
	Executions int
}

// Event is a progress event as the events query returns it. Seq numbers the events of its
// run (RunID) from 0: a run's list holds its children's events too (merged when a child
// ends), and a follower reading both shows each event once.
type Event struct {
	ports.Event
	Seq int
}

// EventPage is the answer of the events query: the events from the index asked and the
// index to ask next (events too old to be kept, see eventTail, are skipped), and the runs of
// sub-workflows in progress, whose events a follower reads from them until they end.
type EventPage struct {
	Events  []Event
	Next    int
	Running []string
}

// restore sets an execution from the run's previous one.
func (x *execution) restore(c *Continuation) {
	if c == nil {
		return
	}
	for _, st := range append(slices.Clone(c.Children), c.State) {
		if st != nil {
			x.store.runs[st.ID] = st
		}
	}
	x.ids, x.queue = c.IDs, c.Queue
	x.events, x.base = c.Events, c.EventBase
	for _, ev := range c.Events {
		x.seq[ev.RunID] = max(x.seq[ev.RunID], ev.Seq+1)
	}
	for _, d := range c.Decisions {
		x.decisions[d.CallID] = d
	}
}

// pause tells the runner, between two steps, to continue as new: when the server suggests it
// (its history's size or length) or past ContinueAfter events.
func (x *execution) pause(wctx workflow.Context) bool {
	info := workflow.GetInfo(wctx)
	limit := x.in.ContinueAfter
	if limit <= 0 {
		limit = defaultContinueAfter
	}
	return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() >= limit
}

// continueAsNew ends this execution with the run's next one, carrying st and what else the
// run has gathered.
func (x *execution) continueAsNew(wctx workflow.Context, st *state.RunState) error {
	x.drain()
	next := x.in
	c := &Continuation{State: st, IDs: x.ids, Queue: x.queue, Children: x.store.children(x.in.RunID)}
	if x.in.Continued != nil {
		c.Executions = x.in.Continued.Executions
	}
	c.Executions++
	x.mu.Lock()
	keep := max(len(x.events)-eventTail, 0)
	c.Events, c.EventBase = slices.Clone(x.events[keep:]), x.base+keep
	x.mu.Unlock()
	for _, id := range slices.Sorted(maps.Keys(x.decisions)) {
		c.Decisions = append(c.Decisions, x.decisions[id])
	}
	next.Continued = c
	return workflow.NewContinueAsNewError(wctx, WorkflowName, next)
}

// eventsFrom is the events query: the events from index from (counted over the run's
// executions) on.
func (x *execution) eventsFrom(from int) EventPage {
	x.mu.Lock()
	defer x.mu.Unlock()
	end := x.base + len(x.events)
	if from < x.base {
		from = x.base
	}
	if from > end {
		from = end
	}
	return EventPage{Events: slices.Clone(x.events[from-x.base:]), Next: end, Running: slices.Sorted(maps.Keys(x.running))}
}

// merge adds the events of a child run that ended (its own and its children's) to this run's,
// where a local run shows them: before the sub-workflow step's end.
func (x *execution) merge(evs []Event) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, ev := range evs {
		x.events = append(x.events, ev)
		x.seq[ev.RunID] = max(x.seq[ev.RunID], ev.Seq+1)
	}
}

// resultEvents are the events a run's result carries to its parent: those of a sub-workflow's
// run, for the parent to merge; none for a root run, whose submitter reads them by query.
func (x *execution) resultEvents() []Event {
	if x.in.Parent == "" {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.events)
}

// heartbeatTimeout is how long an activity's worker may stay silent before it is lost.
func (x *execution) heartbeatTimeout() time.Duration {
	if x.in.HeartbeatTimeout > 0 {
		return x.in.HeartbeatTimeout
	}
	return defaultHeartbeatTimeout
}
