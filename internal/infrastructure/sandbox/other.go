//go:build !linux

package sandbox

import (
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// NobodyUID is the uid (and gid) a root awf runs scripts as.
const NobodyUID = 65534

// Probe reports that no OS layer exists outside Linux.
func Probe() Report {
	r := Report{OS: runtime.GOOS, Arch: runtime.GOARCH, UID: syscall.Getuid()}
	r.Root = r.UID == 0
	r.Cgroup.Detail = "Linux only"
	r.Layers = r.verdicts()
	return r
}

// Launch is one helper's sandbox; outside Linux it holds the spec only.
type Launch struct {
	Spec        *Spec
	SysProcAttr *syscall.SysProcAttr
	Expected    Applied
}

// Wrap returns the helper's path and arguments unchanged.
func (l *Launch) Wrap(path string, args []string) (string, []string) { return path, args }

// ExtraFiles returns nothing outside Linux.
func (l *Launch) ExtraFiles(first int) []*os.File { return nil }

// Enroll does nothing outside Linux, where there is no cgroup.
func (l *Launch) Enroll(pid int) error { return nil }

// LimitReached reports nothing outside Linux, where no limit is set.
func (l *Launch) LimitReached() string { return "" }

// Close does nothing outside Linux.
func (l *Launch) Close() error { return nil }

// PrepareIndexed is Prepare: outside Linux nothing is hidden.
func PrepareIndexed(spec *Spec, rep Report, _ *ProtectIndex) (*Launch, error) {
	return Prepare(spec, rep)
}

// Prepare refuses a spec with required layers outside Linux, and plans nothing otherwise.
func Prepare(spec *Spec, rep Report) (*Launch, error) {
	s := *spec
	s.Plan = &Plan{DropUID: -1}
	l := &Launch{Spec: &s, SysProcAttr: &syscall.SysProcAttr{}, Expected: Applied{Backend: "none", UID: rep.UID}}
	for _, layer := range Layers() {
		l.Expected.skip(layer, "only on Linux")
	}
	return l, l.Expected.missing(&s)
}

// Expect says that nothing would be applied outside Linux; a required layer is refused.
func Expect(spec *Spec, rep Report) (Applied, error) {
	l, err := Prepare(spec, rep)
	if l == nil {
		return Applied{}, err
	}
	return l.Expected, err
}

// Enter applies nothing outside Linux; a required layer is refused.
func Enter(s *Spec) (*Applied, error) {
	if s.Plan == nil {
		return nil, fault.New(fault.System, "sandbox: spec without a plan: Prepare was not called")
	}
	a := &Applied{Backend: "none"}
	for _, layer := range Layers() {
		a.skip(layer, "only on Linux")
	}
	return a, a.missing(s)
}

// dirKey would identify a state of a directory; outside Linux none is trusted, and every walk
// reads every directory.
type dirKey struct{}

func statDirKey(string) (dirKey, bool) { return dirKey{}, false }

func (dirKey) settled(time.Time) bool { return false }
