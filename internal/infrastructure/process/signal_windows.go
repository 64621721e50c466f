package process

// Windows has no signals: a program can be ended, nothing else. The shell's kill builtin
// therefore ends the program for the signals that would end it (TERM, KILL, INT, HUP and the
// like) and refuses the others with an error that says so; a "group" is the program alone.

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// nonTerminating is empty: Windows defines none of the job control signals.
var nonTerminating []syscall.Signal

// errNoSignals is the refusal of a signal Windows cannot deliver.
var errNoSignals = errors.New("Windows has no signals: kill can only end a program (TERM, KILL, INT)")

// kill ends the program |pid| for a terminating sig; 0 checks that it exists. The children of
// a program are ended with its job object when it exits (procGroup), not here.
func kill(pid int, sig syscall.Signal) error {
	if pid < 0 {
		pid = -pid
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return syscall.ESRCH
	}
	defer p.Release()
	switch sig {
	case 0:
		return nil
	case syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGABRT:
		return p.Kill()
	}
	return fmt.Errorf("signal %d: %w", int(sig), errNoSignals)
}

// getpgid fails: Windows has no process groups that awf can look up.
func getpgid(int) (int, error) {
	return 0, errors.New("no process groups on Windows")
}

// signalNum is the signal named name ("SIGTERM") among those Go defines on Windows, or 0.
func signalNum(name string) syscall.Signal {
	for sig := syscall.Signal(1); sig <= syscall.SIGTERM; sig++ {
		if signalName(sig) == name {
			return sig
		}
	}
	return 0
}

// signalName is sig's name ("SIGTERM").
func signalName(sig syscall.Signal) string {
	names := map[syscall.Signal]string{syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
		syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS",
		syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL", syscall.SIGSEGV: "SIGSEGV", syscall.SIGPIPE: "SIGPIPE",
		syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM"}
	if n, ok := names[sig]; ok {
		return n
	}
	return "SIG" + strings.ToUpper(sig.String())
}
