package process

// Descriptors on Windows: there are no numbered descriptors beyond the standard three, so the
// helper's request and status pipes are passed as inheritable handles whose values travel in
// the environment (handlesEnv), and only the handles listed are inherited.

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// handlesEnv lists, comma-separated, the handles passFiles gave the helper, in the order of
// the descriptors they stand for (3, 4, ...).
const handlesEnv = "AWF_HELPER_HANDLES"

// passFiles makes files inheritable by the child and tells it their handle values; call it
// after cmd.Env and cmd.SysProcAttr are set.
func passFiles(cmd *exec.Cmd, files []*os.File) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	values := make([]string, len(files))
	for i, f := range files {
		h := syscall.Handle(f.Fd())
		cmd.SysProcAttr.AdditionalInheritedHandles = append(cmd.SysProcAttr.AdditionalInheritedHandles, h)
		values[i] = strconv.FormatUint(uint64(h), 10)
	}
	cmd.Env = append(cmd.Env, handlesEnv+"="+strings.Join(values, ","))
}

// inheritedFile is the file passFiles gave this process in place of descriptor fd, or nil.
func inheritedFile(fd int, name string) *os.File {
	values := strings.Split(os.Getenv(handlesEnv), ",")
	i := fd - requestFD
	if i < 0 || i >= len(values) {
		return nil
	}
	h, err := strconv.ParseUint(values[i], 10, 64)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(h), name)
}

// closeOnExecFrom has nothing to do on Windows: a child inherits only the handles its
// exec.Cmd lists (Go starts processes with an explicit handle list).
func closeOnExecFrom(int) {}

// separateRuntimeOutput leaves the Go runtime's crash output on the script's stderr on
// Windows: awf sets no resource limit there, so no crash is a limit to be told apart.
func separateRuntimeOutput() {}
