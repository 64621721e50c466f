package process

// Background jobs. The interpreter (mvdan.cc/sh) runs `cmd &` as a goroutine and has no kill,
// jobs or ulimit; its $! is "g1", which no command accepts. awf gives scripts working job
// control on top of it, the same in shell steps (Local) and in tools' helper (Runner):
//
//   - Before it runs, the script is rewritten (rewriteJobs): each `STMT &` becomes
//     `{ awf:job-new 'STMT'; { __awf_job=$__awf_bang; ( STMT ) || awf:job-done $?;
//     awf:job-done 0; } & }`, and each $! becomes $__awf_bang. awf:job-new numbers the job and
//     sets __awf_bang to "%N" in the starting shell (its call is rewritten to
//     `eval __awf_bang=%N`); the job's shell marks itself with __awf_job, which everything it
//     runs (functions, subshells) sees; ( STMT ) keeps an `exit` inside the job from skipping
//     awf:job-done, which records the status (the first call counts), and the || keeps
//     `set -e` from ending the job's shell before it (the interpreter keeps set -e in force
//     inside the subshell).
//   - The code of eval and trap calls is rewritten the same way when they run (rewriteCode).
//   - kill, wait, jobs and ulimit calls are renamed to awf:kill... and served by jobBuiltins.
//   - Every program the script starts is registered with its job (programExec), so that kill
//     can signal it and wait can wait for it.
//
// kill signals only the script's own jobs and programs: a pid that is not one of them (awf
// itself, pid 1, -1) is refused. A killed job's shell stops at its next command (the call
// handler refuses to go on), as a subshell killed by a signal would.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/awf-dev/awf/internal/infrastructure/sandbox"
	"github.com/awf-dev/awf/internal/infrastructure/shellsyntax"
)

const (
	jobVar     = "__awf_job"    // in a job's shell: its id ("%N"); unset in the script's own shell
	bangVar    = "__awf_bang"   // what $! expands to: "%N", the last job the shell started
	jobNewCmd  = "awf:job-new"  // awf:job-new TEXT: start numbering a job (rewriteJobs)
	jobDoneCmd = "awf:job-done" // awf:job-done STATUS: the job's shell ended
	jobPrefix  = "awf:"         // served builtins are renamed awf:NAME
	// jobMisusedCmd NAME: a marker called otherwise than the rewrite calls it; fails
	jobMisusedCmd = "awf:job-misused"
	jobTextMax    = 200 // bytes of a job's command shown by `jobs`
)

// jobBuiltins are the builtins jobBuiltins serves (the interpreter has none of them but wait,
// whose wait does not know awf's jobs).
var jobBuiltins = []string{"kill", "wait", "jobs", "ulimit"}

// errJobKilled stops the shell of a job that kill terminated.
var errJobKilled = errors.New("job killed")

// rewriteJobs rewrites file's background statements and $! as described above.
func rewriteJobs(file *syntax.File) {
	made := map[*syntax.Stmt]bool{}
	syntax.Walk(file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ParamExp:
			if n.Param != nil && n.Param.Value == "!" {
				n.Param = &syntax.Lit{Value: bangVar}
			}
		case *syntax.Stmt:
			if (n.Background || n.Disown) && !made[n] {
				made[rewriteBackground(n)] = true
			}
		}
		return true
	})
}

// rewriteBackground turns st (STMT &) in place into the statement that starts it as a job,
// and returns the new background statement inside it.
func rewriteBackground(st *syntax.Stmt) *syntax.Stmt {
	body := *st
	body.Background, body.Disown = false, false
	var text bytes.Buffer
	syntax.NewPrinter(syntax.SingleLine(true)).Print(&text, &body)
	shown := text.String()
	if len(shown) > jobTextMax {
		shown = shown[:jobTextMax] + "..."
	}
	bg := &syntax.Stmt{Background: true, Cmd: &syntax.Block{Stmts: []*syntax.Stmt{
		{Cmd: &syntax.CallExpr{Assigns: []*syntax.Assign{{Name: &syntax.Lit{Value: jobVar}, Value: paramWord(bangVar)}}}},
		{Cmd: &syntax.BinaryCmd{Op: syntax.OrStmt,
			X: &syntax.Stmt{Cmd: &syntax.Subshell{Stmts: []*syntax.Stmt{&body}}},
			Y: &syntax.Stmt{Cmd: &syntax.CallExpr{Args: []*syntax.Word{litWord(jobDoneCmd), paramWord("?")}}}}},
		{Cmd: &syntax.CallExpr{Args: []*syntax.Word{litWord(jobDoneCmd), litWord("0")}}},
	}}}
	*st = syntax.Stmt{Comments: body.Comments, Position: body.Position, Cmd: &syntax.Block{Stmts: []*syntax.Stmt{
		{Cmd: &syntax.CallExpr{Args: []*syntax.Word{litWord(jobNewCmd), {Parts: []syntax.WordPart{ansiQuoted(shown)}}}}},
		bg,
	}}}
	return bg
}

