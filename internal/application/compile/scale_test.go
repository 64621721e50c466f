package compile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/application/compile"
	"github.com/awf-dev/awf/internal/infrastructure/loader"
	"github.com/awf-dev/awf/internal/infrastructure/templater"
)

// workflowShapes write workflows of n steps whose problems, or whose checks, once cost more
// for each step in a longer workflow: every problem compared with every problem before it,
// every unknown name with every name before it, every reference to a later step searched for
// in every parallel block, every unknown alias listing the
// file's anchors, every parallel block copying the agent steps before it.
var workflowShapes = map[string]func(sb *strings.Builder, i, n int){
	"misspelt keys": func(sb *strings.Builder, i, n int) {
		fmt.Fprintf(sb, "  - name: s%d\n    run: \"true\"\n", i)
	},
	"unknown steps": func(sb *strings.Builder, i, n int) {
		fmt.Fprintf(sb, "  - {name: s%d, type: shell, command: 'echo {{states.nope%d.output}}'}\n", i, i)
	},
	"undeclared inputs": func(sb *strings.Builder, i, n int) {
		fmt.Fprintf(sb, "  - {name: s%d, type: shell, command: 'echo {{inputs.in%d}}'}\n", i, i)
	},
	"later steps in parallel blocks": func(sb *strings.Builder, i, n int) {
		fmt.Fprintf(sb, "  - name: p%d\n    type: parallel\n    steps:\n", i)
		fmt.Fprintf(sb, "      - {name: c%d, type: shell, command: 'echo {{states.c%d.output}} {{states.d%d.output}}'}\n", i, n-1, i)
		fmt.Fprintf(sb, "      - {name: d%d, type: shell, command: 'true'}\n", i)
	},
	"anchors, then unknown aliases": func(sb *strings.Builder, i, n int) {
		if i < n/2 {
			fmt.Fprintf(sb, "  - {name: s%d, type: shell, command: &anchor%d 'true'}\n", i, i)
			return
		}
		fmt.Fprintf(sb, "  - {name: s%d, type: shell, command: *nope%d}\n", i, i)
	},
	"agents, then parallel blocks": func(sb *strings.Builder, i, n int) {
		if i < n/2 {
			fmt.Fprintf(sb, "  - {name: a%d, prompt: hi, continue_from: a%d}\n", i, max(i-1, 0))
			return
		}
		fmt.Fprintf(sb, "  - name: p%d\n    type: parallel\n    steps:\n      - {name: c%d, prompt: hi, continue_from: a%d}\n", i, i, i-n/2)
	},
}

// TestChecksCostTheSameForEveryStep compiles each shape at 500 and at 4,000 steps, as `awf
// validate` does, and compares the memory allocated for each step: it must not grow with the
// workflow (it grew 1.3 to 5 times in five of these shapes when their problems or checks were
// compared with everything before them; misspelt keys were compared without allocating, and
// TestCovered in the loader holds what replaced that). Allocation is counted rather than
// time, which the machine would make flaky; BenchmarkFileWithProblems gives the time.
func TestChecksCostTheSameForEveryStep(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles workflows of thousands of steps")
	}
	for name, shape := range workflowShapes {
		t.Run(name, func(t *testing.T) {
			small, big := allocatedPerStep(t, shape, 500), allocatedPerStep(t, shape, 4000)
			t.Logf("%.0f bytes a step at 500 steps, %.0f at 4,000", small, big)
			if big > 1.25*small {
				t.Errorf("%.0f bytes allocated for each step at 4,000 steps, %.1f times as much as at 500; want at most 1.25", big, big/small)
			}
		})
	}
}

// allocatedPerStep compiles the shape's workflow of n steps and returns the bytes allocated
// for each step.
func allocatedPerStep(t testing.TB, shape func(*strings.Builder, int, int), n int) float64 {
	p := writeShape(t, shape, n)
	l, tp := loader.New(), templater.New()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	compile.File(l, tp, p) // the workflows are meant to have problems
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
}

func writeShape(t testing.TB, shape func(*strings.Builder, int, int), n int) string {
	var sb strings.Builder
	sb.WriteString("name: shape\nsteps:\n")
	// A comment line for each step makes even the smallest file long enough to be read in
	// parts (loader's split), as the big ones are: the comparison is of like with like.
	pad := "  # " + strings.Repeat("-", 150) + "\n"
	for i := range n {
		sb.WriteString(pad)
		shape(&sb, i, n)
	}
	p := filepath.Join(t.TempDir(), "wf.yaml")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// BenchmarkFileWithProblems compiles each shape at 500 and 8,000 steps: the time for each
// step must not grow with the workflow.
func BenchmarkFileWithProblems(b *testing.B) {
	for name, shape := range workflowShapes {
		for _, n := range []int{500, 8000} {
			b.Run(fmt.Sprintf("%s/steps=%d", strings.ReplaceAll(name, " ", "_"), n), func(b *testing.B) {
				p := writeShape(b, shape, n)
				l, t := loader.New(), templater.New()
				for b.Loop() {
					compile.File(l, t, p)
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/step")
			})
		}
	}
}
