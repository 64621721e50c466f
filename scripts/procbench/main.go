//go:build unix

// procbench reads rusage, which Windows does not have.

// Command procbench measures awf from outside the process and prints each whole-process
// target of the project as a ratio against a baseline measured in the same run: per-step cost
// as workflows grow, start-up against /bin/true, a sandboxed tool call against a plain step,
// peak memory with a 10 MB output, refusing deeply nested YAML.
//
// It is a separate, small program on purpose. Linux reports a child's peak RSS (ru_maxrss) as
// at least what its parent had resident when it forked it, so a figure taken from inside a
// large process (a Go test binary holding benchmark buffers) measures that process, not awf.
// This program stays at a few MiB, below any awf run.
//
// Usage: go run ./scripts/procbench -awf bin/awf [-runs 5] [-full]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// sample is one run of a command, measured by the kernel.
type sample struct {
	wall, cpu time.Duration
	rssKiB    int64
}

// stats are the min and median of several samples of one command.
type stats struct {
	minWall, medWall time.Duration
	minCPU, medCPU   time.Duration
	maxRSS, medRSS   int64
}

func main() {
	awf := flag.String("awf", "bin/awf", "the awf binary to measure")
	runs := flag.Int("runs", 5, "runs of each command (min and median are reported)")
	full := flag.Bool("full", false, "also run the 10,000-step workflow (minutes on a slow machine)")
	flag.Parse()
	bin, err := filepath.Abs(*awf)
	if err != nil {
		fail(err)
	}
	b := &bench{awf: bin, runs: *runs}
	if b.dir, err = os.MkdirTemp("", "procbench"); err != nil {
		fail(err)
	}
	defer os.RemoveAll(b.dir)
	b.startup()
	b.steps(*full)
	b.sandboxedCall()
	b.memory()
	b.nesting()
	if b.missed > 0 {
		fmt.Printf("\n%d target(s) missed\n", b.missed)
	}
}

type bench struct {
	awf    string
	dir    string
	runs   int
	missed int
}

// measure runs argv runs times in dir and returns its statistics; it stops the program when
// the command fails.
func (b *bench) measure(runs int, argv ...string) stats {
	var ss []sample
	for range runs {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = b.dir
		cmd.Env = append(os.Environ(), "HOME="+b.dir)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		wall := time.Since(start)
		if err != nil {
			fail(fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, out))
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		ss = append(ss, sample{
			wall:   wall,
			cpu:    time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
			rssKiB: ru.Maxrss,
		})
	}
	return summarize(ss)
}

func summarize(ss []sample) stats {
	walls := make([]time.Duration, len(ss))
	cpus := make([]time.Duration, len(ss))
	rss := make([]int64, len(ss))
	for i, s := range ss {
		walls[i], cpus[i], rss[i] = s.wall, s.cpu, s.rssKiB
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	slices.Sort(rss)
	mid := len(ss) / 2
	return stats{
		minWall: walls[0], medWall: walls[mid],
		minCPU: cpus[0], medCPU: cpus[mid],
		maxRSS: rss[len(rss)-1], medRSS: rss[mid],
	}
}

// write creates a file in the bench directory and returns its path.
func (b *bench) write(name, content string) string {
	p := filepath.Join(b.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		fail(err)
	}
	return p
}

// stepsWorkflow is a workflow of n shell steps running command.
func stepsWorkflow(n int, command string) string {
	var sb strings.Builder
	sb.WriteString("name: bench\nsteps:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  - {name: s%05d, type: shell, command: %q}\n", i, command)
	}
	return sb.String()
}

