package statestore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// benchRun is a finished-looking run of n steps, each with a few lines of output and a tool
// call; with big > 0, the middle step's output is big bytes.
func benchRun(n, big int) *state.RunState {
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	run := &state.RunState{ID: "bench", Workflow: "bench", WorkflowFile: "bench.yaml", Status: state.Running,
		Inputs: map[string]any{"feature": "benchmark\nthe store\n"}, StartedAt: start, UpdatedAt: start}
	for i := range n {
		endBenchStep(run.Step(fmt.Sprintf("step%04d", i)), i, start)
	}
	if big > 0 {
		run.States[fmt.Sprintf("step%04d", n/2)].Output = strings.Repeat("a line of a big build log\n", big/26+1)[:big]
	}
	return run
}

// endBenchStep records step i of a bench run as completed, with a few lines of output and a
// tool call.
func endBenchStep(st *state.StepState, i int, start time.Time) {
	exit := 0
	end := start.Add(time.Duration(i) * time.Second)
	st.Status, st.ExitCode, st.StartedAt, st.FinishedAt, st.DurationMs = state.Completed, &exit, &start, &end, 1000
	st.Output = fmt.Sprintf("step %d done\nok: 12 tests passed\n", i)
	st.ToolCalls = []state.ToolCallRecord{{ID: fmt.Sprintf("call_%d", i), Tool: "read_file",
		Arguments: map[string]any{"path": "src/main.go"},
		Result:    &state.ToolCallResult{Success: true, Output: "package main\n\nfunc main() {}\n", DurationMs: 2}}}
	st.ToolStats = &state.ToolStats{TotalCalls: 1, Successful: 1, TotalDurationMs: 2}
}

// BenchmarkSave measures one Save of a run that changes a little between Saves, as at a step
// boundary, fsyncs included. With a 10 MB output the figures must stay near those of the run
// without it: the output file is written by the first Save only.
func BenchmarkSave(b *testing.B) {
	for _, bc := range []struct {
		name       string
		steps, big int
	}{
		{"steps=10", 10, 0},
		{"steps=1000", 1000, 0},
		{"steps=1000,big=10MB", 1000, 10 << 20},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := newStoreB(b)
			run := benchRun(bc.steps, bc.big)
			if err := s.Save(b.Context(), run); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				run.UpdatedAt = run.UpdatedAt.Add(time.Second)
				if err := s.Save(b.Context(), run); err != nil {
					b.Fatal(err)
				}
			}
			fi, err := os.Stat(s.Path(run.ID))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(fi.Size()), "state-bytes")
		})
	}
}

