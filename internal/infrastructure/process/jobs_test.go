//go:build unix

package process

import (
	"slices"
	"strconv"
	"syscall"
	"testing"
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
