//go:build linux && amd64

package seccomp

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_X86_64
	// x32Bit marks x32-ABI syscall numbers, which run on the same audit arch: the filter
	// refuses them rather than matching every number twice.
	x32Bit    = 0x40000000
	supported = true
)

// archDenied are the syscalls only this architecture has.
var archDenied = []uint32{unix.SYS_IOPL, unix.SYS_IOPERM}
