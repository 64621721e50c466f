//go:build unix

// procbench reads rusage, which Windows does not have.

// Command procbench measures awf from outside the process and prints each whole-process
// target of the project against a baseline measured in the same run: per-step cost as
// workflows grow, start-up against /bin/true (beside two floors built from this repository:
// an empty Go program, and one that links awf's dependencies and runs nothing), 50 steps
// against a bare shell loop, a sandboxed tool call against a plain step, peak memory of a
// 10,000-step run, of its validate and of a run with a 10 MB output, of `awf audit` over a big
// log against a small one, refusing deeply nested YAML. Each line gives the target, the figure from the minimum and from the median of
// several runs, and PASS or FAIL (judged on
// the median, or on the single run when there is one).
//
// It is a separate, small program on purpose. Wall time, CPU time and peak RSS come from the
// kernel (wait4's rusage of each child, measuring that child alone): Linux reports a child's
// peak RSS as at least what its parent had resident when it forked it, so a figure taken from
// inside a large process (a Go test binary holding benchmark buffers) measures that process,
// not awf. This program stays at a few MiB, below any awf run.
//
// Usage: go run ./scripts/procbench -awf bin/awf [-runs 5] [-full]
package main

import (
	"bufio"
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

// stats are the minimum and median of several samples of one command, each figure taken
// separately.
type stats struct {
	n                int
	minWall, medWall time.Duration
	minCPU, medCPU   time.Duration
	minRSS, medRSS   int64 // KiB
}

func main() {
	awf := flag.String("awf", "bin/awf", "the awf binary to measure")
	runs := flag.Int("runs", 5, "runs of each command (min and median are reported)")
	full := flag.Bool("full", false, "also run the 10,000-step workflow (minutes on a slow machine)")
	bigRuns := flag.Int("bigruns", 0, "runs of the 2,000- and 10,000-step workflows (default: half of -runs, and at most 3 for 10,000)")
	dir := flag.String("dir", "", "where the workflows and their state go (default: the temporary directory); put it on a disk, not a tmpfs")
	flag.Parse()
	bin, err := filepath.Abs(*awf)
	if err != nil {
		fail(err)
	}
	b := &bench{awf: bin, runs: max(1, *runs), bigRuns: *bigRuns}
	if b.dir, err = os.MkdirTemp(*dir, "procbench"); err != nil {
		fail(err)
	}
	defer os.RemoveAll(b.dir)
	fmt.Printf("awf %s, %d runs of each command; state in %s%s\n", bin, b.runs, b.dir, tmpfsWarning(b.dir))
	b.startup()
	b.steps(*full)
	b.parallelBlock()
	b.history()
	b.sandboxedCall()
	b.memory()
	b.auditReading()
	b.validateProblems()
	b.nesting()
	fmt.Printf("\n%d target(s) checked, %d failed\n", b.checked, b.failed)
}

type bench struct {
	awf             string
	dir             string
	runs, bigRuns   int
	checked, failed int
}

// measure runs argv runs times in the bench directory and returns its statistics; it stops
// the program when the command fails.
func (b *bench) measure(runs int, argv ...string) stats {
	return b.measureExit(runs, 0, argv...)
}

// measureExit is measure for a command expected to exit with code.
func (b *bench) measureExit(runs, code int, argv ...string) stats {
	var ss []sample
	for range runs {
		ss = append(ss, b.once(code, argv))
	}
	return summarize(ss)
}

// interleaved runs each command once per round, runs rounds, and returns the statistics of
// each: commands compared with each other then see the same moments of a machine whose speed
// drifts (a shared virtual machine's does, by tens of percent within minutes).
func (b *bench) interleaved(runs int, cmds ...[]string) []stats {
	counts := make([]int, len(cmds))
	for i := range counts {
		counts[i] = runs
	}
	return b.rounds(counts, 0, cmds)
}

// rounds is interleaved with a number of runs per command: a round runs every command that
// has runs left.
func (b *bench) rounds(counts []int, code int, cmds [][]string) []stats {
	ss := make([][]sample, len(cmds))
	for round := 0; round < slices.Max(counts); round++ {
		for i, argv := range cmds {
			if round < counts[i] {
				ss[i] = append(ss[i], b.once(code, argv))
			}
		}
	}
	out := make([]stats, len(cmds))
	for i := range ss {
		out[i] = summarize(ss[i])
	}
	return out
}

// once runs argv in the bench directory and measures it; it stops the program when the
// command does not exit with code.
func (b *bench) once(code int, argv []string) sample {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(), "HOME="+b.dir)
	var out tail // not the whole output: this program's memory is part of every child's peak
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != code {
		fail(fmt.Errorf("%s: want exit %d, got %v\n%s", strings.Join(argv, " "), code, err, out.b))
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return sample{
		wall:   wall,
		cpu:    time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		rssKiB: ru.Maxrss,
	}
}

// tail keeps the last 8 KiB written to it.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - 8<<10; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
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
		n:       len(ss),
		minWall: walls[0], medWall: walls[mid],
		minCPU: cpus[0], medCPU: cpus[mid],
		minRSS: rss[0], medRSS: rss[mid],
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

// figure is one measured figure, from the minimum and from the median of the runs.
type figure struct {
	min, med float64
	unit     string
}

func (f figure) String() string {
	return fmt.Sprintf("min %.3f, median %.3f %s", f.min, f.med, f.unit)
}

// target prints one figure against its limit (at most limit, in the figure's unit), judged on
// the median, and counts a failure.
func (b *bench) target(what string, got figure, limit float64, detail string) {
	verdict := "PASS"
	b.checked++
	if got.med > limit {
		verdict = "FAIL"
		b.failed++
	}
	fmt.Printf("%-50s target <= %-8s measured %-36s %s  %s\n", what, fmt.Sprintf("%g %s", limit, got.unit), got, verdict, detail)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func mib(kib int64) float64 { return float64(kib) / 1024 }

// wallMS and cpuMS are a command's wall and CPU times in ms.
func wallMS(s stats) figure { return figure{ms(s.minWall), ms(s.medWall), "ms"} }
func cpuMS(s stats) figure  { return figure{ms(s.minCPU), ms(s.medCPU), "ms"} }
func rssMiB(s stats) figure { return figure{mib(s.minRSS), mib(s.medRSS), "MiB"} }

// minus is a figure less a baseline's, min from min and median from median.
func (f figure) minus(base figure) figure { return figure{f.min - base.min, f.med - base.med, f.unit} }

// per divides a figure by n, in unit.
func (f figure) per(n float64, unit string) figure { return figure{f.min / n, f.med / n, unit} }

// over is the ratio of a figure to a baseline's, min to min and median to median.
func (f figure) over(base figure) figure { return figure{f.min / base.min, f.med / base.med, "x"} }

func (b *bench) startup() {
	runs := b.runs * 20 // a few ms each: many runs steady the minimum and median
	fmt.Printf("\n== start-up, against /bin/true (%d runs each, interleaved)\n", runs)
	wf := b.write("three.yaml", stepsWorkflow(3, "true"))
	cmds := [][]string{{"/bin/true"}, {b.awf, "--version"}, {b.awf, "validate", wf}}
	empty, deps, err := floors(b.dir)
	if err != nil {
		fmt.Printf("(no floors: %v)\n", err)
	} else {
		cmds = append(cmds, []string{empty}, []string{deps})
	}
	s := b.interleaved(runs, cmds...)
	base, version, validate := s[0], s[1], s[2]
	detail := func(s stats) string {
		return fmt.Sprintf("[wall %s; /bin/true %s]", wallMS(s), wallMS(base))
	}
	b.target("awf --version: wall over /bin/true", wallMS(version).minus(wallMS(base)), 1.5, detail(version))
	b.target("awf validate (3 steps): wall over /bin/true", wallMS(validate).minus(wallMS(base)), 1.5, detail(validate))
	if len(s) == 5 {
		fmt.Printf("%-50s %s\n", "floor: an empty Go program, over /bin/true", wallMS(s[3]).minus(wallMS(base)))
		fmt.Printf("%-50s %s\n", "floor: awf's dependencies linked, nothing run", wallMS(s[4]).minus(wallMS(base)))
		fmt.Printf("%-50s %s\n", "awf --version over the dependencies' floor", wallMS(version).minus(wallMS(s[4])))
	}
}

// stepCost is the cost per step of an n-step run over a 1-step run.
type stepCost struct {
	wall, cpu figure
	run       stats
}

func (b *bench) steps(full bool) {
	fmt.Println("\n== per step, as workflows grow (`true` steps, state on this machine's disk, runs interleaved)")
	sizes := []int{1, 50, 2000}
	if full {
		sizes = append(sizes, 10000)
	}
	var cmds [][]string
	var counts []int
	for _, n := range sizes {
		runs := b.runs
		switch {
		case n < 2000:
		case b.bigRuns > 0:
			runs = b.bigRuns
		case n == 10000:
			runs = min(3, b.runs)
		default:
			runs = max(1, b.runs/2)
		}
		cmds = append(cmds, []string{b.awf, "run", b.write(fmt.Sprintf("steps%d.yaml", n), stepsWorkflow(n, "true")), "--quiet"})
		counts = append(counts, runs)
	}
	cmds = append(cmds, []string{"sh", "-c", `i=0; while [ $i -lt 50 ]; do sh -c true; i=$((i+1)); done`})
	counts = append(counts, b.runs)
	s := b.rounds(counts, 0, cmds)
	one, bare := s[0], s[len(s)-1]
	cost := make([]stepCost, len(sizes))
	for i, n := range sizes[1:] {
		k := float64(n - 1)
		c := stepCost{wall: wallMS(s[i+1]).minus(wallMS(one)).per(k, "ms/step"), cpu: cpuMS(s[i+1]).minus(cpuMS(one)).per(k, "ms/step"), run: s[i+1]}
		fmt.Printf("%-50s %d runs: wall %s, CPU %s (over a 1-step run)\n", fmt.Sprintf("%d steps", n), counts[i+1], c.wall, c.cpu)
		cost[i+1] = c
	}
	c50 := cost[1]
	b.target("50 steps: wall against 50 `sh -c true` from sh", wallMS(c50.run).over(wallMS(bare)), 1.3,
		fmt.Sprintf("[awf %s; bare %s]", wallMS(c50.run), wallMS(bare)))
	for i, n := range sizes[2:] {
		c := cost[i+2]
		b.target(fmt.Sprintf("%d steps: wall per step against 50 steps", n), c.wall.over(c50.wall), 1.2, "")
		b.target(fmt.Sprintf("%d steps: CPU per step against 50 steps", n), c.cpu.over(c50.cpu), 1.2, "")
		if n != 10000 {
			continue
		}
		b.target("10,000 steps: run peak RSS", rssMiB(c.run), 100, fmt.Sprintf("[%.1fx a 1-step run's %.1f MiB]", mib(c.run.medRSS)/mib(one.medRSS), mib(one.medRSS)))
		wf := filepath.Join(b.dir, "steps10000.yaml")
		v := b.measure(counts[i+2], b.awf, "validate", wf)
		b.target("10,000 steps: validate wall", wallMS(v), 1000, fmt.Sprintf("[CPU %s]", cpuMS(v)))
		b.target("10,000 steps: validate peak RSS", rssMiB(v), 100, "")
	}
}

// keptRuns is how many earlier runs the history comparison keeps in the runs directory.
const keptRuns = 5000

// history compares a 1-step run whose runs directory holds keptRuns earlier runs with the
// same run in an empty one: a new run's cost must not grow with the runs kept.
func (b *bench) history() {
	fmt.Printf("\n== a new run against the runs kept (%d state files in its runs directory)\n", keptRuns)
	wf := filepath.Join(b.dir, "steps1.yaml")
	// Under .awf, as a project's runs are: the sandbox hides .awf whole and never walks it, so
	// the kept runs do not weigh on the sandboxed calls measured next.
	empty, kept := filepath.Join(b.dir, ".awf", "runs-empty"), filepath.Join(b.dir, ".awf", "runs-kept")
	b.once(0, []string{b.awf, "run", wf, "--quiet", "--state-dir", kept})
	files, err := filepath.Glob(filepath.Join(kept, "*.yaml"))
	if err != nil || len(files) != 1 {
		fail(fmt.Errorf("one state file in %s: %v %v", kept, files, err))
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		fail(err)
	}
	id := strings.TrimSuffix(filepath.Base(files[0]), ".yaml")
	for i := range keptRuns - 1 {
		other := fmt.Sprintf("%s-%05d", id[:8], i)
		b.write(filepath.Join(".awf", "runs-kept", other+".yaml"), strings.ReplaceAll(string(data), id, other))
	}
	s := b.interleaved(b.runs*4, []string{b.awf, "run", wf, "--quiet", "--state-dir", empty},
		[]string{b.awf, "run", wf, "--quiet", "--state-dir", kept})
	b.target(fmt.Sprintf("1-step run: wall with %d runs kept against none", keptRuns), wallMS(s[1]).over(wallMS(s[0])), 1.2,
		fmt.Sprintf("[kept %s; none %s]", wallMS(s[1]), wallMS(s[0])))
}

// sandboxedCall compares a tool step calling the shell built-in (every sandbox layer, the
// helper process) with a plain shell step running the same command.
func (b *bench) sandboxedCall() {
	const n = 20
	fmt.Printf("\n== a sandboxed shell-tool call against a plain step (%d of each per run)\n", n)
	var sb strings.Builder
	sb.WriteString("name: tools\ntools:\n  - {name: shell, builtin: true, approval: auto}\nsteps:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  - {name: t%02d, type: tool, tool: shell, args: {command: \"true\"}}\n", i)
	}
	tools := b.write("tools.yaml", sb.String())
	plain := b.write("plain.yaml", stepsWorkflow(n, "true"))
	s := b.interleaved(b.runs, []string{b.awf, "run", tools, "--quiet", "--yes"}, []string{b.awf, "run", plain, "--quiet"})
	t, p := s[0], s[1]
	b.target("sandboxed call: extra wall over a plain step", wallMS(t).minus(wallMS(p)).per(n, "ms"), 3,
		fmt.Sprintf("[per call %s; per plain step %s]", wallMS(t).per(n, "ms"), wallMS(p).per(n, "ms")))
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
	s := b.interleaved(b.runs, []string{b.awf, "run", big, "--quiet"}, []string{b.awf, "run", small, "--quiet"})
	bs, ss := s[0], s[1]
	b.target("10 MB output: peak RSS against a 10-byte run", rssMiB(bs).over(rssMiB(ss)), 2,
		fmt.Sprintf("[%s vs %s; extra %.2fx the payload]", rssMiB(bs), rssMiB(ss), (mib(bs.medRSS)-mib(ss.medRSS))/10))
}

// parallelBlock measures the cost per child of a parallel block of 2,000 `true` steps against
// one of 50 (8 at a time), each over a block of one: a child must not cost more in a bigger
// block.
func (b *bench) parallelBlock() {
	fmt.Println("\n== per child of a parallel block (`true` steps, 8 at a time, state on this machine's disk)")
	block := func(n int) string {
		var sb strings.Builder
		sb.WriteString("name: fan\nsteps:\n  - name: fan\n    type: parallel\n    max_concurrency: 8\n    steps:\n")
		for i := range n {
			fmt.Fprintf(&sb, "      - {name: c%05d, type: shell, command: 'true'}\n", i)
		}
		return b.write(fmt.Sprintf("fan%d.yaml", n), sb.String())
	}
	runs := max(1, b.runs/2)
	s := b.interleaved(runs, []string{b.awf, "run", block(1), "--quiet"}, []string{b.awf, "run", block(50), "--quiet"},
		[]string{b.awf, "run", block(2000), "--quiet"})
	one, small, big := s[0], s[1], s[2]
	per := func(f func(stats) figure, s stats, n int) figure {
		return f(s).minus(f(one)).per(float64(n-1), "ms/child")
	}
	wall := per(wallMS, big, 2000).over(per(wallMS, small, 50))
	cpu := per(cpuMS, big, 2000).over(per(cpuMS, small, 50))
	detail := fmt.Sprintf("[2,000: %s; 50: %s; over a 1-child block]", per(wallMS, big, 2000), per(wallMS, small, 50))
	b.target("2,000 children: wall per child against 50", wall, 1.2, detail)
	b.target("2,000 children: CPU per child against 50", cpu, 1.2, "")
}

// auditReading measures `awf audit` over a log of 100 times more records than another: its
// peak memory must not grow with the log (the records are streamed, not held).
func (b *bench) auditReading() {
	const small, big = 500, 50_000
	fmt.Printf("\n== reading the audit log: %d records against %d\n", big, small)
	logs := map[int]string{}
	for _, n := range []int{small, big} {
		logs[n] = filepath.Join(b.dir, fmt.Sprintf("audit-%d.jsonl", n))
		if err := writeAuditLog(logs[n], n); err != nil {
			fail(err)
		}
	}
	runs := min(b.runs, 3)
	s := b.interleaved(runs,
		[]string{b.awf, "audit", "--audit-log", logs[big]}, []string{b.awf, "audit", "--audit-log", logs[small]},
		[]string{b.awf, "audit", "--audit-log", logs[big], "-o", "json"}, []string{b.awf, "audit", "--audit-log", logs[small], "-o", "json"})
	for i, format := range []string{"table", "JSON Lines"} {
		bs, ss := s[2*i], s[2*i+1]
		b.target(fmt.Sprintf("awf audit (%s): peak RSS, %d records vs %d", format, big, small), rssMiB(bs).over(rssMiB(ss)), 1.5,
			fmt.Sprintf("[%s vs %s; wall %s]", rssMiB(bs), rssMiB(ss), wallMS(bs).per(big/1000, "ms per 1,000 records")))
	}
}

// writeAuditLog writes an audit log of n records, a line at a time: held whole, it would
// raise this program's peak, which every child then reports as its own.
func writeAuditLog(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	padding := strings.Repeat("x", 600)
	for i := range n / 2 { // a call is two records: started, then its completion
		for _, outcome := range []string{"started", "ok"} {
			fmt.Fprintf(w, `{"time":"2026-11-26T10:00:00Z","run_id":"run-%04d","step":"implement","call_id":"call_%06d","tool":"shell",`+
				`"arguments":{"command":"go test ./...","padding":%q},"meta":"go test ./...","approval":{"decision":"allow","by":"auto"},`+
				`"sandbox":{"decision":"allow","layer":"L1"},"outcome":%q,"duration_ms":12,"output_size":40}`+"\n", i/50, i, padding, outcome)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// nesting times the refusal of 100,000 nested brackets in an ignored key, against the
// validation of a small workflow.
func (b *bench) nesting() {
	fmt.Println("\n== refusing deeply nested YAML (100,000 brackets in an x- key)")
	wf := b.write("deep.yaml", "name: deep\nx-note: "+strings.Repeat("[", 100_000)+"\nsteps:\n  - {name: a, type: shell, command: 'true'}\n")
	s := b.measureExit(b.runs, 2, b.awf, "validate", wf)
	base := b.measure(b.runs, b.awf, "validate", filepath.Join(b.dir, "three.yaml"))
	b.target("validate refuses it: wall", wallMS(s), 100, fmt.Sprintf("[validate of 3 steps: %s]", wallMS(base)))
	b.target("validate refuses it: peak RSS", rssMiB(s), 50, fmt.Sprintf("[validate of 3 steps: %s]", rssMiB(base)))
}

// validateProblems measures `awf validate` of a workflow whose every step names a step that
// does not exist, per step, at 4,000 steps against 500 (each over a 1-step one): checking a
// step, and finding a hint for its problem, must not cost more in a longer file.
func (b *bench) validateProblems() {
	fmt.Println("\n== validating a workflow whose every step has a problem (a reference to a step that does not exist)")
	wf := func(n int) string {
		var sb strings.Builder
		sb.WriteString("name: broken\nsteps:\n")
		for i := range n {
			fmt.Fprintf(&sb, "  - {name: s%05d, type: shell, command: 'echo {{states.nope%05d.output}}'}\n", i, i)
		}
		return b.write(fmt.Sprintf("broken%d.yaml", n), sb.String())
	}
	s := b.rounds([]int{b.runs, b.runs, b.runs}, 2, [][]string{
		{b.awf, "validate", wf(1)}, {b.awf, "validate", wf(500)}, {b.awf, "validate", wf(4000)}})
	per := func(st stats, n int) figure { return wallMS(st).minus(wallMS(s[0])).per(float64(n-1), "ms/step") }
	b.target("4,000 steps: wall per step against 500", per(s[2], 4000).over(per(s[1], 500)), 1.2,
		fmt.Sprintf("[4,000: %s; 500: %s; over a 1-step file]", per(s[2], 4000), per(s[1], 500)))
}

// tmpfsWarning says when dir is in memory: the state is then never really synced to a disk,
// and the per-step figures are not the ones the targets are about.
func tmpfsWarning(dir string) string {
	const tmpfsMagic = 0x01021994
	var fs syscall.Statfs_t
	if syscall.Statfs(dir, &fs) == nil && fs.Type == tmpfsMagic {
		return " (a tmpfs: pass -dir on a disk)"
	}
	return ""
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "procbench:", err)
	os.Exit(1)
}
