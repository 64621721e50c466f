//go:build linux && !amd64 && !arm64

package seccomp

const (
	auditArch = 0
	x32Bit    = 0
	supported = false
)

var archDenied = []uint32{}
