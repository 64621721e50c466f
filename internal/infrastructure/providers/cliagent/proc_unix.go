//go:build unix

package cliagent

import (
	"os/exec"
	"syscall"
)

// killGroup runs the command in a process group of its own and, when ctx ends, kills the
// whole group: an agent CLI starts helpers that must not outlive it.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
