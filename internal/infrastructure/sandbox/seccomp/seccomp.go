//go:build linux

// Package seccomp builds and installs the seccomp filter of awf's sandboxed processes. It
// closes what Landlock and the namespaces leave open (SECURITY-NOTES): UDP, raw and MPTCP
// sockets, io_uring (which would bypass every socket check), and it refuses the calls that
// widen a sandbox or attack the kernel: new namespaces, mounts, ptrace, keyrings, BPF,
// userfaultfd, TIOCSTI. Refused calls fail with EPERM (clone3 with ENOSYS, so that libc falls
// back to clone, whose flags the filter can see); nothing is killed.
package seccomp

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Options selects what the filter allows.
type Options struct {
	// AllowInet lets processes open any AF_INET and AF_INET6 socket (host network). Without
	// it only TCP stream sockets are allowed: no UDP, no raw sockets, no MPTCP, no SCTP.
	AllowInet bool
	// DenyMemfd refuses memfd_create: under an exec allowlist an anonymous memory file is
	// the one executable file no mount flag or Landlock rule governs.
	DenyMemfd bool
}

// Offsets in struct seccomp_data (little-endian: the low word of each argument first).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
)

func offArg(i uint32) uint32 { return offArg0 + 8*i }

// Socket and clone constants the filter compares against.
const (
	sockTypeMask = 0xf
	nsFlags      = unix.CLONE_NEWNS | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
		unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWCGROUP
)

// denied are refused with EPERM on every architecture.
var denied = []uint32{
	// io_uring performs socket, open and other calls the filter never sees.
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	// Common kernel exploit aids, useless to build tools.
	unix.SYS_USERFAULTFD, unix.SYS_PERF_EVENT_OPEN, unix.SYS_BPF,
	unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_KEYCTL,
	// Reading or writing other processes' memory.
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
	// Leaving or reshaping the namespaces (clone's flags are checked below).
	unix.SYS_UNSHARE, unix.SYS_SETNS,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE,
	unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	// What only root could do, refused even when the uid could not be dropped.
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE,
	unix.SYS_DELETE_MODULE, unix.SYS_REBOOT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_ACCT,
	unix.SYS_OPEN_BY_HANDLE_AT,
}

func errno(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e)&unix.SECCOMP_RET_DATA }

// Program returns the filter for this architecture.
func Program(opts Options) ([]unix.SockFilter, error) {
	if !supported {
		return nil, fmt.Errorf("seccomp: no filter for %s", runtime.GOARCH)
	}
	a := newAsm()
	a.load(offArch)
	a.jeq(auditArch, "", "eperm") // another ABI (i386 through int 0x80) would renumber calls
	a.load(offNr)
	if x32Bit != 0 {
		a.jge(x32Bit, "eperm", "")
	}
	a.jeq(unix.SYS_SOCKET, "socket", "")
	a.jeq(unix.SYS_SOCKETPAIR, "socketpair", "")
	a.jeq(unix.SYS_CLONE, "clone", "")
	a.jeq(unix.SYS_CLONE3, "enosys", "")
	a.jeq(unix.SYS_IOCTL, "ioctl", "")
	for _, nr := range append(denied, archDenied...) {
		a.jeq(nr, "eperm", "")
	}
	if opts.DenyMemfd {
		a.jeq(unix.SYS_MEMFD_CREATE, "eperm", "")
	}
	a.ret(unix.SECCOMP_RET_ALLOW)

	a.label("socket")
	a.load(offArg(0))
	a.jeq(unix.AF_UNIX, "allow", "")
	a.jeq(unix.AF_NETLINK, "allow", "")
	a.jeq(unix.AF_INET, "inet", "")
	a.jeq(unix.AF_INET6, "inet", "eperm") // packet, vsock, bluetooth, alg...: refused

	a.label("inet")
	if opts.AllowInet {
		a.ret(unix.SECCOMP_RET_ALLOW)
	} else {
		a.load(offArg(1))
		a.and(sockTypeMask) // without SOCK_NONBLOCK and SOCK_CLOEXEC
		a.jeq(unix.SOCK_STREAM, "", "eperm")
		a.load(offArg(2))
		a.jeq(0, "allow", "")
		a.jeq(unix.IPPROTO_TCP, "allow", "eperm") // IPPROTO_MPTCP and SCTP refused
	}

	a.label("socketpair")
	a.load(offArg(0))
	a.jeq(unix.AF_UNIX, "allow", "eperm")

	a.label("clone")
	a.load(offArg(0)) // the flags (amd64 and arm64 order)
	a.jset(nsFlags, "eperm", "allow")

	a.label("ioctl")
	a.load(offArg(1)) // the request, an unsigned int for the kernel
	a.jeq(unix.TIOCSTI, "eperm", "")
	a.jeq(unix.TIOCLINUX, "eperm", "allow")

	a.label("allow")
	a.ret(unix.SECCOMP_RET_ALLOW)
	a.label("eperm")
	a.ret(errno(unix.EPERM))
	a.label("enosys")
	a.ret(errno(unix.ENOSYS))
	return a.assemble()
}

// Supported reports whether this kernel and architecture take the filter.
func Supported() bool {
	if !supported {
		return false
	}
	action := uint32(unix.SECCOMP_RET_ERRNO)
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
	return e == 0
}

// Install installs the filter on every thread of the process (SECCOMP_FILTER_FLAG_TSYNC), so
// that whatever thread later forks a command passes it on. no_new_privs must already be set
// (or the caller must hold CAP_SYS_ADMIN); TSYNC sets it on the other threads. Irreversible.
func Install(opts Options) error {
	prog, err := Program(opts)
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	tid, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	switch {
	case e != 0:
		return fmt.Errorf("seccomp: install filter: %w", e)
	case tid != 0:
		return fmt.Errorf("seccomp: install filter: thread %d could not be synchronised", tid)
	}
	return nil
}
