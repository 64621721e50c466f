package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Whole-process benchmarks: they run the real binary. `make bench-process` runs them.

func writeSteps(b *testing.B, n int, command string) string {
	b.Helper()
	var sb strings.Builder
	sb.WriteString("name: bench\nsteps:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  - {name: s%02d, type: shell, command: %q}\n", i, command)
	}
	dir := b.TempDir()
	path := filepath.Join(dir, "bench.yaml")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

func runBin(b *testing.B, dir string, args ...string) *os.ProcessState {
	b.Helper()
	cmd := exec.Command(awfBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("awf %v: %v\n%s", args, err, out)
	}
	return cmd.ProcessState
}

// BenchmarkProcessRun50Steps reports the whole-process cost per step of a 50-step workflow of
// `true` commands (the interpreter's builtin), and the same for /bin/true (an external program
// started from each step): µs/step with the process start shared among the steps, and
// µs/step-after-start with the start (an `awf --version` run, timed in the same loop) taken
// out.
func BenchmarkProcessRun50Steps(b *testing.B) {
	for _, command := range []string{"true", "/bin/true"} {
		b.Run(strings.TrimPrefix(command, "/bin/"), func(b *testing.B) {
			path := writeSteps(b, 50, command)
			dir := filepath.Dir(path)
			var run, start time.Duration
			for b.Loop() {
				t := time.Now()
				runBin(b, dir, "run", path, "--quiet")
				run += time.Since(t)
				t = time.Now()
				runBin(b, dir, "--version")
				start += time.Since(t)
			}
			b.ReportMetric(float64(run.Microseconds())/float64(b.N)/50, "µs/step")
			b.ReportMetric(float64((run-start).Microseconds())/float64(b.N)/50, "µs/step-after-start")
		})
	}
}

// BenchmarkProcessBareSpawn is the floor: spawning `sh -c true` 50 times from Go.
func BenchmarkProcessBareSpawn(b *testing.B) {
	for b.Loop() {
		for range 50 {
			if err := exec.Command("sh", "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/50, "µs/step")
}

// BenchmarkProcessValidate50Steps is `awf validate` of a 50-step workflow, whole process.
func BenchmarkProcessValidate50Steps(b *testing.B) {
	path := writeSteps(b, 50, "echo {{run.id}}")
	for b.Loop() {
		runBin(b, filepath.Dir(path), "validate", path)
	}
}

// Peak memory is measured by scripts/procbench (make bench-process), from a small process of
// its own: a child's peak RSS as Linux reports it includes what its parent had resident when it
// forked, so a figure taken from this test binary measured the test binary.
