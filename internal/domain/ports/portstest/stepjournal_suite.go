package portstest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// JournalStore is a state store with a step journal.
type JournalStore interface {
	ports.StateStore
	ports.StepJournal
}

// StepJournalSuite checks that a [ports.StepJournal] keeps the port's contract: after every
// AppendStep, Load returns the run with the step's changes (tool calls in flight and with
// results, conversation messages appended and compacted, counters, large outputs, steps
// added), whether or not the run was saved before and whatever Saves come between; changes to
// the run's head are saved too; a step the run does not have is an error; appends to two steps of one run from
// two goroutines are safe. Changes are made as the agent loop makes them: results and other
// records are replaced, never changed in place. newStore must return an empty store.
func StepJournalSuite(t *testing.T, newStore func(t *testing.T) JournalStore) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, s JournalStore)
	}{
		{"AgentStep", func(t *testing.T, s JournalStore) { testJournalAgentStep(t, s, false) }},
		{"AgentStepWithChanges", func(t *testing.T, s JournalStore) { testJournalAgentStep(t, s, true) }},
		{"AppendBeforeSave", testJournalBeforeSave},
		{"SavesBetween", testJournalSavesBetween},
		{"HeadChanges", testJournalHeadChanges},
		{"StepsAdded", testJournalStepsAdded},
		{"UnknownStep", testJournalUnknownStep},
		{"InvalidID", testJournalInvalidID},
		{"ConcurrentSteps", testJournalConcurrentSteps},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

// journalRun is a running run with a finished step and an agent step in conversation mode
// that has not made a call yet.
func journalRun(id string) *state.RunState {
	exit := 0
	return &state.RunState{
		ID: id, Workflow: "journal", WorkflowFile: "journal.yaml", Status: state.Running,
		Inputs:    map[string]any{"feature": "a flag", "count": 2, "ratio": 2.0},
		StartedAt: suiteTime, UpdatedAt: suiteTime,
		States: map[string]*state.StepState{
			"plan": {Status: state.Completed, Output: "the plan\n", ExitCode: &exit},
			"work": {Status: state.Running, StartedAt: at(time.Second), Attempts: 1, Conversation: &state.Conversation{
				Messages: []state.Message{{Role: "system", Content: "Be careful."}, {Role: "user", Content: "Implement it."}}}},
		},
		Order: []string{"plan", "work"},
	}
}

// agentCall is what the agent loop does for one call: the model's request and the record in
// flight (first), then the result, the counters and the tool's message (second).
type agentCall struct {
	run  *state.RunState
	step string
	n    int
}

func (a *agentCall) begin(args map[string]any) {
	a.n++
	st := a.run.States[a.step]
	id := fmt.Sprintf("call_%d", a.n)
	st.Conversation.Turns++
	st.Conversation.Messages = append(st.Conversation.Messages, state.Message{Role: "assistant",
		ToolCalls: []state.CallRef{{ID: id, Name: "read_file", Arguments: `{"path":"f"}`}}})
	st.ToolCalls = append(st.ToolCalls, state.ToolCallRecord{ID: id, Tool: "read_file", Arguments: args, InFlight: true})
	st.Turns = append(st.Turns, state.Turn{Usage: &state.Tokens{Input: 10, Output: 1, Total: 11}, Text: "reading",
		Calls: []string{id}, FinishReason: "tool_calls"})
	a.tick()
}

func (a *agentCall) finish(output string) {
	st := a.run.States[a.step]
	c := &st.ToolCalls[len(st.ToolCalls)-1]
	res := state.ToolCallResult{Success: true, Output: output, DurationMs: 3, Approval: "auto"}
	c.Result, c.InFlight = &res, false
	stats := state.ToolStats{}
	if st.ToolStats != nil {
		stats = *st.ToolStats
	}
	stats.Add(res)
	st.ToolStats = &stats
	st.Tokens = &state.Tokens{Input: 10 * a.n, Output: a.n, Total: 11 * a.n}
	st.Conversation.Messages = append(st.Conversation.Messages, state.Message{Role: "tool", ToolCallID: c.ID,
		Name: "read_file", Content: output})
	a.tick()
}

func (a *agentCall) tick() { a.run.UpdatedAt = a.run.UpdatedAt.Add(time.Millisecond) }

// appendAndLoad appends step's changes and checks that Load returns run.
func appendAndLoad(t *testing.T, s JournalStore, run *state.RunState, step, what string) {
	t.Helper()
	appendChangesAndLoad(t, s, run, step, what, nil)
}

// appendChangesAndLoad is appendAndLoad saying what changed (ports.StepChanges) when ch is not
// nil.
func appendChangesAndLoad(t *testing.T, s JournalStore, run *state.RunState, step, what string, ch *ports.StepChanges) {
	t.Helper()
	ctx := t.Context()
	if ch != nil {
		ctx = ports.WithStepChanges(ctx, *ch)
	}
	if err := s.AppendStep(ctx, run, step); err != nil {
		t.Fatalf("%s: AppendStep(%q): %v", what, step, err)
	}
	loadsRun(t, s, run, what)
}

// loadsRun checks that Load returns run.
func loadsRun(t *testing.T, s JournalStore, run *state.RunState, what string) {
	t.Helper()
	got, err := s.Load(t.Context(), run.ID)
	if err != nil {
		t.Fatalf("%s: Load: %v", what, err)
	}
	if d := diffValues(got, run); d != "" {
		t.Fatalf("%s: Load after AppendStep differs from the run: %s", what, d)
	}
}

// testJournalAgentStep makes an agent step's saves, with changes said (ports.StepChanges) as
// the agent loop says them or not.
func testJournalAgentStep(t *testing.T, s JournalStore, said bool) {
	changed := func(calls ...int) *ports.StepChanges {
		if !said {
			return nil
		}
		return &ports.StepChanges{Calls: calls}
	}
	run := journalRun("run-agent")
	if err := s.Save(t.Context(), run); err != nil {
		t.Fatalf("Save: %v", err)
	}
	a := &agentCall{run: run, step: "work"}
	outputs := []string{
		"small output\n", trickyText, bigText(100<<10, "large"), bigText(100<<10, "other large"), "",
		bigText(100<<10, "large"), "small again",
	}
	for i, out := range outputs {
		a.begin(map[string]any{"path": fmt.Sprintf("src/%d.go", i), "offset": i, "ratio": 0.5, "whole": 1.0,
			"nested": map[string]any{"list": []any{1, "two", nil, true}}})
		appendChangesAndLoad(t, s, run, "work", fmt.Sprintf("call %d in flight", i), changed())
		a.finish(out)
		appendChangesAndLoad(t, s, run, "work", fmt.Sprintf("call %d done", i), changed(i))
	}
	st := run.States["work"]
	// A result replaced by another (a call run again after a resume), a large one by a large one.
	res := *st.ToolCalls[2].Result
	res.Output = bigText(120<<10, "rerun")
	st.ToolCalls[2].Result = &res
	appendChangesAndLoad(t, s, run, "work", "an earlier result replaced", changed(2))
	// The context window strategy keeps the system prompt and the last messages.
	msgs := st.Conversation.Messages
	st.Conversation = &state.Conversation{Turns: st.Conversation.Turns, Messages: append([]state.Message{msgs[0]}, msgs[len(msgs)-4:]...)}
	appendChangesAndLoad(t, s, run, "work", "conversation compacted", changed())
	st.Error, st.Attempts = "attempt 1: timeout", 2
	st.Conversation = &state.Conversation{Turns: st.Conversation.Turns, StoppedBy: "stop_condition", Messages: st.Conversation.Messages}
	appendChangesAndLoad(t, s, run, "work", "step fields", changed())
	st.Turns = slices.Clone(st.Turns[:2])
	appendChangesAndLoad(t, s, run, "work", "turns replaced", changed())
	st.ToolCalls = st.ToolCalls[:3]
	st.Conversation = nil
	appendChangesAndLoad(t, s, run, "work", "calls cut, conversation dropped", changed())
}

func testJournalBeforeSave(t *testing.T, s JournalStore) {
	run := journalRun("run-unsaved")
	a := &agentCall{run: run, step: "work"}
	a.begin(map[string]any{"path": "a"})
	appendAndLoad(t, s, run, "work", "first save by AppendStep")
	a.finish("done")
	appendAndLoad(t, s, run, "work", "second")
}

// testJournalSavesBetween mixes Saves (step boundaries) with appends to two agent steps.
func testJournalSavesBetween(t *testing.T, s JournalStore) {
	ctx := t.Context()
	run := journalRun("run-mixed")
	if err := s.Save(ctx, run); err != nil {
		t.Fatalf("Save: %v", err)
	}
	a := &agentCall{run: run, step: "work"}
	for i := range 3 {
		a.begin(map[string]any{"i": i})
		appendAndLoad(t, s, run, "work", fmt.Sprintf("work call %d", i))
		a.finish(strings.Repeat("out ", i))
		appendAndLoad(t, s, run, "work", fmt.Sprintf("work call %d done", i))
	}
	end := suiteTime.Add(time.Hour)
	run.States["work"].Status, run.States["work"].FinishedAt, run.States["work"].Output = state.Completed, &end, "the answer"
	run.Step("review").Status = state.Running
	run.States["review"].Conversation = &state.Conversation{}
	if err := s.Save(ctx, run); err != nil {
		t.Fatalf("Save at the step boundary: %v", err)
	}
	b := &agentCall{run: run, step: "review", n: 10}
	for i := range 3 {
		b.begin(map[string]any{"i": i})
		appendAndLoad(t, s, run, "review", fmt.Sprintf("review call %d", i))
		b.finish(bigText(70<<10, fmt.Sprint("review ", i)))
		appendAndLoad(t, s, run, "review", fmt.Sprintf("review call %d done", i))
	}
	run.Status, run.FinishedAt = state.Completed, &end
	if err := s.Save(ctx, run); err != nil {
		t.Fatalf("Save at the end: %v", err)
	}
	appendAndLoad(t, s, run, "review", "after the end")
}

func testJournalHeadChanges(t *testing.T, s JournalStore) {
	run := journalRun("run-head")
	if err := s.Save(t.Context(), run); err != nil {
		t.Fatalf("Save: %v", err)
	}
	a := &agentCall{run: run, step: "work"}
	a.begin(map[string]any{"path": "a"})
	run.Status, run.Error = state.Interrupted, "interrupted"
	appendAndLoad(t, s, run, "work", "status changed")
	run.Inputs["count"] = 3
	a.finish("done")
	appendAndLoad(t, s, run, "work", "inputs changed")
	run.Step("added").Status = state.Pending
	appendAndLoad(t, s, run, "work", "a step added")
}

// testJournalStepsAdded adds steps as the runner does, each saved by AppendStep when it
// starts (a new step, at the end of the order) and when it ends; enough of them, with enough
// output, for a journal to outgrow its state file several times; then the run ends.
func testJournalStepsAdded(t *testing.T, s JournalStore) {
	ctx := t.Context()
	run := journalRun("run-steps")
	if err := s.Save(ctx, run); err != nil {
		t.Fatalf("Save: %v", err)
	}
	const steps = 400
	for i := range steps {
		name := fmt.Sprintf("step-%03d", i)
		st := run.Step(name)
		st.Status, st.StartedAt = state.Running, at(time.Duration(i)*time.Second)
		run.UpdatedAt = *st.StartedAt
		if err := s.AppendStep(ctx, run, name); err != nil {
			t.Fatalf("AppendStep(%q) at its start: %v", name, err)
		}
		exit := i % 3
		st.Status, st.FinishedAt, st.ExitCode = state.Completed, at(time.Duration(i)*time.Second+time.Millisecond), &exit
		st.Output = strings.Repeat(fmt.Sprintf("line of step %d\n", i), i%20)
		run.UpdatedAt = *st.FinishedAt
		if err := s.AppendStep(ctx, run, name); err != nil {
			t.Fatalf("AppendStep(%q) at its end: %v", name, err)
		}
		if i%97 == 0 {
			loadsRun(t, s, run, fmt.Sprintf("after step %d", i))
		}
	}
	loadsRun(t, s, run, fmt.Sprintf("after %d steps", steps))
	end := suiteTime.Add(time.Hour)
	run.Status, run.FinishedAt = state.Completed, &end
	if err := s.Save(ctx, run); err != nil {
		t.Fatalf("Save at the end: %v", err)
	}
	loadsRun(t, s, run, "at the end")
}

func testJournalUnknownStep(t *testing.T, s JournalStore) {
	run := journalRun("run-unknown")
	if err := s.Save(t.Context(), run); err != nil {
		t.Fatalf("Save: %v", err)
	}
	err := s.AppendStep(t.Context(), run, "nope")
	if fault.KindOf(err) != fault.System || !strings.Contains(fmt.Sprint(err), "nope") {
		t.Errorf("AppendStep(unknown step) = %v (kind %v), want a system error naming the step", err, fault.KindOf(err))
	}
}

func testJournalInvalidID(t *testing.T, s JournalStore) {
	for _, id := range []string{"", "..", "a/b"} {
		run := journalRun("x")
		run.ID = id
		if err := s.AppendStep(t.Context(), run, "work"); fault.KindOf(err) != fault.Usage {
			t.Errorf("AppendStep(id %q) = %v (kind %v), want a usage error", id, err, fault.KindOf(err))
		}
	}
}

// testJournalConcurrentSteps runs two agent steps of one run at once, as a parallel step
// does: each changes its own record and appends it under the run's lock. Run it with -race.
func testJournalConcurrentSteps(t *testing.T, s JournalStore) {
	ctx := t.Context()
	run := journalRun("run-parallel")
	run.Step("work2").Conversation = &state.Conversation{}
	if err := s.Save(ctx, run); err != nil {
		t.Fatalf("Save: %v", err)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, step := range []string{"work", "work2"} {
		wg.Go(func() {
			a := &agentCall{run: run, step: step}
			for i := range 10 {
				mu.Lock()
				a.begin(map[string]any{"i": i})
				err := s.AppendStep(ctx, run, step)
				if err == nil {
					a.finish(fmt.Sprint(step, i))
					err = s.AppendStep(ctx, run, step)
				}
				mu.Unlock()
				if err != nil {
					t.Errorf("concurrent AppendStep(%q): %v", step, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if !t.Failed() {
		loadsRun(t, s, run, "after concurrent appends")
	}
}
