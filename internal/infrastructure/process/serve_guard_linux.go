//go:build linux

package process

// [sandbox] What a call's programs can change in their persistent helper without ptrace or
// signals. The helper runs with their uid, and the kernel lets a process of the same uid
// lower another's resource limits (prlimit), raise its nice value, set its scheduling policy,
// CPU affinity and I/O priority (setpriority, sched_setscheduler, sched_setattr,
// sched_setaffinity, ioprio_set, also for a whole uid at once) without regard to its
// dumpable flag. The next call's programs would inherit them from the helper: a call could
// cap the next one's file size or descriptors, or starve it. The helper takes these at its
// start and, after each call, compares every one of its threads with them: a helper that
// differs is not used again.

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// rlimitCount is RLIM_NLIMITS: the resources getrlimit knows.
const rlimitCount = 16

// helperState is what a program of the helper's uid can change in the helper.
type helperState struct {
	limits   [rlimitCount]unix.Rlimit // per process
	sched    unix.SchedAttr           // per thread: policy, nice, priority, clamps
	affinity unix.CPUSet              // per thread
	ioprio   uintptr                  // per thread
}

// takeHelperState reads the state of thread tid (0: the calling thread) and the limits.
func takeHelperState(tid int) (helperState, error) {
	var st helperState
	for r := range rlimitCount {
		if err := unix.Getrlimit(r, &st.limits[r]); err != nil {
			return st, err
		}
	}
	attr, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return st, err
	}
	st.sched = *attr
	if err := unix.SchedGetaffinity(tid, &st.affinity); err != nil {
		return st, err
	}
	const ioprioWhoProcess = 1
	who := tid
	if who == 0 {
		who = unix.Gettid()
	}
	prio, _, e := unix.Syscall(unix.SYS_IOPRIO_GET, ioprioWhoProcess, uintptr(who), 0)
	if e != 0 {
		return st, e
	}
	st.ioprio = prio
	return st, nil
}

// helperUnchanged says whether every thread of the helper still has the state base.
func helperUnchanged(base helperState) bool {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return false
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			return false
		}
		st, err := takeHelperState(tid)
		if err == unix.ESRCH {
			continue // the thread ended
		}
		if err != nil || st != base {
			return false
		}
	}
	return true
}

// tempDirIntact says whether the private temporary directory, once emptied, is as the sandbox
// made it: mode 0700 (os.MkdirTemp) and no extended attribute a call set (a default ACL
// would decide the modes of the next call's files; user.* ones would carry data). A call can
// change both, owning it; the parent, not the helper, empties it, so it checks them too. The
// security.* attributes are the system's (SELinux labels), not the call's.
func tempDirIntact(dir string) bool {
	if dir == "" {
		return true
	}
	fi, err := os.Lstat(dir)
	if err != nil || fi.Mode() != os.ModeDir|0o700 {
		return false
	}
	buf := make([]byte, 4096)
	n, err := unix.Llistxattr(dir, buf)
	if err == unix.ENOTSUP {
		return true
	}
	if err != nil {
		return false
	}
	for _, name := range strings.Split(string(buf[:n]), "\x00") {
		if name != "" && !strings.HasPrefix(name, "security.") {
			return false
		}
	}
	return true
}
