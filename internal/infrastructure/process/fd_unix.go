//go:build unix

package process

// Descriptors on Unix: the helper inherits its request and status pipes as fds 3 and 4
// (exec.Cmd.ExtraFiles), and the Go runtime's crash output is moved onto the status pipe.

import (
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// passFiles gives the child files as descriptors 3, 4, and so on, in order.
func passFiles(cmd *exec.Cmd, files []*os.File) {
	cmd.ExtraFiles = append(cmd.ExtraFiles, files...)
}

// inheritedFile is descriptor fd, which passFiles gave this process.
func inheritedFile(fd int, name string) *os.File {
	return os.NewFile(uintptr(fd), name)
}

// separateRuntimeOutput points the helper's fd 2, where the Go runtime writes a fatal error,
// at the status pipe, and makes os.Stderr (the script's stderr, and the helper's own messages)
// a close-on-exec copy of the stderr the parent gave. Commands get os.Stderr as their fd 2.
// On failure fd 2 stays as it was: a crash then shows as before, on the script's stderr.
func separateRuntimeOutput() {
	fd, err := unix.FcntlInt(2, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return
	}
	if dupTo(statusFD, 2, true) != nil {
		unix.Close(fd)
		return
	}
	runtimeOutput = os.Stderr
	os.Stderr = os.NewFile(uintptr(fd), "/dev/stderr")
}

// runtimeOutput keeps the *os.File of fd 2 reachable once os.Stderr no longer is it: its
// finalizer would close fd 2, and a persistent helper would then reuse the number for a
// call's descriptor.
var runtimeOutput *os.File
