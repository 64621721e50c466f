//go:build !linux

package process

import (
	"os/exec"
	"syscall"
)

// startDetached starts cmd in a group of its own (detach, newProcGroup): a process group it
// leads on macOS, a job object on Windows, so that a timeout or Ctrl-C kills it and what it
// started. On macOS a descendant that left the group (setsid), and everything when awf is
// killed with SIGKILL, outlive it: macOS has neither PID namespaces nor a parent-death
// signal. On Windows the job dies with awf. A program that cannot join its group is killed
// and the start is an error.
func startDetached(newCmd func() *exec.Cmd) (*exec.Cmd, procGroup, error) {
	cmd := newCmd()
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	detach(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		return cmd, procGroup{}, err
	}
	g, err := newProcGroup(cmd.Process)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
	}
	return cmd, g, err
}