// target prints one figure against its target and counts a miss.
func (b *bench) target(what string, got float64, unit string, limit float64, detail string) {
	verdict := "MET"
	if got > limit {
		verdict = "MISSED"
		b.missed++
	}
	fmt.Printf("%-58s %9.3f %-6s (target <= %g)  %-6s %s\n", what, got, unit, limit, verdict, detail)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (b *bench) startup() {
	fmt.Println("== start-up (min of", b.runs*4, "runs; median in brackets)")
	runs := b.runs * 4
	base := b.measure(runs, "/bin/true")
	version := b.measure(runs, b.awf, "--version")
	wf := b.write("three.yaml", stepsWorkflow(3, "true"))
	validate := b.measure(runs, b.awf, "validate", wf)
	detail := func(s stats) string {
		return fmt.Sprintf("[%.2f ms vs /bin/true %.2f ms; median %.2f vs %.2f]", ms(s.minWall), ms(base.minWall), ms(s.medWall), ms(base.medWall))
	}
	b.target("awf --version, extra wall over /bin/true", ms(version.minWall-base.minWall), "ms", 1.5, detail(version))
	b.target("awf validate (3 steps), extra wall over /bin/true", ms(validate.minWall-base.minWall), "ms", 1.5, detail(validate))
}

func (b *bench) steps(full bool) {
	fmt.Println("\n== per-step cost as workflows grow (state on this machine's disk)")
	version := b.measure(b.runs, b.awf, "--version")
	per := func(n int) (wall, cpu float64, s stats) {
		wf := b.write(fmt.Sprintf("steps%d.yaml", n), stepsWorkflow(n, "true"))
		runs := b.runs
		if n >= 2000 {
			runs = max(1, b.runs/2)
		}
		s = b.measure(runs, b.awf, "run", wf, "--quiet")
		return ms(s.medWall-version.medWall) / float64(n), ms(s.medCPU-version.medCPU) / float64(n), s
	}
	w50, c50, s50 := per(50)
	bare := b.measure(b.runs, "sh", "-c", `i=0; while [ $i -lt 50 ]; do sh -c true; i=$((i+1)); done`)
	b.target("50 `true` steps, wall against 50 `sh -c true` from sh", float64(s50.medWall)/float64(bare.medWall), "x", 1.3,
		fmt.Sprintf("[awf %.1f ms, bare %.1f ms, medians]", ms(s50.medWall), ms(bare.medWall)))
	sizes := []int{2000}
	if full {
		sizes = append(sizes, 10000)
	}
	for _, n := range sizes {
		w, c, s := per(n)
		d := fmt.Sprintf("[%.3f ms/step vs %.3f at 50]", w, w50)
		b.target(fmt.Sprintf("%d steps: wall per step against 50 steps", n), w/w50, "x", 1.2, d)
		b.target(fmt.Sprintf("%d steps: CPU per step against 50 steps", n), c/c50, "x", 1.2, fmt.Sprintf("[%.3f ms/step vs %.3f at 50]", c, c50))
		if n == 10000 {
			b.target("10,000 steps: peak RSS of the run", float64(s.maxRSS)/1024, "MiB", 100, "")
			wf := filepath.Join(b.dir, "steps10000.yaml")
			v := b.measure(1, b.awf, "validate", wf)
			b.target("10,000 steps: validate wall", ms(v.medWall), "ms", 1000, "")
			b.target("10,000 steps: validate peak RSS", float64(v.maxRSS)/1024, "MiB", 100, "")
		}
	}
}

// sandboxedCall compares a tool step calling the shell built-in (every sandbox layer, the
// helper process) with a plain shell step running the same command.
func (b *bench) sandboxedCall() {
	fmt.Println("\n== a sandboxed shell-tool call against a plain step (20 of each)")
	const n = 20
	var sb strings.Builder
	sb.WriteString("name: tools\ntools:\n  - {name: shell, builtin: true, approval: auto}\nsteps:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  - {name: t%02d, type: tool, tool: shell, args: {command: \"true\"}}\n", i)
	}
	tools := b.write("tools.yaml", sb.String())
	plain := b.write("plain.yaml", stepsWorkflow(n, "true"))
	t := b.measure(b.runs, b.awf, "run", tools, "--quiet", "--yes")
	p := b.measure(b.runs, b.awf, "run", plain, "--quiet")
	extra := ms(t.medWall-p.medWall) / n
	b.target("extra wall per sandboxed call", extra, "ms", 3,
		fmt.Sprintf("[%.2f ms/call vs %.2f ms/step, medians]", ms(t.medWall)/n, ms(p.medWall)/n))
}

// memory compares the peak RSS of a run whose step outputs 10 MB used by the next step with
// the same run outputting 10 bytes.
func (b *bench) memory() {
	fmt.Println("\n== peak memory with a 10 MB step output used by the next step")
	wf := "name: big\nsteps:\n" +
		"  - {name: produce, type: shell, command: \"head -c SIZE /dev/zero | tr '\\\\0' x\"}\n" +
		"  - {name: consume, type: shell, command: \"printf '%s' \\\"{{states.produce.output}}\\\" | wc -c\"}\n"
	big := b.write("big.yaml", strings.Replace(wf, "SIZE", "10485760", 1))
	small := b.write("small.yaml", strings.Replace(wf, "SIZE", "10", 1))
	bs := b.measure(b.runs, b.awf, "run", big, "--quiet")
	ss := b.measure(b.runs, b.awf, "run", small, "--quiet")
	b.target("peak RSS, 10 MB run against a 10-byte run", float64(bs.maxRSS)/float64(ss.maxRSS), "x", 2,
		fmt.Sprintf("[%.1f MiB vs %.1f MiB; extra %.2fx the payload]", float64(bs.maxRSS)/1024, float64(ss.maxRSS)/1024,
			float64(bs.maxRSS-ss.maxRSS)/1024/10))
}

// nesting times the refusal of 100,000 nested brackets in an ignored key.
func (b *bench) nesting() {
	fmt.Println("\n== refusing deeply nested YAML (100,000 brackets in an x- key)")
	wf := b.write("deep.yaml", "name: deep\nx-note: "+strings.Repeat("[", 100_000)+"\nsteps:\n  - {name: a, type: shell, command: 'true'}\n")
	var ss []sample
	for range b.runs {
		cmd := exec.Command(b.awf, "validate", wf)
		start := time.Now()
		_ = cmd.Run() // refused: exit 2
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		ss = append(ss, sample{wall: time.Since(start), rssKiB: ru.Maxrss})
	}
	s := summarize(ss)
	b.target("validate refuses it: wall", ms(s.medWall), "ms", 100, "")
	b.target("validate refuses it: peak RSS", float64(s.maxRSS)/1024, "MiB", 50, "")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "procbench:", err)
	os.Exit(1)
}
