//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Background jobs in the shell of steps and tools: $! is a job id that kill and wait accept,
// kill signals only the script's own jobs and programs, and what is left running when the
// step ends is killed.

// serverScript starts a server in the background, uses it, kills it and waits for it. The
// server answers each request file (req) with a response file (resp); serverCmd is how it
// is started (a program or a shell loop).
func serverScript(serverCmd string) string {
	return serverCmd + ` &
server=$!
echo "server job $server"
jobs
echo ping > req.tmp; mv req.tmp req
until [ -f resp ]; do sleep 0.02; done
cat resp
kill $server
wait $server
echo "server ended with status $?"
jobs
kill $server
echo "second kill: $?"
`
}

const serverLoop = `while :; do if [ -f req ]; then echo "pong $(cat req)" > resp.tmp; mv resp.tmp resp; rm req; fi; sleep 0.02; done`

func checkServerOutput(t *testing.T, what, out string) {
	t.Helper()
	for _, want := range []string{"server job %1", "[1] Running", "pong ping", "server ended with status 143",
		"[1] Killed (SIGTERM)", "second kill: 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("%s: output lacks %q:\n%s", what, want, out)
		}
	}
}

func TestBackgroundServerStartedUsedAndKilled(t *testing.T) {
	e := newEnv(t)
	// In a shell step the server is a program (sh -c, as a real server binary would be); in
	// a sandboxed shell-tool call under a command allowlist it is a loop of the shell itself.
	step, _ := json.Marshal(serverScript("sh -c '" + serverLoop + "'"))
	tool, _ := json.Marshal(map[string]string{"command": serverScript("( " + serverLoop + " )")})
	e.write("wf.yaml", fmt.Sprintf(`name: server
approval: {default: auto}
sandbox: {commands: [sh, sleep, cat, mv, rm]}
steps:
  - {name: step, type: shell, command: %s, timeout: 1m}
  - {name: tool, type: tool, tool: shell, args: %s}
`, step, tool))
	r := e.runJSON(0, "run", "wf.yaml")
	st := e.state(r.RunID)
	checkServerOutput(t, "shell step", st.States["step"].Output)
	if runtime.GOOS == "linux" {
		checkServerOutput(t, "sandboxed tool", st.States["tool"].Output)
	}
}

// A kill of anything but the script's own jobs and programs is refused: awf itself, its
// parent, pid 1, every process (-1), a pid that is not the script's. The signals that would
// do harm if one got through are 0 and CONT, except for awf's own pid.
func TestKillRefusesProcessesNotTheScripts(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox of tool processes is Linux-only")
	}
	script := `for target in $$ $PPID 1 -1 999999999 %7 nonsense; do
  sig=-0; [ "$target" = "$$" ] && sig=-9
  [ "$target" = "$PPID" ] && sig=-CONT
  kill $sig -- "$target" 2>>refusals; echo "kill $target: $?"
done
kill -9 -1 2>>refusals; echo "kill -9 -1: $?"
ulimit -n 10 2>>refusals; echo "ulimit: $?"
cat refusals`
	args, _ := json.Marshal(map[string]string{"command": script})
	sc, _ := json.Marshal(script)
	e := newEnv(t)
	e.write("wf.yaml", fmt.Sprintf(`name: hostile
approval: {default: auto}
sandbox: {commands: [cat]}
steps:
  - {name: step, type: shell, command: %s}
  - {name: tool, type: tool, tool: shell, args: %s}
`, sc, args))
	r := e.runJSON(0, "run", "wf.yaml")
	st := e.state(r.RunID)
	for _, name := range []string{"step", "tool"} {
		out := st.States[name].Output
		for _, want := range []string{"kill 1: 1", "kill -1: 1", "kill 999999999: 1", "kill %7: 1", "kill nonsense: 1",
			"kill -9 -1: 1", "ulimit: 2", "not a process of this script", "no such job", "ulimit: not supported"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", name, want, out)
			}
		}
		if strings.Count(out, ": 0\n") > 0 {
			t.Errorf("%s: a kill succeeded:\n%s", name, out)
		}
	}
}

