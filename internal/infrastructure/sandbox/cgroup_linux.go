//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cgroup is a cgroup v2 directory made for one helper.
type cgroup struct {
	dir string
	fd  int // open directory, for CLONE_INTO_CGROUP
}

// createCgroup makes dir with memory.max (and no swap), pids.max and cpu.max from lim.
func createCgroup(dir string, lim Limits) (*cgroup, error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	cg := &cgroup{dir: dir, fd: -1}
	files := map[string]string{}
	if lim.Memory > 0 {
		files["memory.max"] = itoa(lim.Memory)
		files["memory.swap.max"] = "0"
	}
	if lim.PIDs > 0 {
		files["pids.max"] = itoa(int64(lim.PIDs))
	}
	if lim.CPU > 0 {
		const period = 100000
		files["cpu.max"] = fmt.Sprintf("%d %d", int64(lim.CPU*period), period)
	}
	for name, value := range files {
		err := os.WriteFile(filepath.Join(dir, name), []byte(value), 0)
		if err != nil && !(name == "memory.swap.max" && errors.Is(err, os.ErrNotExist)) {
			cg.remove()
			return nil, fmt.Errorf("cgroup: set %s: %w", name, err)
		}
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		cg.remove()
		return nil, fmt.Errorf("cgroup: open %s: %w", dir, err)
	}
	cg.fd = fd
	return cg, nil
}

// Enroll moves the process pid, a helper started before this Launch was prepared, into the
// Launch's cgroup, as CLONE_INTO_CGROUP does for a helper started with SysProcAttr. Call it
// before the helper gets its request. Without a cgroup it does nothing.
func (l *Launch) Enroll(pid int) error {
	if l.cg == nil {
		return nil
	}
	if err := os.WriteFile(filepath.Join(l.cg.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		return fmt.Errorf("cgroup: move the helper into %s: %w", l.cg.dir, err)
	}
	return nil
}

// LimitReached names the resource whose cgroup limit stopped something in the helper's cgroup
// (ResourceMemory when the OOM killer killed a process, ResourcePIDs when a fork was refused),
// or "" when none did or there is no cgroup. Call it after the helper exits, before Close.
func (l *Launch) LimitReached() string {
	if l.cg == nil {
		return ""
	}
	switch {
	case eventCount(filepath.Join(l.cg.dir, "memory.events"), "oom_kill") > 0:
		return ResourceMemory
	case eventCount(filepath.Join(l.cg.dir, "pids.events"), "max") > 0:
		return ResourcePIDs
	}
	return ""
}

// eventCount reads one counter of a cgroup events file ("oom_kill 2"); 0 when it cannot.
func eventCount(file, key string) int64 {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), key+" "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// remove kills whatever is left in the cgroup and removes it. The helper's pid namespace
// normally leaves nothing; cgroup.kill (Linux 5.14) covers the rest.
func (cg *cgroup) remove() error {
	if cg.fd >= 0 {
		unix.Close(cg.fd)
		cg.fd = -1
	}
	var err error
	for delay := time.Millisecond; delay < 500*time.Millisecond; delay *= 2 {
		if err = unix.Rmdir(cg.dir); err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		os.WriteFile(filepath.Join(cg.dir, "cgroup.kill"), []byte("1"), 0)
		time.Sleep(delay)
	}
	return fmt.Errorf("cgroup: remove %s: %w", cg.dir, err)
}
