//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/awf-dev/awf/internal/infrastructure/sandbox/landlock"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox/seccomp"
)

// Probe reports what this machine enforces. It is measured once per process (it starts two
// short-lived children to see whether namespaces can be created) and cached.
func Probe() Report { return probeOnce() }

var probeOnce = sync.OnceValue(probe)

func probe() Report {
	r := Report{OS: runtime.GOOS, Arch: runtime.GOARCH, UID: os.Geteuid()}
	r.Root = r.UID == 0
	var uts unix.Utsname
	if unix.Uname(&uts) == nil {
		r.Kernel = unix.ByteSliceToString(uts.Release[:])
	}
	r.LandlockABI = landlock.ABI()
	r.Seccomp = seccomp.Supported()
	r.UserNS = canClone(syscall.CLONE_NEWUSER, r.Root)
	nsFlags := uintptr(syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC)
	if r.Root {
		r.Namespaces = canClone(nsFlags, true)
	} else {
		r.Namespaces = r.UserNS && canClone(nsFlags|syscall.CLONE_NEWUSER, false)
	}
	r.IDMap = kernelAtLeast(r.Kernel, 5, 12)
	r.Cgroup = probeCgroup()
	r.Layers = r.verdicts()
	return r
}

// canClone reports whether a child can be created with flags, by starting one that fails at
// exec: a missing file means the clone itself worked.
func canClone(flags uintptr, root bool) bool {
	attr := &syscall.SysProcAttr{Cloneflags: flags}
	if flags&syscall.CLONE_NEWUSER != 0 {
		uid, gid := os.Getuid(), os.Getgid()
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = root
	}
	_, err := syscall.ForkExec("/nonexistent/awf-sandbox-probe", []string{"probe"}, &syscall.ProcAttr{Sys: attr})
	return errors.Is(err, syscall.ENOENT)
}

// kernelAtLeast compares a release such as "6.18.44-fc" with major.minor.
func kernelAtLeast(release string, major, minor int) bool {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return false
	}
	maj, err1 := strconv.Atoi(parts[0])
	min, err2 := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return false
	}
	return maj > major || maj == major && min >= minor
}

// probeCgroup finds the cgroup v2 hierarchy and whether awf can create cgroups beside its
// own: the parent cgroup must be writable with memory and pids in its subtree_control.
func probeCgroup() CgroupInfo {
	var ci CgroupInfo
	ci.Mount = cgroup2Mount()
	if ci.Mount == "" {
		ci.Detail = "no cgroup v2 hierarchy mounted"
		return ci
	}
	rel := ownCgroup()
	if rel == "" {
		ci.Detail = "not in a cgroup v2"
		return ci
	}
	ci.Dir = filepath.Join(ci.Mount, filepath.Dir(rel))
	if rel == "/" {
		ci.Dir = ci.Mount
	}
	data, err := os.ReadFile(filepath.Join(ci.Dir, "cgroup.subtree_control"))
	if err != nil {
		ci.Detail = "cannot read " + filepath.Join(ci.Dir, "cgroup.subtree_control")
		return ci
	}
	ci.Controllers = strings.Fields(string(data))
	switch {
	case !slices.Contains(ci.Controllers, "memory") || !slices.Contains(ci.Controllers, "pids"):
		ci.Detail = "memory and pids controllers not delegated to " + ci.Dir
	case unix.Access(ci.Dir, unix.W_OK) != nil:
		ci.Detail = ci.Dir + " is not writable"
	default:
		ci.Usable = true
		ci.Detail = "per-process cgroups in " + ci.Dir
	}
	return ci
}

func cgroup2Mount() string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source superoptions
		fields := strings.Fields(sc.Text())
		i := slices.Index(fields, "-")
		if i > 4 && i+1 < len(fields) && fields[i+1] == "cgroup2" {
			return fields[4]
		}
	}
	return ""
}

func ownCgroup() string {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok {
			return rest
		}
	}
	return ""
}
