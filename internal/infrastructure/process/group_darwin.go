package process

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// detach makes a child the leader of a new process group, which procGroup.kill kills whole.
// macOS has no parent-death signal: a helper or program still running when awf is killed
// with SIGKILL outlives it (a timeout, Ctrl-C or SIGTERM to awf still kill the group).
func detach(attr *syscall.SysProcAttr) {
	attr.Setpgid = true
}

// waitExited blocks until the process pid has exited, without reaping it: its unreaped pid
// still pins its process group id, which can then be killed safely. macOS has no waitid
// WNOWAIT in Go; a kqueue NOTE_EXIT event says the same. When kqueue fails, the process table
// is polled until pid is a zombie.
func waitExited(pid int) {
	if kqueueExited(pid) {
		return
	}
	for !hasExited(pid) {
		time.Sleep(5 * time.Millisecond)
	}
}

// hasExited reports whether the process pid has exited (is a zombie, or gone), without
// waiting or reaping it.
func hasExited(pid int) bool {
	const zombie = 5 // SZOMB in <sys/proc.h>
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	return err != nil || kp.Proc.P_stat == zombie
}

// withoutCgroup is a copy of attr: macOS has no cgroups.
func withoutCgroup(attr *syscall.SysProcAttr) syscall.SysProcAttr { return *attr }

// kqueueExited waits for pid's NOTE_EXIT event and reports whether it saw pid exit (or find
// it already gone); false means kqueue failed.
func kqueueExited(pid int) bool {
	kq, err := unix.Kqueue()
	if err != nil {
		return false
	}
	defer unix.Close(kq)
	change := []unix.Kevent_t{{Ident: uint64(pid), Filter: unix.EVFILT_PROC,
		Flags: unix.EV_ADD | unix.EV_ONESHOT, Fflags: unix.NOTE_EXIT}}
	events := make([]unix.Kevent_t, 1)
	for {
		n, err := unix.Kevent(kq, change, events, nil)
		switch {
		case err == unix.EINTR:
			change = nil // the filter may be in place: only wait
			continue
		case err == unix.ESRCH:
			return true // exited before the filter was added
		case err != nil || n != 1:
			return false
		case events[0].Flags&unix.EV_ERROR != 0:
			return syscall.Errno(events[0].Data) == unix.ESRCH
		}
		return true
	}
}
