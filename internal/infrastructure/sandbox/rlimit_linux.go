//go:build linux

package sandbox

import (
	"fmt"
	"syscall"
)

// helperThreads is added to the pids limit: RLIMIT_NPROC counts threads, and the helper's Go
// runtime has a few of its own.
const helperThreads = 32

// rlimitNPROC is RLIMIT_NPROC, which package syscall does not name.
const rlimitNPROC = 6

// setRlimits lowers the resource limits of the helper, which its commands inherit. It never
// raises a limit. nproc says whether to set RLIMIT_NPROC, which the kernel ignores for root.
func setRlimits(lim Limits, nproc bool) error {
	set := func(name string, res int, v uint64) error {
		var cur syscall.Rlimit
		if err := syscall.Getrlimit(res, &cur); err != nil {
			return fmt.Errorf("rlimits: get %s: %w", name, err)
		}
		v = min(v, cur.Max)
		if err := syscall.Setrlimit(res, &syscall.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("rlimits: set %s to %d: %w", name, v, err)
		}
		return nil
	}
	if err := set("core", syscall.RLIMIT_CORE, 0); err != nil {
		return err
	}
	limits := []struct {
		name string
		res  int
		v    int64
	}{
		{"nofile", syscall.RLIMIT_NOFILE, int64(lim.NoFile)},
		{"fsize", syscall.RLIMIT_FSIZE, lim.FileSize},
		{"data", syscall.RLIMIT_DATA, lim.Memory},
	}
	if nproc && lim.PIDs > 0 {
		limits = append(limits, struct {
			name string
			res  int
			v    int64
		}{"nproc", rlimitNPROC, int64(lim.PIDs + helperThreads)})
	}
	for _, l := range limits {
		if l.v > 0 {
			if err := set(l.name, l.res, uint64(l.v)); err != nil {
				return err
			}
		}
	}
	return nil
}
