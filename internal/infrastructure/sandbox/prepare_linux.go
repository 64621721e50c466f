//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// NobodyUID is the uid (and gid) a root awf runs scripts as.
const NobodyUID = 65534

// Launch is one helper's sandbox, from Prepare: what the process runner sets on the helper's
// exec.Cmd, the Spec it sends the helper, and what Close removes once the helper has exited.
// Not safe for concurrent use.
type Launch struct {
	// Spec is the spec with its Plan filled: send it to the helper, which passes it to Enter.
	Spec *Spec
	// SysProcAttr holds the clone flags, user namespace mappings, credentials, cgroup and
	// parent-death signal of the helper. The runner may add Setpgid; it must not drop fields.
	SysProcAttr *syscall.SysProcAttr
	// Expected is what the helper will apply on this machine, for the audit record.
	Expected Applied

	files   []*os.File // idmapping user namespaces, owned by the cache
	cleanup []func() error
	cg      *cgroup // nil without one
}

// Wrapper returns nil: on Linux the helper sandboxes itself (Enter), no program starts it.
func (l *Launch) Wrapper() func(path string, args []string) []string { return nil }

// ExtraFiles returns the descriptors the helper must inherit, numbered from first (the
// helper's fd of the first one: 3 plus the number of extra files the runner passes before
// them), and records their numbers in Spec. Call it before encoding Spec; append the files to
// exec.Cmd.ExtraFiles after the runner's own. The files stay open after Close: awf reuses them.
func (l *Launch) ExtraFiles(first int) []*os.File {
	for i := range l.Spec.Plan.IDMaps {
		l.Spec.Plan.IDMaps[i].FD = first + i
	}
	return l.files
}

// Serves reports whether the helper of this Launch may serve several calls of its spec, one
// after the other (the process runner's persistent helpers): it is the first process of pid
// and mount namespaces of its own, so it can kill everything a call left behind and nothing
// can leave them, and it has no cgroup, whose counters and memory charge would span calls.
func (l *Launch) Serves() bool {
	p := l.Spec.Plan
	return slices.Contains(p.Namespaces, LayerPIDNS) && slices.Contains(p.Namespaces, LayerMountNS) && p.Cgroup == ""
}

// Close removes the private temporary directory and the cgroup. Call it after the helper has
// been waited for; it is idempotent.
func (l *Launch) Close() error {
	var errs []error
	for i := len(l.cleanup) - 1; i >= 0; i-- {
		errs = append(errs, l.cleanup[i]())
	}
	l.cleanup = nil
	return errors.Join(errs...)
}

// Prepare is PrepareIndexed without an index: it reads every directory it walks.
func Prepare(spec *Spec, rep Report) (*Launch, error) { return PrepareIndexed(spec, rep, nil) }

// PrepareIndexed decides how one helper is sandboxed on the machine rep describes (Probe(),
// or a Without/AsUser copy to simulate a weaker one), finds the protected paths the helper
// must hide (through idx, which re-reads only the directories that changed since its last
// walk; nil reads them all) and creates the helper's private temporary directory and, when
// usable, its cgroup. A layer the spec requires that rep lacks is refused here, before
// anything starts: a *MissingError, fault.Denied. The helper checks the rest.
func PrepareIndexed(spec *Spec, rep Report, idx *ProtectIndex) (*Launch, error) {
	l, err := plan(spec, rep)
	if err != nil {
		return nil, err
	}
	if idx == nil {
		idx = &ProtectIndex{statOnly: true} // one walk: nothing to watch for
	}
	l.Spec.Plan.Protected, l.Spec.Plan.ProtectTruncated = idx.Matches(spec.Dir, spec.Protect)
	if err := l.makeTempDir(l.Spec.Plan); err != nil {
		l.Close()
		return nil, err
	}
	if err := makeWriteDirs(l.Spec); err != nil {
		l.Close()
		return nil, err
	}
	l.makeIDMaps()
	if err := l.makeCgroup(l.Spec, rep); err != nil {
		l.Close()
		return nil, err
	}
	l.expect(l.Spec, rep)
	if err := l.Expected.missing(l.Spec); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Expect says what a helper prepared for spec on the machine rep describes would apply,
// without creating anything: for the policy decision and audit record before a call runs.
// A required layer rep lacks is a *MissingError, as from Prepare.
func Expect(spec *Spec, rep Report) (Applied, error) {
	l, err := plan(spec, rep)
	if err != nil {
		return Applied{}, err
	}
	if rep.Cgroup.Usable && !l.Spec.unavailable(LayerCgroup) && (spec.Limits.Memory > 0 || spec.Limits.PIDs > 0 || spec.Limits.CPU > 0) {
		l.Spec.Plan.Cgroup = filepath.Join(rep.Cgroup.Dir, "awf-*")
	}
	l.expect(l.Spec, rep)
	return l.Expected, l.Expected.missing(l.Spec)
}

// plan decides the namespaces and the uid of a helper.
func plan(spec *Spec, rep Report) (*Launch, error) {
	if err := spec.Validate(); err != nil {
		return nil, fault.Wrap(fault.System, fmt.Errorf("sandbox: %w", err))
	}
	s := *spec
	s.Unavailable = union(spec.Unavailable, rep.Simulated)
	s.Plan = &Plan{DropUID: -1, Root: rep.Root}
	l := &Launch{Spec: &s, SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}}
	l.Expected = Applied{Backend: "clone", UID: rep.UID, LandlockABI: rep.LandlockABI}
	if err := l.planNamespaces(&s, rep); err != nil {
		return nil, err
	}
	return l, nil
}

