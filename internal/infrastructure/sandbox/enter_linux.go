//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox/landlock"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox/seccomp"
)

// Enter applies the spec's OS layers to the calling process, for good: mounts, resource
// limits, the uid drop, Landlock (which sets no_new_privs on every thread; without Landlock
// Enter sets it itself) and seccomp, in that order, on every thread.
// The process helper calls it first thing, in the fresh process Prepare's SysProcAttr made,
// before any script code runs; the commands the script starts inherit everything.
//
// A layer this machine lacks is skipped and recorded, unless the spec requires it: then
// Enter returns a *MissingError (fault.Denied) and the helper must not run the script. Any
// other failure is fault.System. The working directory is re-entered through the new mounts.
func Enter(s *Spec) (*Applied, error) {
	if s.Plan == nil {
		return nil, fault.New(fault.System, "sandbox: spec without a plan: Prepare was not called")
	}
	e := &enter{spec: s, plan: s.Plan, a: &Applied{Backend: "clone", UID: os.Geteuid()}}
	paths, err := openPaths(s)
	if err != nil {
		return e.a, err
	}
	defer paths.close()
	e.paths = paths
	for _, step := range []func() error{e.namespaces, e.rlimits, e.credentials, e.landlock, e.noNewPrivs, e.capabilities, e.seccomp} {
		if err := step(); err != nil {
			return e.a, err
		}
	}
	return e.a, e.a.missing(s)
}

type enter struct {
	spec *Spec
	plan *Plan
	a    *Applied
	m    *mounts
	// paths are the spec's paths, opened and checked once.
	paths *openedPaths
	// dropCaps says root keeps its uid: every capability goes once no_new_privs is set.
	dropCaps bool
}

func (e *enter) in(ns Layer) bool { return slices.Contains(e.plan.Namespaces, ns) }

func (e *enter) namespaces() error {
	if e.in(LayerPIDNS) && os.Getpid() != 1 {
		return fault.New(fault.System, "sandbox: helper is not the first process of a new pid namespace (pid %d)", os.Getpid())
	}
	for _, ns := range []Layer{LayerMountNS, LayerPIDNS, LayerNetNS, LayerUserNS} {
		if e.in(ns) {
			e.a.add(ns)
		} else {
			e.a.skip(ns, "not created for this helper")
		}
	}
	if e.plan.Cgroup != "" {
		e.a.add(LayerCgroup)
	} else {
		e.a.skip(LayerCgroup, "no usable cgroup v2 (rlimits stand in)")
	}
	if !e.in(LayerMountNS) {
		return nil
	}
	e.m = &mounts{spec: e.spec, paths: e.paths, idmap: e.plan.IDMap && e.plan.DropUID >= 0, exec: e.spec.Executable}
	err := e.m.setup(e.in(LayerPIDNS))
	e.a.Notes = append(e.a.Notes, e.m.notes...)
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("sandbox: %w", err))
	}
	return nil
}

// willDrop says the helper switches to DropUID: it was planned, and the writable paths got
// their idmapping (without it the dropped uid could not write them).
func (e *enter) willDrop() bool {
	return e.plan.DropUID >= 0 && os.Geteuid() == 0 && (e.m == nil || e.m.idmapped)
}

func (e *enter) rlimits() error {
	if e.spec.unavailable(LayerRlimits) {
		e.a.skip(LayerRlimits, "simulated: switched off")
		return nil
	}
	if err := setRlimits(e.spec.Limits, e.willDrop() || os.Geteuid() != 0); err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("sandbox: %w", err))
	}
	e.a.add(LayerRlimits)
	return nil
}

// noNewPrivs sets no_new_privs on every thread, unless Landlock already has.
func (e *enter) noNewPrivs() error {
	if e.spec.unavailable(LayerNoNewPrivs) {
		e.a.skip(LayerNoNewPrivs, "simulated: switched off")
		return nil
	}
	if e.a.Has(LayerNoNewPrivs) {
		return nil
	}
	if err := noNewPrivs(); err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("sandbox: %w", err))
	}
	e.a.add(LayerNoNewPrivs)
	return nil
}

