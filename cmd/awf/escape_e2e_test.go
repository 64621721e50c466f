//go:build unix

package main

import (
	"strings"
	"syscall"
	"testing"

	"github.com/awf-dev/awf/cmd/awf/internal/ptytest"
)

// hostile is what a tool prints to take over the reviewer's terminal: a window title (OSC 0)
// and a clear screen; the tool adds a byte that is not UTF-8. The shell's parser refuses a
// script that is not UTF-8, so the input has none.
const (
	hostile        = "\x1b]0;pwned\x07\x1b[2J"
	hostileEscaped = `\x1b]0;pwned\a\x1b[2J\xff`
)

const escapesWorkflow = `name: escapes
inputs:
  - {name: payload, type: string}
tools:
  - {name: shell, builtin: true, approval: auto}
steps:
  - name: call
    type: tool
    tool: shell
    args:
      command: "printf '\\033]0;pwned\\007\\033[2J\\377\\n' # {{inputs.payload}}"
  - name: fail
    type: shell
    command: printf '\033]0;pwned\007\033[2J\377\n' >&2; exit 1
    continue_on_error: true
output: "{{states.call.output}}"
`

// TestTerminalEscapesEscaped: tool output and workflow output holding terminal escapes and
// bytes that are not UTF-8 reach a terminal escaped (awf run on a pseudo-terminal, awf status,
// awf audit, awf history), a pipe unchanged (awf run > file), and the state file exactly.
func TestTerminalEscapesEscaped(t *testing.T) {
	e := newEnv(t)
	e.write("escapes.yaml", escapesWorkflow)

	// On a terminal: nothing the terminal would act on, from stdout or stderr.
	p := ptytest.Open(t)
	cmd := e.cmd(t.Context(), "run", "escapes.yaml", "--input", "payload="+hostile)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.Term, p.Term, p.Term
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Run(); err != nil {
		t.Fatalf("awf run on a terminal: %v\n%s", err, p.Text())
	}
	screen, _ := p.WaitFor("state:", 1)
	assertEscaped(t, "awf run on a terminal", screen)
	if !strings.Contains(screen, hostileEscaped) {
		t.Errorf("awf run on a terminal does not show the output escaped (%s):\n%q", hostileEscaped, screen)
	}

	// To a pipe: the output is the tool's bytes, for scripts; stderr, for people, is escaped.
	r := e.mustRun(0, "run", "escapes.yaml", "--input", "payload="+hostile)
	if want := "\x1b]0;pwned\x07\x1b[2J\xff\n"; r.stdout != want {
		t.Errorf("awf run > file: stdout = %q, want the bytes %q", r.stdout, want)
	}
	assertEscaped(t, "awf run stderr", r.stderr)

	// The state file holds the exact bytes.
	runs := decode[struct {
		Runs []struct {
			ID string `json:"run_id"`
		} `json:"runs"`
	}](t, e.mustRun(0, "history", "-o", "json"))
	id := runs.Runs[0].ID
	st := e.state(id)
	if got := st.States["call"].Output; got != "\x1b]0;pwned\x07\x1b[2J\xff" { // a tool step loses one trailing newline, as a shell step does
		t.Errorf("state file: output = %q", got)
	}
	if got := st.States["fail"].Stderr; got != "\x1b]0;pwned\x07\x1b[2J\xff\n" {
		t.Errorf("state file: stderr = %q", got)
	}
	if !strings.Contains(e.read(".awf/runs/"+id+".yaml"), "output: !!binary ") {
		t.Errorf("state file does not mark the output as binary:\n%s", e.read(".awf/runs/"+id+".yaml"))
	}

	// Reviewers' commands escape always, --output json keeps the text.
	for _, args := range [][]string{{"status", id}, {"audit", "--run", id}, {"history"}} {
		r := e.run(args...)
		assertEscaped(t, "awf "+strings.Join(args, " "), r.stdout+r.stderr)
	}
	status := e.mustRun(0, "status", id)
	if !strings.Contains(status.stdout, hostileEscaped) {
		t.Errorf("awf status does not show the output escaped:\n%s", status.stdout)
	}
	audit := e.mustRun(0, "audit", "--run", id)
	if !strings.Contains(audit.stdout, `pwned\a`) {
		t.Errorf("awf audit does not show the call escaped:\n%s", audit.stdout)
	}
}

// assertEscaped fails when out holds a byte a terminal acts on (other than line feeds, tabs
// and CRs), or a byte that is not UTF-8.
func assertEscaped(t *testing.T, what, out string) {
	t.Helper()
	if strings.Contains(out, "pwned\x07") || strings.Contains(out, "\xff") || strings.Contains(out, "\x1b]") || strings.Contains(out, "\x1b[2J") {
		t.Errorf("%s printed terminal escapes raw:\n%q", what, out)
	}
}

// TestToolsRunEscapes: awf tools run prints a tool's output escaped on a terminal and byte
// for byte to a pipe.
func TestToolsRunEscapes(t *testing.T) {
	e := newEnv(t)
	args := []string{"tools", "run", "shell", "--arg", `command=printf '\033]0;pwned\007\033[2J\377\n'`, "--yes"}
	r := e.mustRun(0, args...)
	if want := "\x1b]0;pwned\x07\x1b[2J\xff\n"; r.stdout != want {
		t.Errorf("to a pipe: stdout = %q, want %q", r.stdout, want)
	}
	p := ptytest.Open(t)
	cmd := e.cmd(t.Context(), args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.Term, p.Term, p.Term
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Run(); err != nil {
		t.Fatalf("awf tools run on a terminal: %v\n%s", err, p.Text())
	}
	screen, _ := p.WaitFor(hostileEscaped, 1)
	assertEscaped(t, "awf tools run on a terminal", screen)
	if !strings.Contains(screen, hostileEscaped) {
		t.Errorf("awf tools run on a terminal does not show the output escaped:\n%q", screen)
	}
}