// A script that writes job control's own markers (what awf rewrites `CMD &` into) does not
// crash awf: a marker called otherwise than the rewrite calls it fails like an unknown
// command, a well-formed one can only number the script's own jobs, and a job variable set
// by hand to no job is the script's own shell.
func TestForgedJobMarkersRefused(t *testing.T) {
	script := `awf:job-new; echo "new: $?"
awf:job-done; echo "done: $?"
awf:job-new a b; echo "new2: $?"
awf:job-new x; echo "forged: $__awf_bang"
__awf_job=-1 ls >/dev/null; echo "negative job: $?"
__awf_job=%99999999999999999999 ls >/dev/null; echo "huge job: $?"
kill -9 $$; echo "kill awf: $?"`
	sc, _ := json.Marshal(script)
	e := newEnv(t)
	e.write("wf.yaml", fmt.Sprintf("name: forged\nsteps:\n  - {name: step, type: shell, command: %s}\n", sc))
	r := e.runJSON(0, "run", "wf.yaml")
	out := e.state(r.RunID).States["step"].Output
	for _, want := range []string{"new: 2", "done: 2", "new2: 2", "forged: %1", "negative job: 0", "huge job: 0", "kill awf: 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// Jobs still running when the script ends are killed with their process groups, and the
// step ends when its script does.
func TestBackgroundJobsKilledWhenTheStepEnds(t *testing.T) {
	e := newEnv(t)
	e.write("wf.yaml", `name: leftover
steps:
  - name: start
    type: shell
    command: |
      sleep 300 &
      sh -c 'sleep 301 & sleep 302' &
      until [ "$(jobs -p | wc -l)" -ge 2 ]; do sleep 0.01; done
      jobs -p
output: "{{states.start.output}}"
`)
	r := e.runJSON(0, "run", "wf.yaml")
	fields := strings.Fields(r.Output)
	if len(fields) != 2 {
		t.Fatalf("jobs -p printed %q, want two pids", r.Output)
	}
	for _, f := range fields {
		pid, err := strconv.Atoi(f)
		if err != nil || pid <= 1 {
			t.Fatalf("jobs -p printed %q, not a pid", f)
		}
		// The group is gone: the program and what it started (sleep 301).
		waitFor(t, func() bool { return syscall.Kill(-pid, 0) == syscall.ESRCH })
	}
}

// awf validate warns of a builtin awf's shell does not have, before anything runs.
func TestValidateWarnsOfUnsupportedBuiltin(t *testing.T) {
	e := newEnv(t)
	e.write("wf.yaml", "name: u\nsteps:\n  - name: s\n    type: shell\n    command: |\n      echo a\n      ulimit -n 4096 || true\n")
	r := e.mustRun(0, "validate", "wf.yaml")
	if !strings.Contains(r.stderr, "warning: line 2 of the command: ulimit is not a builtin of awf's shell") {
		t.Errorf("validate did not warn of ulimit:\n%s", r.stderr)
	}
}

// A job started by eval'd code is rewritten into code that eval parses again; a quote in the
// job's command must not end its word there and run the rest as a command.
func TestEvalJobTextRunsNothing(t *testing.T) {
	sc, _ := json.Marshal(`eval "echo \"a'; touch injected; 'b\" &"; wait; jobs`)
	e := newEnv(t)
	e.write("wf.yaml", fmt.Sprintf("name: quote\nsteps:\n  - {name: step, type: shell, command: %s}\n", sc))
	r := e.runJSON(0, "run", "wf.yaml")
	out := e.state(r.RunID).States["step"].Output
	if e.exists("injected") || !strings.Contains(out, "a'; touch injected; 'b\n[1] Done") {
		t.Errorf("the job's text ran as code (injected exists: %v); output:\n%s", e.exists("injected"), out)
	}
}
