//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// ownGroup starts a stdio server in a process group of its own, so that stopping it also
// stops what it started (npx and uvx servers run a child that does the work).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills what is left of the process group led by pid; a group already gone is
// not an error.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