func (e *enter) credentials() error {
	switch {
	case e.willDrop():
		if err := dropUID(e.plan.DropUID); err != nil {
			return fault.Wrap(fault.System, fmt.Errorf("sandbox: %w", err))
		}
		e.a.UID = e.plan.DropUID
		e.a.add(LayerUID)
	case os.Geteuid() != 0:
		e.a.add(LayerUID)
	default:
		why := "root could not drop its uid: no idmapped mount (needs a mount and a user namespace)"
		if e.m != nil && e.m.idmapErr != nil {
			why = "root could not drop its uid: " + e.m.idmapErr.Error()
		}
		e.a.skip(LayerUID, why+"; programs run as root without capabilities")
		if !e.spec.unavailable(LayerNoNewPrivs) {
			e.dropCaps = true // e.capabilities, after no_new_privs
			break
		}
		// Without no_new_privs an execve by root regains what the bounding set holds.
		if err := dropBoundingSet(); err != nil {
			return fault.Wrap(fault.System, fmt.Errorf("sandbox: %w", err))
		}
	}
	if e.in(LayerUserNS) {
		if err := clearAmbient(); err != nil {
			return fault.Wrap(fault.System, fmt.Errorf("sandbox: %w", err))
		}
	}
	return nil
}

// landlockRules are the paths and ports of the spec, plus the temp dir, the devices, and
// /proc when it is the pid namespace's own.
func (e *enter) landlockRules() landlock.Rules {
	write := slices.Clone(e.spec.Write)
	if e.plan.TempDir != "" {
		write = append(write, e.plan.TempDir)
	}
	r := landlock.Rules{
		Read:         e.paths.landlockPaths(e.spec.Read),
		Write:        append(e.paths.landlockPaths(write), Devices...),
		RestrictNet:  e.spec.Network.Mode != NetworkHost,
		RestrictExec: e.spec.ExecAllowlist,
	}
	if x := e.spec.Executable; x != nil {
		r.Exec = x.Programs
		e.a.Exec = fmt.Sprintf("allowlist: %d programs, %d libraries", len(x.Programs), len(x.Libraries))
	}
	if e.m != nil && e.m.procMounted {
		r.Read = append(r.Read, "/proc")
	}
	if n := e.spec.Network; n.Mode == NetworkAllowlist && n.ProxyPort > 0 {
		r.ConnectTCP = []uint16{uint16(n.ProxyPort)}
	}
	return r
}

func (e *enter) landlock() error {
	if e.spec.unavailable(LayerLandlock) {
		e.a.skip(LayerLandlock, "simulated: switched off")
		e.a.skip(LayerLandlockNet, "simulated: Landlock switched off")
		return nil
	}
	rules := e.landlockRules()
	if e.spec.unavailable(LayerLandlockNet) {
		rules.RestrictNet, rules.ConnectTCP = false, nil
	}
	res, err := landlock.Apply(rules)
	switch {
	case errors.Is(err, landlock.ErrUnsupported):
		e.a.skip(LayerLandlock, "the kernel has no Landlock")
		e.a.skip(LayerLandlockNet, "the kernel has no Landlock")
		return nil
	case err != nil:
		return fault.Wrap(fault.System, fmt.Errorf("sandbox: %w", err))
	}
	e.a.LandlockABI = res.ABI
	progs, err := landlock.NewPrograms()
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("sandbox: %w", err))
	}
	programs.Store(progs)
	e.a.add(LayerLandlock)
	if !e.spec.unavailable(LayerNoNewPrivs) {
		e.a.add(LayerNoNewPrivs) // go-landlock set it on every thread
	}
	switch {
	case res.Net:
		e.a.add(LayerLandlockNet)
	case !rules.RestrictNet:
		e.a.skip(LayerLandlockNet, "network: host, or switched off")
	default:
		e.a.skip(LayerLandlockNet, fmt.Sprintf("Landlock ABI %d has no TCP rules (needs 4)", res.ABI))
	}
	return nil
}

// capabilities drops every capability of a root that keeps its uid, now that no_new_privs is
// set (credentials decided it).
func (e *enter) capabilities() error {
	if !e.dropCaps {
		return nil
	}
	if err := dropCapabilities(); err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("sandbox: %w", err))
	}
	return nil
}

func (e *enter) seccomp() error {
	switch {
	case e.spec.unavailable(LayerSeccomp):
		e.a.skip(LayerSeccomp, "simulated: switched off")
		return nil
	case !seccomp.Supported():
		e.a.skip(LayerSeccomp, "no seccomp filter support for this kernel or architecture")
		return nil
	}
	if err := seccomp.Install(seccomp.Options{AllowInet: e.spec.Network.Mode == NetworkHost, DenyMemfd: e.spec.ExecAllowlist}); err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("sandbox: %w", err))
	}
	e.a.add(LayerSeccomp)
	return nil
}