// ansiQuoted is s as one $'...' word, its quotes, backslashes and control characters escaped:
// the same text whether the interpreter runs the rewritten tree or eval and trap parse it
// printed (rewriteCode), so that no quote in a job's command can end the word and run the
// rest as code.
func ansiQuoted(s string) *syntax.SglQuoted {
	var b strings.Builder
	for i := range len(s) {
		switch c := s[i]; {
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", c)
		default:
			b.WriteByte(c)
		}
	}
	return &syntax.SglQuoted{Dollar: true, Value: b.String()}
}

func litWord(s string) *syntax.Word {
	return &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: s}}}
}

func paramWord(name string) *syntax.Word {
	return &syntax.Word{Parts: []syntax.WordPart{&syntax.ParamExp{Short: true, Param: &syntax.Lit{Value: name}}}}
}

// job is one background job of a script.
type job struct {
	id, parent int
	text       string
	procs      map[int]bool // running programs: pids (process group ids when grouped)
	shellEnded bool         // awf:job-done ran, or kill stopped the job's shell
	killed     bool
	status     int
	done       chan struct{} // closed when the shell ended and no program runs
}

// jobControl is the job table of one script run. Job 0 is the script's own shell.
type jobControl struct {
	mu    sync.Mutex
	jobs  []*job // jobs[i] has id i
	procs map[int]int
	// grouped: each program leads its own process group (Local), so kill signals the group
	// and a pid in that group may be named; otherwise programs share the helper's group.
	grouped bool
	funcs   map[string]bool // builtin names the script defines as functions: left to them
	// starting is read-held by each program's start; closeStarts takes it to end them: a
	// persistent helper then kills what the call left, and nothing starts after that.
	starting   sync.RWMutex
	startsDone bool
}

// errStartsClosed refuses a program started once its script's call has ended.
var errStartsClosed = errors.New("the call has ended: no program starts any more")

// start starts cmd, unless closeStarts was called.
func (jc *jobControl) start(cmd *exec.Cmd) error {
	jc.starting.RLock()
	defer jc.starting.RUnlock()
	if jc.startsDone {
		return errStartsClosed
	}
	return sandbox.StartProgram(cmd.Start) // [sandbox] in the programs' Landlock domain
}

// closeStarts makes every later start fail, once the starts under way have returned.
func (jc *jobControl) closeStarts() {
	jc.starting.Lock()
	jc.startsDone = true
	jc.starting.Unlock()
}

// startedJobs reports whether the script started a background job: its shell is a goroutine
// of the interpreter that may outlive the script.
func (jc *jobControl) startedJobs() bool {
	jc.mu.Lock()
	defer jc.mu.Unlock()
	return len(jc.jobs) > 1
}

func newJobControl(file *syntax.File, grouped bool) *jobControl {
	jc := &jobControl{grouped: grouped, procs: map[int]int{}, funcs: map[string]bool{},
		jobs: []*job{{procs: map[int]bool{}, done: make(chan struct{})}}}
	syntax.Walk(file, func(n syntax.Node) bool {
		if f, ok := n.(*syntax.FuncDecl); ok && slices.Contains(jobBuiltins, f.Name.Value) {
			jc.funcs[f.Name.Value] = true
		}
		return true
	})
	rewriteJobs(file)
	return jc
}

// options are the interpreter options of job control, around the other call handler (nil:
// none); the exec middleware must come before any that checks programs (the sandbox's guard).
func (jc *jobControl) options(next interp.CallHandlerFunc) []interp.RunnerOption {
	return []interp.RunnerOption{interp.CallHandler(func(ctx context.Context, args []string) ([]string, error) {
		if err := parsedLater(ctx, args); err != nil {
			return args, err
		}
		args, err := jc.call(ctx, args)
		if err != nil || next == nil || strings.HasPrefix(args[0], jobPrefix) {
			return args, err
		}
		return next(ctx, args)
	})}
}

