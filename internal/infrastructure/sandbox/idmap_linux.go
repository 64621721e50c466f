//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// idmapUserns are the user namespaces made so far, by on-disk owner and target uid: making
// one costs a process, so awf makes each once and keeps it open.
var idmapUserns sync.Map // [3]int{uid, gid, to} -> *os.File

// idmapNamespace returns a user namespace mapping uid:gid to to:to.
func idmapNamespace(uid, gid, to int) (*os.File, error) {
	key := [3]int{uid, gid, to}
	if f, ok := idmapUserns.Load(key); ok {
		return f.(*os.File), nil
	}
	f, err := newIDMapNamespace(uid, gid, to)
	if err != nil {
		return nil, err
	}
	if prev, loaded := idmapUserns.LoadOrStore(key, f); loaded {
		f.Close()
		return prev.(*os.File), nil
	}
	return f, nil
}

// newIDMapNamespace makes the namespace with a child stopped before it runs anything (ptrace
// stops it at its exec); the namespace stays reachable through the open file once the child
// is gone.
func newIDMapNamespace(uid, gid, to int) (*os.File, error) {
	cmd := exec.Command("/proc/self/exe")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: to, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: to, Size: 1}},
		Ptrace:      true,
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("user namespace for an idmapped mount: %w", err)
	}
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/user", cmd.Process.Pid))
	cmd.Process.Kill()
	cmd.Wait()
	if err != nil {
		return nil, fmt.Errorf("user namespace for an idmapped mount: %w", err)
	}
	return ns, nil
}
