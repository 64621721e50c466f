package statestore

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/state"
)

// benchRun is a finished-looking run of n steps, each with a few lines of output and a tool
// call; with big > 0, the middle step's output is big bytes.
func benchRun(n, big int) *state.RunState {
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	run := &state.RunState{ID: "bench", Workflow: "bench", WorkflowFile: "bench.yaml", Status: state.Running,
		Inputs: map[string]any{"feature": "benchmark\nthe store\n"}, StartedAt: start, UpdatedAt: start}
	for i := range n {
		st := run.Step(fmt.Sprintf("step%04d", i))
		exit := 0
		end := start.Add(time.Duration(i) * time.Second)
		st.Status, st.ExitCode, st.StartedAt, st.FinishedAt, st.DurationMs = state.Completed, &exit, &start, &end, 1000
		st.Output = fmt.Sprintf("step %d done\nok: 12 tests passed\n", i)
		st.ToolCalls = []state.ToolCallRecord{{ID: fmt.Sprintf("call_%d", i), Tool: "read_file",
			Arguments: map[string]any{"path": "src/main.go"},
			Result:    &state.ToolCallResult{Success: true, Output: "package main\n\nfunc main() {}\n", DurationMs: 2}}}
		st.ToolStats = &state.ToolStats{TotalCalls: 1, Successful: 1, TotalDurationMs: 2}
	}
	if big > 0 {
		run.States[fmt.Sprintf("step%04d", n/2)].Output = strings.Repeat("a line of a big build log\n", big/26+1)[:big]
	}
	return run
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