// parsedLater refuses an eval, source or . whose script shellsyntax refuses for its depth,
// also when called through builtin or command: the interpreter parses that text itself, with
// no limit, and text nested deep enough (a few MB of "f() " prefixes) overflows the stack of
// the process running it, awf itself for a step. Any other failure to read or parse is left
// to the interpreter to report.
func parsedLater(ctx context.Context, args []string) error {
	for len(args) > 0 && (args[0] == "builtin" || args[0] == "command") {
		args = args[1:]
		for len(args) > 0 && strings.HasPrefix(args[0], "-") { // command -v only looks
			if args[0] == "-v" {
				return nil
			}
			args = args[1:]
		}
	}
	switch {
	case len(args) > 0 && args[0] == "eval":
		return shellsyntax.Check(strings.Join(args[1:], " "), "eval")
	case len(args) > 1 && (args[0] == "source" || args[0] == "."):
		data, err := os.ReadFile(sourced(interp.HandlerCtx(ctx), args[1]))
		if err != nil {
			return nil
		}
		return shellsyntax.Check(string(data), args[1])
	}
	return nil
}

// sourced is the file source and . read for name, found as the interpreter finds it: a name
// without a slash in PATH first, then in the directory.
func sourced(hc interp.HandlerContext, name string) string {
	if !strings.Contains(name, "/") {
		for _, dir := range filepath.SplitList(hc.Env.Get("PATH").String()) {
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(hc.Dir, dir)
			}
			if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
				return filepath.Join(dir, name)
			}
		}
	}
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(hc.Dir, name)
}

// current is the job whose shell makes the call in hc: the job its __awf_job names. The script
// can set that variable too, so a value that names no job (not a number, negative, too
// large) is the script's own shell, job 0.
func (jc *jobControl) current(hc interp.HandlerContext) int {
	n, err := strconv.Atoi(strings.TrimPrefix(hc.Env.Get(jobVar).String(), "%"))
	jc.mu.Lock()
	defer jc.mu.Unlock()
	if err != nil || n < 0 || n >= len(jc.jobs) {
		return 0
	}
	return n
}

// call is the call handler: it serves awf:job-new and awf:job-done, stops a killed job's
// shell, and renames the served builtins.
func (jc *jobControl) call(ctx context.Context, args []string) ([]string, error) {
	hc := interp.HandlerCtx(ctx)
	cur := jc.current(hc)
	if misused(args) {
		return []string{jobMisusedCmd, args[0]}, nil
	}
	if args[0] == jobDoneCmd {
		status, _ := strconv.Atoi(args[1])
		jc.shellDone(cur, status)
		return []string{":"}, nil
	}
	if jc.stopped(cur) {
		return nil, errJobKilled
	}
	if args[0] == jobNewCmd {
		return []string{"eval", bangVar + "=%" + strconv.Itoa(jc.newJob(cur, args[1]))}, nil
	}
	if args[0] == "eval" || args[0] == "trap" {
		return rewriteCode(args), nil
	}
	if (args[0] == "command" || args[0] == "builtin") && len(args) > 1 && (args[1] == "eval" || args[1] == "trap") {
		return append([]string{args[0]}, rewriteCode(args[1:])...), nil
	}
	name, rest, viaCommand := args[0], args[1:], false
	if (name == "command" || name == "builtin") && len(args) > 1 && slices.Contains(jobBuiltins, args[1]) {
		name, rest, viaCommand = args[1], args[2:], true
	}
	if slices.Contains(jobBuiltins, name) && (viaCommand || !jc.funcs[name]) {
		return append([]string{jobPrefix + name}, rest...), nil
	}
	return args, nil
}

// misused reports whether args call a job marker otherwise than rewriteBackground does (with
// one argument): a script that writes the markers itself. A well-formed one written by a
// script can only number or end the script's own jobs; which programs kill reaches is decided
// by the programs the script started alone.
func misused(args []string) bool {
	return (args[0] == jobNewCmd || args[0] == jobDoneCmd) && len(args) != 2
}

// rewriteCode applies rewriteJobs to the code that an eval or trap call runs, text that the
// interpreter parses only then: a job it starts and the $! it reads are awf's too. Code that
// does not parse is left to the interpreter, which reports it.
func rewriteCode(args []string) []string {
	at, code := 1, ""
	switch args[0] {
	case "eval":
		code = strings.Join(args[1:], " ")
	case "trap":
		if len(args) > 1 && args[1] == "--" { // trap -- CODE SIGNAL...
			at = 2
		}
		if len(args) < at+2 || strings.HasPrefix(args[at], "-") {
			return args
		}
		code = args[at]
	}
	if !strings.ContainsAny(code, "&!") {
		return args
	}
	file, err := shellsyntax.Parse(code, "")
	if err != nil {
		return args
	}
	rewriteJobs(file)
	var out bytes.Buffer
	if err := syntax.NewPrinter().Print(&out, file); err != nil {
		return args
	}
	if args[0] == "eval" {
		return []string{"eval", out.String()}
	}
	return slices.Concat(args[:at], []string{out.String()}, args[at+1:])
}

