package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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

// BenchmarkProcessPeakMemory10MB reports awf's peak RSS running a workflow whose first step
// outputs 10 MB that the second step's command uses, and the same workflow with a 10-byte
// output: peak-MiB includes the binary's own mapped code (about 20 MiB, file-backed), so
// x-payload-over-base, the difference over the payload, is the figure that grows with it. The
// consumer is printf (testdata/e2e/big.yaml), whose implementation in the shell interpreter
// formats its argument into two more copies, or echo, which writes it as it is.
func BenchmarkProcessPeakMemory10MB(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "e2e", "big.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	for _, consumer := range []string{"printf", "echo"} {
		b.Run(consumer, func(b *testing.B) {
			wf := string(data)
			if consumer == "echo" {
				wf = strings.Replace(wf, `printf '%s' "{{states.produce.output}}"`, `echo -n "{{states.produce.output}}"`, 1)
			}
			dir := b.TempDir()
			big := filepath.Join(dir, "big.yaml")
			small := filepath.Join(dir, "small.yaml")
			os.WriteFile(big, []byte(wf), 0o644)
			os.WriteFile(small, []byte(strings.Replace(wf, "head -c 10485760", "head -c 10", 1)), 0o644)
			var peak, base int64
			for b.Loop() {
				peak = max(peak, peakRSS(b, dir, big))
				base = max(base, peakRSS(b, dir, small))
			}
			b.ReportMetric(float64(peak)/1024, "peak-MiB")
			b.ReportMetric(float64(base)/1024, "base-MiB")
			b.ReportMetric(float64(peak)/1024/10, "x-payload")
			b.ReportMetric(float64(peak-base)/1024/10, "x-payload-over-base")
		})
	}
}

// peakRSS runs `awf run path` and returns its peak resident set in KiB.
func peakRSS(b *testing.B, dir, path string) int64 {
	ps := runBin(b, dir, "run", path, "--quiet")
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		b.Fatal("no rusage")
	}
	return ru.Maxrss
}
