//go:build unix

package process

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/awf-dev/awf/internal/domain/ports"
)

func TestKillSignal(t *testing.T) {
	for _, c := range []struct {
		args []string
		sig  syscall.Signal
		rest []string
	}{
		{[]string{"%1"}, syscall.SIGTERM, []string{"%1"}},
		{[]string{"-9", "-1"}, syscall.SIGKILL, []string{"-1"}}, // -1 after a signal is a pid
		{[]string{"-1", "5"}, syscall.SIGHUP, []string{"5"}},    // as in bash: a signal first
		{[]string{"-s", "int", "%2"}, syscall.SIGINT, []string{"%2"}},
		{[]string{"-SIGUSR1", "--", "-7"}, syscall.SIGUSR1, []string{"-7"}},
		{[]string{"--", "-1"}, syscall.SIGTERM, []string{"-1"}},
		{[]string{"-0", "%1"}, 0, []string{"%1"}},
	} {
		sig, rest, err := killSignal(c.args)
		if err != nil || sig != c.sig || !slices.Equal(rest, c.rest) {
			t.Errorf("killSignal(%q) = %v %q %v, want %v %q", c.args, sig, rest, err, c.sig, c.rest)
		}
	}
	for _, bad := range [][]string{{"-NOPE", "%1"}, {"-99", "%1"}, {"-s"}} {
		if _, _, err := killSignal(bad); err == nil {
			t.Errorf("killSignal(%q) accepted", bad)
		}
	}
}

// A pid that is not one of the script's programs is never signalled, whatever its value.
func TestKillRefusesForeignPids(t *testing.T) {
	jc := &jobControl{grouped: true, procs: map[int]int{}, jobs: []*job{{procs: map[int]bool{}, done: make(chan struct{})}}}
	for _, target := range []string{"1", "0", "-1", "-2", strconv.Itoa(syscall.Getpid()), strconv.Itoa(syscall.Getppid())} {
		if err := jc.killOne(target, 0); err == nil {
			t.Errorf("kill -0 %s was allowed", target)
		}
	}
}

func TestRewriteJobs(t *testing.T) {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(
		"f() { sleep 1 & echo $!; }\nx=${!name} y=$!\n(a | b) &\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	rewriteJobs(file)
	var out bytes.Buffer
	syntax.NewPrinter().Print(&out, file)
	got := out.String()
	for _, want := range []string{
		"awf:job-new $'sleep 1'", "__awf_job=$__awf_bang", "(sleep 1) || awf:job-done $?", "awf:job-done 0", "echo $__awf_bang",
		"x=${!name} y=$__awf_bang", "awf:job-new $'(a | b)'",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rewritten script lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "awf:job-new") != 2 {
		t.Errorf("each background statement is rewritten once:\n%s", got)
	}
}

// The script's jobs in a shell step: numbering, wait's status, kill of a loop, jobs in eval
// and trap code, a function named kill left alone.
func TestLocalJobControl(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{"sleep 30 & echo $!; kill $!; wait $!; echo $?", "%1\n143\n"},
		{"{ exit 3; } & wait %1; echo $?", "3\n"},
		{"true & false & wait; echo $?; wait %2; echo $?", "0\n1\n"},
		{"while :; do sleep 0.01; done & kill %1; wait %1; echo $?; jobs", "143\n[1] Killed (SIGTERM)     while :; do sleep 0.01; done\n"},
		{"eval 'sleep 30 &'; eval 'kill $!'; wait $!; echo $?", "143\n"},
		{"sleep 30 & trap 'kill $!; echo trapped' EXIT; echo set", "set\ntrapped\n"},
		{"trap -- 'sleep 30 & kill $!; wait $!; echo trapped $?' EXIT; echo set", "set\ntrapped 143\n"},
		{"builtin eval 'sleep 30 &'; command eval 'kill $!'; wait $!; echo $?", "143\n"},
		// The job's text, quoted into the rewritten code that eval parses, stays one word.
		{`eval "echo \"a'; echo injected; 'b\" &"; wait; jobs`, "a'; echo injected; 'b\n[1] Done                 echo \"a'; echo injected; 'b\"\n"},
		{"kill() { echo mine $1; }; kill 1; command kill -0 1; echo $?", "mine 1\n1\n"},
		{"sleep 30 & wait %9; echo $?", "127\n"},
		{"set -e; { false; echo not reached; } & wait $! || echo \"status $?\"; (exit 4) & wait $! || echo \"status $?\"", "status 1\nstatus 4\n"},
	} {
		got, err := NewLocal(Config{}).Run(t.Context(), ports.ProcessRequest{Script: c.script, BaseEnv: MinimalEnv(), Timeout: time.Minute})
		if err != nil || got.Stdout != c.want {
			t.Errorf("%q: stdout %q, err %v, want %q\nstderr: %s", c.script, got.Stdout, err, c.want, got.Stderr)
		}
	}
}