func (jc *jobControl) newJob(parent int, text string) int {
	jc.mu.Lock()
	defer jc.mu.Unlock()
	j := &job{id: len(jc.jobs), parent: parent, text: text, procs: map[int]bool{}, done: make(chan struct{})}
	jc.jobs = append(jc.jobs, j)
	return j.id
}

// stopped reports whether job id or a job above it was killed.
func (jc *jobControl) stopped(id int) bool {
	jc.mu.Lock()
	defer jc.mu.Unlock()
	return jc.stoppedLocked(id)
}

// stoppedLocked is stopped with mu held.
func (jc *jobControl) stoppedLocked(id int) bool {
	for id > 0 && id < len(jc.jobs) {
		if jc.jobs[id].killed {
			return true
		}
		id = jc.jobs[id].parent
	}
	return false
}

func (jc *jobControl) shellDone(id, status int) {
	jc.mu.Lock()
	defer jc.mu.Unlock()
	if id <= 0 || id >= len(jc.jobs) || jc.jobs[id].shellEnded {
		return
	}
	j := jc.jobs[id]
	j.shellEnded, j.status = true, status
	j.settle()
}

// settle closes done once the job's shell ended and its last program exited; mu is held.
func (j *job) settle() {
	if j.shellEnded && len(j.procs) == 0 {
		select {
		case <-j.done:
		default:
			close(j.done)
		}
	}
}

// started registers pid, just started by the shell of hc, and returns the function that
// unregisters it once it has exited. A program started by a job being killed is signalled
// at once: it may have been started while kill ran.
func (jc *jobControl) started(hc interp.HandlerContext, pid int) (exited func()) {
	id := jc.current(hc)
	jc.mu.Lock()
	j := jc.jobs[id]
	stopped := jc.stoppedLocked(id)
	jc.procs[pid] = id
	if !stopped || !j.shellEnded {
		// A program whose start raced with kill %N is not the settled job's: jobs would
		// list the job as running again after wait %N returned (TestLocalJobControl).
		j.procs[pid] = true
	}
	jc.mu.Unlock()
	if stopped {
		jc.signal(pid, syscall.SIGKILL)
	}
	return func() {
		jc.mu.Lock()
		defer jc.mu.Unlock()
		delete(j.procs, pid)
		delete(jc.procs, pid)
		j.settle()
	}
}

// signal sends sig to a registered program (its group when grouped). pid is always one of
// jc.procs, never 0, 1 or negative on its own.
//
// A program started as the first process of a PID namespace (startDetached, as root) is that
// namespace's init, to which the kernel delivers no signal it does not handle: SIGTERM would
// be dropped where any other program dies of it. Such a program then gets SIGKILL, the effect
// the signal's default action would have had.
func (jc *jobControl) signal(pid int, sig syscall.Signal) error {
	if pid <= 1 {
		return syscall.ESRCH
	}
	if !jc.grouped {
		return kill(pid, sig)
	}
	err := kill(-pid, sig)
	if err == nil && sig != syscall.SIGKILL && pidNamespaces.Load() && terminates(sig) && !handles(pid, sig) {
		err = kill(-pid, syscall.SIGKILL)
	}
	return err
}

// terminates reports whether sig's default action ends a process (all but 0 and the job
// control and informational signals).
func terminates(sig syscall.Signal) bool {
	return sig != 0 && !slices.Contains(nonTerminating, sig)
}

// handles reports whether process pid catches or ignores sig (/proc/PID/status SigCgt,
// SigIgn); when that cannot be read, it is taken to handle it.
func handles(pid int, sig syscall.Signal) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return true
	}
	for line := range strings.Lines(string(data)) {
		key, value, _ := strings.Cut(strings.TrimSpace(line), ":")
		if key != "SigCgt" && key != "SigIgn" {
			continue
		}
		mask, err := strconv.ParseUint(strings.TrimSpace(value), 16, 64)
		if err != nil || mask&(1<<(uint(sig)-1)) != 0 {
			return true
		}
	}
	return false
}

