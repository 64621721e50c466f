package process

import (
	"errors"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// detach makes a child the leader of a new process group, which procGroup.kill kills whole,
// and gives it SIGKILL when awf dies (kill -9 included). The helper in a sandbox is its PID
// namespace's init, so everything the tool started goes too; without one, a child that left
// the helper's process group may survive.
func detach(attr *syscall.SysProcAttr) {
	attr.Setpgid = true
	attr.Pdeathsig = syscall.SIGKILL
}

// waitExited blocks until the process pid has exited, without reaping it (waitid WNOWAIT):
// its unreaped pid still pins its process group id, which can then be killed safely.
func waitExited(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}

func init() { pidNamespaces.Store(os.Geteuid() == 0) }

// startDetached starts cmd so that it and everything it starts die with awf, whatever kills
// awf (kill -9 included, when nothing in awf runs any more): the program is the leader of its
// own process group, gets SIGKILL when awf dies (parent-death signal) and, where awf may create
// one (root), is the first process of a new PID namespace, so that its death kills every
// process below it, setsid ones included. Without a PID namespace a descendant of a program
// still running when awf is killed outlives it (the parent-death signal is not inherited).
func startDetached(newCmd func() *exec.Cmd) (*exec.Cmd, procGroup, error) {
	cmd := newCmd()
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	detach(cmd.SysProcAttr)
	if !pidNamespaces.Load() {
		return started(cmd, cmd.Start())
	}
	cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWPID
	err := cmd.Start()
	if !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOSPC) {
		return started(cmd, err)
	}
	pidNamespaces.Store(false) // not allowed here (a container, a seccomp profile)
	return startDetached(newCmd)
}

// started is the group of cmd once started, or err.
func started(cmd *exec.Cmd, err error) (*exec.Cmd, procGroup, error) {
	if err != nil {
		return cmd, procGroup{}, err
	}
	g, err := newProcGroup(cmd.Process)
	return cmd, g, err
}

// withoutCgroup is attr without its cgroup, which a helper started ahead joins later.
func withoutCgroup(attr *syscall.SysProcAttr) syscall.SysProcAttr {
	a := *attr
	a.UseCgroupFD, a.CgroupFD = false, 0
	return a
}

// hasExited reports whether the process pid has exited, without waiting or reaping it.
func hasExited(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err != nil || info.Signo != 0
}