// BenchmarkStepSave measures the saves of one step of a run that already has n steps, as the
// runner makes them for a step that takes a while: one when it starts, one when it ends. A
// step's saves must cost the same whatever n is ("ns/step"). The run grows by a step per
// iteration and starts again at n steps when it reaches 2n, so that at least n iterations
// (-benchtime=10000x for n=10000) include the state file rewrites the store makes from time
// to time. "sync" includes the fsyncs, "nosync" leaves them out.
func BenchmarkStepSave(b *testing.B) {
	for _, n := range []int{50, 10000} {
		for _, sync := range []bool{true, false} {
			name := fmt.Sprintf("steps=%d/sync", n)
			if !sync {
				name = fmt.Sprintf("steps=%d/nosync", n)
			}
			b.Run(name, func(b *testing.B) {
				var s *Store
				var run *state.RunState
				var cpu cpuTimer
				i, rewrites := 0, int64(0)
				for b.Loop() {
					if run == nil || len(run.Order) == 2*n {
						b.StopTimer()
						cpu.stop()
						if s != nil {
							rewrites += s.dirSyncs.Load() - 1
						}
						s, run = newStoreB(b), benchRun(n, 0)
						s.noSync = !sync
						if err := s.Save(b.Context(), run); err != nil {
							b.Fatal(err)
						}
						cpu.start()
						b.StartTimer()
					}
					i++
					saveBenchStep(b, s, run, i)
				}
				cpu.stop()
				rewrites += s.dirSyncs.Load() - 1
				b.ReportMetric(float64(sizeOf(s.Path(run.ID))), "state-bytes")
				b.ReportMetric(float64(rewrites)/float64(b.N), "rewrites/op")
				b.ReportMetric(float64(cpu.total.Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// cpuTimer adds up the CPU time of the process (every thread: the garbage collector's too)
// between start and stop: on a machine shared with other work, wall time per op says more
// about the others than about the code measured.
type cpuTimer struct {
	total time.Duration
	from  time.Duration
}

func (c *cpuTimer) start() { c.from = processCPU() }

func (c *cpuTimer) stop() {
	if c.from != 0 {
		c.total += processCPU() - c.from
		c.from = 0
	}
}

// saveBenchStep adds a step to run and saves it started, then ended as the run's other steps
// did, with AppendStep as the runner saves a step.
func saveBenchStep(b *testing.B, s *Store, run *state.RunState, i int) {
	name := fmt.Sprintf("next%06d", i)
	st := run.Step(name)
	start := run.UpdatedAt.Add(time.Millisecond)
	st.Status, st.StartedAt, run.UpdatedAt = state.Running, &start, start
	if err := s.AppendStep(b.Context(), run, name); err != nil {
		b.Fatal(err)
	}
	endBenchStep(st, i, start)
	run.UpdatedAt = *st.FinishedAt
	if err := s.AppendStep(b.Context(), run, name); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkEncode is the CPU part of a Save of a 1000-step run in which one step changed:
// go-yaml on the whole run, and the run encoder that reuses unchanged steps.
func BenchmarkEncode(b *testing.B) {
	run := benchRun(1000, 0)
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodeYAML(run); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		var enc runEncoder
		i := 0
		for b.Loop() {
			i++
			run.States["step0007"].Output = fmt.Sprintf("changed %d\n", i)
			if _, err := enc.encode(run); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func newStoreB(b *testing.B) *Store {
	b.Helper()
	s, err := New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	return s
}

// agentRun is a running run with one agent step that has made n tool calls, each with small
// arguments and a 200-byte output, and 2n conversation messages: the model's request and the
// tool's reply for each call.
func agentRun(n int) *state.RunState {
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	run := &state.RunState{ID: "agent", Workflow: "bench", WorkflowFile: "bench.yaml", Status: state.Running,
		Inputs: map[string]any{"feature": "benchmark\nthe store\n"}, StartedAt: start, UpdatedAt: start}
	st := run.Step("implement")
	st.Status, st.StartedAt = state.Running, &start
	st.Conversation = &state.Conversation{}
	for i := range n {
		beginAgentCall(st, i)
		finishAgentCall(st, i)
	}
	return run
}

// beginAgentCall records call i in flight, after the model's message that asked for it, and
// the model's turn.
func beginAgentCall(st *state.StepState, i int) {
	id, path := fmt.Sprintf("call_%d", i), fmt.Sprintf("src/pkg%d/file.go", i)
	st.Conversation.Turns++
	st.Turns = append(st.Turns, state.Turn{Usage: &state.Tokens{Input: 120, Output: 30, Total: 150},
		Calls: []string{id}, FinishReason: "tool_calls"})
	st.Conversation.Messages = append(st.Conversation.Messages, state.Message{Role: "assistant",
		ToolCalls: []state.CallRef{{ID: id, Name: "read_file", Arguments: `{"path":"` + path + `"}`}}})
	st.ToolCalls = append(st.ToolCalls, state.ToolCallRecord{ID: id, Tool: "read_file",
		Arguments: map[string]any{"path": path}, InFlight: true})
}

// finishAgentCall records the result of call i and the message that gives it to the model.
func finishAgentCall(st *state.StepState, i int) {
	out := agentOutput(i)
	res := state.ToolCallResult{Success: true, Output: out, DurationMs: 2}
	c := &st.ToolCalls[len(st.ToolCalls)-1]
	c.Result, c.InFlight = &res, false
	if st.ToolStats == nil {
		st.ToolStats = &state.ToolStats{}
	}
	st.ToolStats.Add(res)
	if st.Tokens == nil {
		st.Tokens = &state.Tokens{}
	}
	st.Tokens.Add(state.Tokens{Input: 120, Output: 30, Total: 150})
	st.Conversation.Messages = append(st.Conversation.Messages, state.Message{Role: "tool",
		ToolCallID: c.ID, Name: "read_file", Content: out})
}

// agentOutput is a 200-byte output of four lines.
func agentOutput(i int) string {
	line := fmt.Sprintf("output of call %d ", i)
	line += strings.Repeat(".", 49-len(line)) + "\n"
	return strings.Repeat(line, 4)
}

// BenchmarkSaveAgentStep measures one Save of a run whose agent step has made n tool calls or
// more, as the agent loop saves it: alternately with a new call in flight and with its result.
// The step grows from n calls to 2n, then starts again at n. "sync" includes the fsyncs of
// the file and directory, "nosync" leaves them out; "cpu-ns/op" is the CPU time of the
// process, which a machine shared with other work does not inflate as it does wall time.
func BenchmarkSaveAgentStep(b *testing.B) {
	benchAgentSaves(b, func(s *Store, run *state.RunState) error { return s.Save(b.Context(), run) })
}

// BenchmarkAppendAgentStep is BenchmarkSaveAgentStep with the saves made by AppendStep, as the
// runner makes an agent step's: each appends the step's changes to the journal, saying what
// changed as the agent loop does (ports.StepChanges). The figures must not grow with n;
// "rewrites/op" counts the state files written when the journal outgrew the last one.
func BenchmarkAppendAgentStep(b *testing.B) {
	benchAgentSaves(b, func(s *Store, run *state.RunState) error {
		st := run.States["implement"]
		var ch ports.StepChanges
		if last := len(st.ToolCalls) - 1; !st.ToolCalls[last].InFlight {
			ch.Calls = []int{last}
		}
		return s.AppendStep(ports.WithStepChanges(b.Context(), ch), run, "implement")
	})
}

func benchAgentSaves(b *testing.B, save func(*Store, *state.RunState) error) {
	for _, n := range []int{100, 2000} {
		for _, sync := range []bool{true, false} {
			name := fmt.Sprintf("calls=%d/sync", n)
			if !sync {
				name = fmt.Sprintf("calls=%d/nosync", n)
			}
			b.Run(name, func(b *testing.B) {
				var s *Store
				var run *state.RunState
				var cpu cpuTimer
				rewrites, i := int64(0), 0
				for b.Loop() {
					if run == nil || len(run.States["implement"].ToolCalls) == 2*n {
						b.StopTimer()
						cpu.stop()
						if s != nil {
							rewrites += s.dirSyncs.Load() - 1
						}
						s, run, i = newStoreB(b), agentRun(n), n
						s.noSync = !sync
						if err := s.Save(b.Context(), run); err != nil {
							b.Fatal(err)
						}
						cpu.start()
						b.StartTimer()
					}
					st := run.States["implement"]
					if len(st.ToolCalls) > 0 && st.ToolCalls[len(st.ToolCalls)-1].InFlight {
						finishAgentCall(st, i)
						i++
					} else {
						beginAgentCall(st, i)
					}
					run.UpdatedAt = run.UpdatedAt.Add(time.Millisecond)
					if err := save(s, run); err != nil {
						b.Fatal(err)
					}
				}
				cpu.stop()
				rewrites += s.dirSyncs.Load() - 1
				b.ReportMetric(float64(sizeOf(s.Path(run.ID))), "state-bytes")
				b.ReportMetric(float64(cpu.total.Nanoseconds())/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(rewrites)/float64(b.N), "rewrites/op")
			})
		}
	}
}

// BenchmarkLock is what owning a run costs: Lock and unlock, once per run or resume.
func BenchmarkLock(b *testing.B) {
	s, err := New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		unlock, err := s.Lock(b.Context(), "run")
		if err != nil {
			b.Fatal(err)
		}
		unlock()
	}
}

// BenchmarkList lists 1,000 finished runs, each with 20 steps, with and without the index of
// finished runs (summariesFile): with it, a listing stats each state file; without (runs kept
// from before the index), it reads and parses the head of each.
func BenchmarkList(b *testing.B) {
	for _, indexed := range []bool{true, false} {
		b.Run(fmt.Sprintf("indexed=%v", indexed), func(b *testing.B) {
			s := newStoreB(b)
			s.noSync = true
			start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
			end := start.Add(time.Minute)
			for i := range 1000 {
				run := &state.RunState{ID: fmt.Sprintf("run-%04d", i), Workflow: "bench", Status: state.Completed,
					StartedAt: start.Add(time.Duration(i) * time.Second), FinishedAt: &end}
				for j := range 20 {
					st := run.Step(fmt.Sprintf("s%02d", j))
					st.Status, st.Output = state.Completed, "ok\n"
				}
				if err := s.Save(b.Context(), run); err != nil {
					b.Fatal(err)
				}
			}
			if !indexed {
				if err := os.Remove(filepath.Join(s.dir, summariesFile)); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				list, err := s.List(b.Context())
				if err != nil || len(list) != 1000 {
					b.Fatalf("List = %d runs, %v", len(list), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/run")
		})
	}
}