// planNamespaces sets the clone flags: mount, pid and ipc namespaces always, network when the
// spec has no network; a user namespace when awf is not root. Root drops to NobodyUID when it
// can give that uid the writable paths through idmapped mounts.
func (l *Launch) planNamespaces(s *Spec, rep Report) error {
	plan, attr := s.Plan, l.SysProcAttr
	simulated := !rep.Root && os.Geteuid() == 0 // Report.AsUser: become that user
	if simulated {
		attr.Credential = &syscall.Credential{Uid: uint32(rep.UID), Gid: uint32(rep.UID), Groups: []uint32{}}
	}
	if !rep.Namespaces {
		return nil
	}
	want := []struct {
		layer Layer
		flag  uintptr
	}{
		{LayerMountNS, syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC},
		{LayerPIDNS, syscall.CLONE_NEWPID},
	}
	if s.Network.Mode == NetworkNone || s.Network.Mode == NetworkAllowlist && s.Network.ProxyPort == 0 {
		want = append(want, struct {
			layer Layer
			flag  uintptr
		}{LayerNetNS, syscall.CLONE_NEWNET})
	}
	for _, w := range want {
		if rep.Available(w.layer) && !s.unavailable(w.layer) {
			attr.Cloneflags |= w.flag
			plan.Namespaces = append(plan.Namespaces, w.layer)
		}
	}
	if attr.Cloneflags == 0 {
		return nil
	}
	if rep.Root {
		if rep.Available(LayerUID) && slices.Contains(plan.Namespaces, LayerMountNS) {
			plan.DropUID, plan.IDMap = NobodyUID, true
			// Root, for the mounts, but already in the group it drops to, with no others:
			// the helper then changes its uid only (dropUID), each change being a call on
			// every thread of a Go process.
			attr.Credential = &syscall.Credential{Uid: 0, Gid: NobodyUID, Groups: []uint32{}}
		}
		return nil
	}
	// Not root: the namespaces belong to a new user namespace in which the helper keeps
	// CAP_SYS_ADMIN (ambient) to mount /proc and bind the paths, then drops it.
	attr.Cloneflags |= syscall.CLONE_NEWUSER
	plan.Namespaces = append(plan.Namespaces, LayerUserNS)
	uid, gid := rep.UID, rep.UID
	if !simulated {
		gid = os.Getegid()
	}
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	attr.AmbientCaps = []uintptr{capSysAdmin}
	attr.GidMappingsEnableSetgroups = simulated // only root may; the credential needs it
	return nil
}