// serve is the exec middleware of the builtins call renamed.
func (jc *jobControl) serve(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return func(ctx context.Context, args []string) error {
		hc := interp.HandlerCtx(ctx)
		if args[0] == jobMisusedCmd {
			fmt.Fprintf(hc.Stderr, "%s: awf's own marker of background jobs, not a command (start a job with CMD &)\n", args[1])
			return interp.ExitStatus(2)
		}
		name, ok := strings.CutPrefix(args[0], jobPrefix)
		if !ok || !slices.Contains(jobBuiltins, name) {
			return next(ctx, args)
		}
		var code int
		switch name {
		case "kill":
			code = jc.kill(hc, args[1:])
		case "wait":
			code = jc.wait(ctx, hc, args[1:])
		case "jobs":
			code = jc.list(hc, args[1:])
		case "ulimit":
			fmt.Fprintln(hc.Stderr, "ulimit: not supported by awf's shell: it would change awf's own limits; a tool's sandbox sets limits (sandbox.limits in the workflow)")
			code = 2
		}
		if code != 0 {
			return interp.ExitStatus(code)
		}
		return nil
	}
}

// kill implements kill [-s SIG | -n NUM | -SIG] %N|PID...: a PID must be a program the
// script started (or, grouped, in such a program's process group).
func (jc *jobControl) kill(hc interp.HandlerContext, args []string) int {
	sig, args, err := killSignal(args)
	if err != nil {
		fmt.Fprintf(hc.Stderr, "kill: %v\n", err)
		return 2
	}
	if len(args) == 0 {
		fmt.Fprintln(hc.Stderr, "kill: usage: kill [-s SIGNAL | -SIGNAL] %JOB|PID ...")
		return 2
	}
	code := 0
	for _, target := range args {
		if err := jc.killOne(target, sig); err != nil {
			fmt.Fprintf(hc.Stderr, "kill: %s: %v\n", target, err)
			code = 1
		}
	}
	return code
}

// killSignal parses kill's signal options; the default is SIGTERM. As in bash, a first
// argument starting with "-" is a signal (kill -1 PID sends SIGHUP); a negative pid comes
// after "--" or a signal.
func killSignal(args []string) (syscall.Signal, []string, error) {
	if len(args) == 0 || !strings.HasPrefix(args[0], "-") || args[0] == "-" {
		return syscall.SIGTERM, args, nil
	}
	opt, rest := args[0], args[1:]
	if opt == "--" {
		return syscall.SIGTERM, rest, nil
	}
	name := opt[1:]
	if opt == "-s" || opt == "-n" {
		if len(rest) == 0 {
			return 0, nil, fmt.Errorf("%s needs a signal", opt)
		}
		name, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	if n, err := strconv.Atoi(name); err == nil {
		if n < 0 || n > 64 {
			return 0, nil, fmt.Errorf("%s: invalid signal", name)
		}
		return syscall.Signal(n), rest, nil
	}
	upper := strings.ToUpper(name)
	if !strings.HasPrefix(upper, "SIG") {
		upper = "SIG" + upper
	}
	if s := signalNum(upper); s != 0 {
		return s, rest, nil
	}
	return 0, nil, fmt.Errorf("%s: invalid signal (use a name such as TERM, INT, KILL or a number)", name)
}

// killOne signals one target.
func (jc *jobControl) killOne(target string, sig syscall.Signal) error {
	if id, ok := strings.CutPrefix(target, "%"); ok {
		n, err := strconv.Atoi(id)
		jc.mu.Lock()
		defer jc.mu.Unlock()
		if err != nil || n <= 0 || n >= len(jc.jobs) {
			return errors.New("no such job")
		}
		return jc.killJob(jc.jobs[n], sig)
	}
	pid, err := strconv.Atoi(target)
	if err != nil {
		return errors.New("not a job (%N, as $! gives) nor a process id")
	}
	leader, ok := jc.owner(pid)
	if !ok {
		return errors.New("not a process of this script: kill signals only the script's own jobs and the programs it started")
	}
	if sig == 0 {
		return nil
	}
	if leader == pid {
		return jc.signal(pid, sig)
	}
	return kill(pid, sig) // a process in the group of one of the script's programs
}

// owner returns the registered program that pid is, or (grouped) whose process group pid is
// in. A pid of 1 or less is never one.
func (jc *jobControl) owner(pid int) (int, bool) {
	if pid <= 1 {
		return 0, false
	}
	jc.mu.Lock()
	_, ok := jc.procs[pid]
	jc.mu.Unlock()
	if ok {
		return pid, true
	}
	if !jc.grouped {
		return 0, false
	}
	pgid, err := getpgid(pid)
	if err != nil || pgid <= 1 {
		return 0, false
	}
	jc.mu.Lock()
	_, ok = jc.procs[pgid]
	jc.mu.Unlock()
	return pgid, ok
}

// killJob signals the programs of j and of the jobs it started; a signal that terminates (not
// 0, CONT, STOP and the like) also stops their shells, with status 128+sig. mu is held.
func (jc *jobControl) killJob(j *job, sig syscall.Signal) error {
	if j.shellEnded && len(j.procs) == 0 {
		return errors.New("no such job: it has ended")
	}
	if sig == 0 {
		return nil
	}
	for _, k := range jc.family(j) {
		for pid := range k.procs {
			jc.signal(pid, sig)
		}
		if terminates(sig) && !k.shellEnded {
			k.killed, k.shellEnded, k.status = true, true, 128+int(sig)
			k.settle()
		}
	}
	return nil
}

// family is j and every job started below it; mu is held.
func (jc *jobControl) family(j *job) []*job {
	out := []*job{j}
	for i := 0; i < len(out); i++ {
		for _, k := range jc.jobs[out[i].id+1:] {
			if k.parent == out[i].id {
				out = append(out, k)
			}
		}
	}
	return out
}

// wait implements wait [%N|PID...]: with no argument it waits for every job the calling
// shell started and returns 0; else it returns the status of the last one named, 127 for one
// that is not a job of this script.
func (jc *jobControl) wait(ctx context.Context, hc interp.HandlerContext, args []string) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		for _, j := range jc.children(jc.current(hc)) {
			select {
			case <-j.done:
			case <-ctx.Done():
				return 130
			}
		}
		return 0
	}
	code := 0
	for _, a := range args {
		j := jc.lookup(a)
		if j == nil {
			fmt.Fprintf(hc.Stderr, "wait: %s: not a job of this script (wait takes %%N, as $! gives)\n", a)
			code = 127
			continue
		}
		select {
		case <-j.done:
		case <-ctx.Done():
			return 130
		}
		jc.mu.Lock()
		code = j.status
		jc.mu.Unlock()
	}
	return code
}

