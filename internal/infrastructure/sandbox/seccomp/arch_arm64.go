//go:build linux && arm64

package seccomp

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_AARCH64
	x32Bit    = 0
	supported = true
)

var archDenied = []uint32{}