// makeWriteDirs creates the writable directories that do not exist yet inside the working
// directory (write: [build/**] before the first build), through os.Root: never through a
// symbolic link, never outside. Writable paths elsewhere are left as they are.
func makeWriteDirs(s *Spec) error {
	var missing []string
	for _, w := range s.Write {
		if w != s.Dir && within(w, s.Dir) {
			if _, err := os.Lstat(w); errors.Is(err, os.ErrNotExist) {
				missing = append(missing, w)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	root, err := os.OpenRoot(s.Dir)
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("sandbox: open working directory: %w", err))
	}
	defer root.Close()
	for _, w := range missing {
		rel, _ := filepath.Rel(s.Dir, w)
		if err := root.MkdirAll(rel, 0o755); err != nil {
			return fault.New(fault.Denied, "sandbox: create writable directory %s: %w", w, err)
		}
	}
	return nil
}

// makeIDMaps gets the user namespaces for the idmapped mounts of the writable paths, one per
// owner, so that the helper need not start a process to make them. One that cannot be made
// is left to the helper, which then keeps root (without capabilities).
func (l *Launch) makeIDMaps() {
	plan := l.Spec.Plan
	if !plan.IDMap {
		return
	}
	for _, w := range l.Spec.Write {
		var st syscall.Stat_t
		if syscall.Stat(w, &st) != nil {
			continue
		}
		uid, gid := int(st.Uid), int(st.Gid)
		if slices.ContainsFunc(plan.IDMaps, func(m IDMap) bool { return m.UID == uid && m.GID == gid }) {
			continue
		}
		ns, err := idmapNamespace(uid, gid, plan.DropUID)
		if err != nil {
			continue
		}
		plan.IDMaps = append(plan.IDMaps, IDMap{UID: uid, GID: gid})
		l.files = append(l.files, ns)
	}
}

// capSysAdmin is CAP_SYS_ADMIN.
const capSysAdmin = 21

// makeTempDir creates the private temporary directory, owned by the uid the script runs as.
func (l *Launch) makeTempDir(plan *Plan) error {
	dir, remove, err := makeTempDir()
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("sandbox: %w", err))
	}
	l.cleanup = append(l.cleanup, remove)
	plan.TempDir = dir
	owner := -1
	switch {
	case plan.DropUID >= 0:
		owner = plan.DropUID
	case l.SysProcAttr.Credential != nil:
		owner = int(l.SysProcAttr.Credential.Uid)
	}
	if owner >= 0 {
		if err := os.Chown(dir, owner, owner); err != nil {
			return fault.Wrap(fault.System, fmt.Errorf("sandbox: private temp dir: %w", err))
		}
	}
	return nil
}

var cgroupSeq atomic.Int64

// makeCgroup creates a cgroup v2 beside awf's own with the spec's limits, and starts the
// helper in it (CLONE_INTO_CGROUP). Without a usable hierarchy it does nothing.
func (l *Launch) makeCgroup(s *Spec, rep Report) error {
	lim := s.Limits
	if !rep.Cgroup.Usable || s.unavailable(LayerCgroup) || lim.Memory == 0 && lim.PIDs == 0 && lim.CPU == 0 {
		return nil
	}
	dir := filepath.Join(rep.Cgroup.Dir, fmt.Sprintf("awf-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	cg, err := createCgroup(dir, lim)
	if err != nil {
		if s.requires(LayerCgroup) {
			return &MissingError{Layer: LayerCgroup, Reason: err.Error()}
		}
		return nil // rlimits stand in
	}
	l.cleanup = append(l.cleanup, cg.remove)
	l.cg = cg
	l.SysProcAttr.UseCgroupFD, l.SysProcAttr.CgroupFD = true, cg.fd
	s.Plan.Cgroup = dir
	return nil
}

// expect fills Expected from the plan and the report.
func (l *Launch) expect(s *Spec, rep Report) {
	e := &l.Expected
	plan := s.Plan
	for _, ns := range []Layer{LayerMountNS, LayerPIDNS, LayerNetNS, LayerUserNS} {
		if slices.Contains(plan.Namespaces, ns) {
			e.add(ns)
		} else {
			e.skip(ns, rep.Status(ns).Detail)
		}
	}
	if !slices.Contains(plan.Namespaces, LayerNetNS) && s.Network.Mode != NetworkNone && s.Network.ProxyPort != 0 {
		e.skip(LayerNetNS, "network "+string(s.Network.Mode)+" uses the host network")
	}
	if s.ExecAllowlist {
		e.Exec = "allowlist: the commands, their loaders and libraries"
	}
	if plan.Cgroup != "" {
		e.add(LayerCgroup)
	} else {
		e.skip(LayerCgroup, rep.Status(LayerCgroup).Detail)
	}
	for _, lay := range []Layer{LayerRlimits, LayerNoNewPrivs, LayerLandlock, LayerSeccomp} {
		switch {
		case s.unavailable(lay):
			e.skip(lay, "simulated: switched off")
		case rep.Available(lay):
			e.add(lay)
		default:
			e.skip(lay, rep.Status(lay).Detail)
		}
	}
	switch {
	case s.Network.Mode == NetworkHost:
		e.skip(LayerLandlockNet, "network: host")
	case rep.Available(LayerLandlockNet) && !s.unavailable(LayerLandlockNet) && !s.unavailable(LayerLandlock):
		e.add(LayerLandlockNet)
	default:
		e.skip(LayerLandlockNet, rep.Status(LayerLandlockNet).Detail)
	}
	switch {
	case plan.DropUID >= 0:
		e.add(LayerUID)
		e.UID = plan.DropUID
	case !rep.Root:
		e.add(LayerUID)
	default:
		e.skip(LayerUID, rep.Status(LayerUID).Detail)
	}
}

func union(a, b []Layer) []Layer {
	out := slices.Clone(a)
	for _, l := range b {
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// itoa is strconv.Itoa, for the cgroup files.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