// children are the jobs that the shell of job id started.
func (jc *jobControl) children(id int) []*job {
	jc.mu.Lock()
	defer jc.mu.Unlock()
	var out []*job
	for _, j := range jc.jobs[1:] {
		if j.parent == id {
			out = append(out, j)
		}
	}
	return out
}

// lookup finds the job of %N, or of a pid one of its programs has.
func (jc *jobControl) lookup(a string) *job {
	jc.mu.Lock()
	defer jc.mu.Unlock()
	if id, ok := strings.CutPrefix(a, "%"); ok {
		if n, err := strconv.Atoi(id); err == nil && n > 0 && n < len(jc.jobs) {
			return jc.jobs[n]
		}
		return nil
	}
	if pid, err := strconv.Atoi(a); err == nil {
		if id, ok := jc.procs[pid]; ok && id > 0 {
			return jc.jobs[id]
		}
	}
	return nil
}

// list implements jobs [-p]: the jobs the calling shell started, as "[N] State  command";
// -p prints the process ids of their running programs instead.
func (jc *jobControl) list(hc interp.HandlerContext, args []string) int {
	pids := len(args) > 0 && args[0] == "-p"
	if len(args) > 0 && !pids {
		fmt.Fprintf(hc.Stderr, "jobs: %s: not supported (jobs or jobs -p)\n", args[0])
		return 2
	}
	jobs := jc.children(jc.current(hc))
	jc.mu.Lock()
	defer jc.mu.Unlock()
	for _, j := range jobs {
		if pids {
			for _, pid := range slices.Sorted(maps.Keys(j.procs)) {
				fmt.Fprintln(hc.Stdout, pid)
			}
			continue
		}
		writeJob(hc.Stdout, j)
	}
	return 0
}

func writeJob(w io.Writer, j *job) {
	state := "Running"
	switch {
	case !j.shellEnded || len(j.procs) > 0:
	case j.killed:
		state = "Killed (" + signalName(syscall.Signal(j.status-128)) + ")"
	case j.status == 0:
		state = "Done"
	default:
		state = fmt.Sprintf("Exit %d", j.status)
	}
	fmt.Fprintf(w, "[%d] %-20s %s\n", j.id, state, j.text)
}
