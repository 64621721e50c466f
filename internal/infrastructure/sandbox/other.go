//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// NobodyUID is the uid (and gid) a root awf runs scripts as.
const NobodyUID = 65534

// Probe reports what awf can enforce outside Linux: on macOS, whether sandbox-exec applies a
// test profile (checked once per process); elsewhere nothing.
func Probe() Report {
	r := Report{OS: runtime.GOOS, Arch: runtime.GOARCH, UID: syscall.Getuid()}
	r.Root = r.UID == 0
	r.Cgroup.Detail = "Linux only"
	r.Seatbelt = runtime.GOOS == "darwin" && seatbeltWorks()
	r.Layers = r.verdicts()
	return r
}

// seatbeltWorks runs /usr/bin/true under a profile that allows everything, once.
var seatbeltWorks = sync.OnceValue(func() bool {
	return exec.Command(SandboxExec, "-p", "(version 1)(allow default)", "/usr/bin/true").Run() == nil
})

// Launch is one helper's sandbox outside Linux: the spec, and on macOS the Seatbelt profile
// the helper is started under and its private temporary directory.
type Launch struct {
	Spec        *Spec
	SysProcAttr *syscall.SysProcAttr
	Expected    Applied

	profile    *SeatbeltProfile // nil without Seatbelt
	tempDir    string
	removeTemp func() error // deletes tempDir and drops its lock
}

// Wrapper returns how to start the helper under Seatbelt (sandbox-exec with the profile), or
// nil when no profile applies.
func (l *Launch) Wrapper() func(path string, args []string) []string {
	if l.profile == nil {
		return nil
	}
	return l.profile.Argv
}

// ExtraFiles returns nothing outside Linux.
func (l *Launch) ExtraFiles(first int) []*os.File { return nil }

// Enroll does nothing outside Linux, where there is no cgroup.
func (l *Launch) Enroll(pid int) error { return nil }

// Serves returns false: outside Linux no helper has a pid namespace to clean between calls.
func (l *Launch) Serves() bool { return false }

// LimitReached reports nothing outside Linux, where no limit is set.
func (l *Launch) LimitReached() string { return "" }

// Close removes the private temporary directory, once the helper is gone.
func (l *Launch) Close() error {
	if l.removeTemp == nil {
		return nil
	}
	return l.removeTemp()
}

// PrepareIndexed is Prepare: outside Linux the protect index is not used.
func PrepareIndexed(spec *Spec, rep Report, _ *ProtectIndex) (*Launch, error) {
	return Prepare(spec, rep)
}

// Prepare decides the layers of one helper (ExpectOn) and refuses a required one that is
// missing. On macOS with Seatbelt it makes the private temporary directory and generates the
// profile the helper starts under (Wrapper).
func Prepare(spec *Spec, rep Report) (*Launch, error) {
	s := *spec
	s.Plan = &Plan{DropUID: -1}
	a, err := ExpectOn(&s, rep)
	l := &Launch{Spec: &s, SysProcAttr: &syscall.SysProcAttr{}, Expected: a}
	if err != nil || !a.Has(LayerSeatbelt) {
		return l, err
	}
	if err := l.seatbelt(); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// seatbelt makes the temporary directory and the profile.
func (l *Launch) seatbelt() error {
	dir, remove, err := makeTempDir()
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("sandbox: %w", err))
	}
	l.tempDir, l.removeTemp = dir, remove
	l.Spec.Plan.TempDir, l.Spec.Plan.Seatbelt = dir, true
	self, err := os.Executable()
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("sandbox: find awf's executable: %w", err))
	}
	in := SeatbeltInput{Self: self, Resolve: realPath, Matches: func(pattern string) []string {
		m, _ := ProtectMatches([]string{pattern})
		return m
	}}
	if l.Spec.ExecAllowlist {
		set := ResolveExec(l.Spec, os.Getenv("PATH")) // the scripts' PATH comes from awf's
		in.Exec = &set
	}
	prof, err := Seatbelt(l.Spec, in)
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("sandbox: %w", err))
	}
	l.profile = &prof
	return nil
}

// realPath is p with its symbolic links resolved, as Seatbelt matches it; p when that fails.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// Expect says what a helper would get here (ExpectOn); a required layer that is missing is
// refused.
func Expect(spec *Spec, rep Report) (Applied, error) {
	s := *spec
	return ExpectOn(&s, rep)
}

// Enter records what is in force in the helper: Seatbelt when the parent started it through
// sandbox-exec (Plan.Seatbelt), which applied the profile before the helper's first
// instruction, and nothing else; a required layer that is missing is refused.
func Enter(s *Spec) (*Applied, error) {
	if s.Plan == nil {
		return nil, fault.New(fault.System, "sandbox: spec without a plan: Prepare was not called")
	}
	rep := Report{OS: runtime.GOOS, UID: os.Getuid(), Seatbelt: s.Plan.Seatbelt}
	a, err := ExpectOn(s, rep)
	return &a, err
}

// dirKey would identify a state of a directory; outside Linux none is trusted, and every walk
// reads every directory.
type dirKey struct{}

func statDirKey(string) (dirKey, bool) { return dirKey{}, false }

func (dirKey) settled(time.Time) bool { return false }

// dirWatch would tell which directories changed; outside Linux there is none.
type dirWatch struct{}

type watchStamp struct{}

func (watchStamp) watched() bool { return false }

func newDirWatch() *dirWatch                    { return nil }
func (*dirWatch) fresh(string, watchStamp) bool { return false }
func (*dirWatch) add(string) watchStamp         { return watchStamp{} }
func (*dirWatch) drain()                        {}
func (*dirWatch) generation() (uint64, bool)    { return 0, false }
func (*dirWatch) close()                        {}
