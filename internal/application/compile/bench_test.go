package compile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/application/compile"
	"github.com/awf-dev/awf/internal/infrastructure/loader"
	"github.com/awf-dev/awf/internal/infrastructure/templater"
)

// BenchmarkFile compiles workflows of 50 and 10,000 shell steps, each reading the output of
// the step before it, as `awf validate` does: the cost per step must not grow with the number
// of steps.
func BenchmarkFile(b *testing.B) {
	for _, n := range []int{50, 10_000} {
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			var sb strings.Builder
			sb.WriteString("name: bench\nsteps:\n")
			sb.WriteString("  - {name: s00000, type: shell, command: \"echo {{inputs.x}}\"}\n")
			for i := 1; i < n; i++ {
				fmt.Fprintf(&sb, "  - {name: s%05d, type: shell, command: \"echo {{states.s%05d.output}}\"}\n", i, i-1)
			}
			p := filepath.Join(b.TempDir(), "wf.yaml")
			if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
				b.Fatal(err)
			}
			l, t := loader.New(), templater.New()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := compile.File(l, t, p); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/step")
		})
	}
}
