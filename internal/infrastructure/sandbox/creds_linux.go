//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// noNewPrivs sets PR_SET_NO_NEW_PRIVS on every thread: nothing the script executes gains
// privileges from setuid bits or file capabilities.
func noNewPrivs() error {
	if err := llsys.AllThreadsPrctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no-new-privs: %w", err)
	}
	return nil
}

// dropUID makes every thread uid and gid id, with no supplementary groups. Going from root
// to a non-zero uid clears the capabilities. The group list and gid are changed only when
// they are not already what they must be (Prepare starts the helper in group id with no
// others): each change is a call on every thread.
func dropUID(id int) error {
	if groups, err := syscall.Getgroups(); err != nil || len(groups) > 0 {
		if err := syscall.Setgroups([]int{}); err != nil {
			return fmt.Errorf("uid: setgroups: %w", err)
		}
	}
	if rgid, egid, sgid := unix.Getresgid(); rgid != id || egid != id || sgid != id {
		if err := syscall.Setresgid(id, id, id); err != nil {
			return fmt.Errorf("uid: setresgid %d: %w", id, err)
		}
	}
	if err := syscall.Setresuid(id, id, id); err != nil {
		return fmt.Errorf("uid: setresuid %d: %w", id, err)
	}
	// Changing credentials clears the parent-death signal the runner set: set it again, so
	// that the sandbox (and, as its PID namespace's init, everything in it) dies with awf.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("uid: parent-death signal: %w", err)
	}
	return nil
}

// dropCapabilities empties the effective, permitted and inheritable capability sets (and so
// the ambient one) of every thread, in one call: a root that could not drop its uid keeps
// none. Under no_new_privs a program it executes cannot gain any back: the kernel grants an
// execve under no_new_privs no more than the process had. It replaces emptying the bounding
// set, which takes one call per capability, each on every thread.
func dropCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData // all zero
	_, _, e := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
	runtime.KeepAlive(&hdr)
	runtime.KeepAlive(&data)
	if e != 0 {
		return fmt.Errorf("capabilities: drop every capability: %w", e)
	}
	return nil
}

// dropBoundingSet empties the capability bounding set of every thread: programs a root that
// could not drop its uid executes start without capabilities even without no_new_privs.
func dropBoundingSet() error {
	last := 40
	if data, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if err := llsys.AllThreadsPrctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("capabilities: drop %d from the bounding set: %w", c, err)
		}
	}
	return nil
}

// clearAmbient drops the ambient capabilities the helper got to set up its user namespace:
// the programs it executes run without any.
func clearAmbient() error {
	if err := llsys.AllThreadsPrctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("capabilities: clear ambient set: %w", err)
	}
	return nil
}
