package container

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/container/engine"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox"
)

// layout is the file system a container sees of the host: the workspace read-only, the
// writable directories of the policy read-write on top, the protected paths inside them
// read-only again, and read globs outside the workspace read-only. Host path = container path.
type layout struct {
	workspace string   // absolute, as given: the mount target
	writable  []string // mount targets, read-write
	readOnly  []string // extra read-only mount targets outside the workspace
	protected []string // hidden: an empty read-only directory or file mounted over each
	protDirs  map[string]bool
	visible   string // a protected path bound read-only rather than hidden ("" for none)
	sources   map[string]string
	notes     []string // what the policy asks that this layout does not enforce
}

// mounts returns the mounts, parents before children; empty is a host file with no content,
// bound read-only over each protected file.
func (l *layout) mounts(empty string) []engine.Mount {
	var ms []engine.Mount
	add := func(target string, ro bool) {
		ms = append(ms, engine.Mount{Type: engine.MountBind, Source: l.sources[target], Target: target, ReadOnly: ro,
			BindOptions: &engine.BindOptions{Propagation: engine.PropagationRPrivate}})
	}
	if !slices.Contains(l.writable, l.workspace) {
		add(l.workspace, true)
	}
	for _, p := range l.readOnly {
		add(p, true)
	}
	for _, p := range l.writable {
		add(p, false)
	}
	for _, p := range l.protected {
		if p == l.visible {
			add(p, true)
			continue
		}
		if l.protDirs[p] {
			ms = append(ms, engine.Mount{Type: engine.MountTmpfs, Target: p, ReadOnly: true,
				TmpfsOptions: &engine.TmpfsOptions{SizeBytes: 4096, Mode: 0o555}})
			continue
		}
		ms = append(ms, engine.Mount{Type: engine.MountBind, Source: empty, Target: p, ReadOnly: true,
			BindOptions: &engine.BindOptions{Propagation: engine.PropagationRPrivate}})
	}
	slices.SortStableFunc(ms, func(a, b engine.Mount) int { return depth(a.Target) - depth(b.Target) })
	return ms
}

func depth(p string) int { return strings.Count(p, "/") }

// contains reports whether the mounts of l show the host path p in the container.
func (l *layout) contains(p string) bool {
	return within(p, l.workspace) || slices.ContainsFunc(l.readOnly, func(r string) bool { return within(p, r) }) ||
		slices.ContainsFunc(l.writable, func(w string) bool { return within(p, w) })
}

// planLayout works out the layout for workspace under policy p. With create set, a missing
// writable directory inside the workspace (the static prefix of a write glob) is created, so
// that a build can write where the policy lets it; without it (Describe), nothing is touched.
//
// A tool's restriction paths (narrow, nil for none) can only narrow the writable directories:
// each becomes the deeper of itself and a restriction prefix it meets.
func planLayout(workspace string, p *workflow.Policy, narrow []string, create bool) (*layout, error) {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return nil, fault.Wrap(fault.System, fmt.Errorf("workspace %s: %w", workspace, err))
	}
	if err := mountable(ws); err != nil {
		return nil, fault.New(fault.Invalid, "container workspace: %w", err)
	}
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return nil, fault.New(fault.Execution, "container workspace: %w", err)
	}
	l := &layout{workspace: ws, sources: map[string]string{ws: real}}
	var paths workflow.PathPolicy
	if p != nil {
		paths = p.Paths
	}
	if err := l.addWritable(paths.Write, create); err != nil {
		return nil, err
	}
	if narrow != nil {
		l.narrowWritable(narrow)
	}
	if err := l.addReadable(paths.Read); err != nil {
		return nil, err
	}
	if p != nil && p.GitHooks {
		l.visible = filepath.Join(ws, ".git", "hooks") // git runs them: readable, read-only
	}
	l.addProtected(paths.Protect)
	return l, nil
}

// mountable refuses mount targets that would hide the container's own system: the root, and
// the kernel's pseudo file systems.
func mountable(p string) error {
	if p == "/" {
		return fmt.Errorf("cannot mount the host's root directory")
	}
	for _, sys := range []string{"/proc", "/sys", "/dev", exchangeDir} {
		if within(p, sys) {
			return fmt.Errorf("cannot mount %s: it is under %s, which the container needs for itself", p, sys)
		}
	}
	return nil
}

// addWritable mounts the static prefix of each write glob read-write. A nil list means the
// whole workspace, an empty one nothing.
func (l *layout) addWritable(globs []string, create bool) error {
	if globs == nil {
		l.writable = []string{l.workspace}
		return nil
	}
	for _, g := range globs {
		prefix, literal := l.staticPrefix(g)
		if err := mountable(prefix); err != nil {
			return fault.New(fault.Invalid, "sandbox.paths.write %q: %w", g, err)
		}
		inside := within(prefix, l.workspace)
		if _, err := os.Lstat(prefix); os.IsNotExist(err) && !literal && inside && create {
			if err := os.MkdirAll(prefix, 0o755); err != nil {
				return fault.New(fault.Execution, "sandbox.paths.write %q: create %s: %w", g, prefix, err)
			}
		}
		src, err := filepath.EvalSymlinks(prefix)
		if err != nil {
			l.notes = append(l.notes, fmt.Sprintf("write %s not mounted: %v", g, err))
			continue
		}
		// A symlink in the prefix must not carry the mount out of the workspace: the bind
		// would make its target writable.
		if inside && !within(src, l.sources[l.workspace]) {
			return fault.New(fault.Denied, "sandbox.paths.write %q: %s leads through a symlink to %s, outside the workspace", g, prefix, src)
		}
		l.sources[prefix] = src
		l.writable = appendRoot(l.writable, prefix)
	}
	return nil
}

// narrowWritable intersects the writable directories with the static prefixes of a tool's
// restriction paths. A prefix that does not exist yet is not created: the policy's own write
// globs decide what is made.
func (l *layout) narrowWritable(globs []string) {
	var out []string
	for _, g := range globs {
		r, _ := l.staticPrefix(g)
		for _, w := range l.writable {
			switch {
			case within(r, w):
				if src, err := filepath.EvalSymlinks(r); err == nil && within(src, l.sources[w]) {
					l.sources[r] = src
					out = appendRoot(out, r)
				}
			case within(w, r):
				out = appendRoot(out, w)
			}
		}
	}
	l.writable = out
}

// addReadable mounts the static prefix of each read glob outside the workspace read-only; the
// workspace is always mounted. Read globs narrower than the workspace are left to the tools'
// own checks (L1) and noted.
func (l *layout) addReadable(globs []string) error {
	for _, g := range globs {
		prefix, _ := l.staticPrefix(g)
		if within(prefix, l.workspace) || slices.ContainsFunc(l.writable, func(w string) bool { return within(prefix, w) }) {
			if prefix != l.workspace {
				l.notes = appendOnce(l.notes, "paths.read inside the workspace: the whole workspace is visible read-only")
			}
			continue
		}
		if err := mountable(prefix); err != nil {
			l.notes = append(l.notes, fmt.Sprintf("read %s not mounted: %v", g, err))
			continue
		}
		src, err := filepath.EvalSymlinks(prefix)
		if err != nil {
			l.notes = append(l.notes, fmt.Sprintf("read %s not mounted: %v", g, err))
			continue
		}
		l.sources[prefix] = src
		l.readOnly = appendRoot(l.readOnly, prefix)
	}
	return nil
}

// addProtected hides, wherever the container sees the host, the existing paths matching
// sandbox.DefaultProtect and the policy's protect globs (relative to the workspace unless
// absolute; "**" at any depth), as the process sandbox does: a read-only tmpfs over a
// directory, an empty read-only file over anything else. Symlinks are not mounted (the bind
// would expose their target) and are noted.
func (l *layout) addProtected(globs []string) {
	var patterns []string
	for _, g := range slices.Concat(sandbox.DefaultProtect, globs) {
		if !filepath.IsAbs(g) {
			g = filepath.Join(l.workspace, g)
		}
		patterns = append(patterns, filepath.Clean(g))
	}
	matches, truncated := sandbox.ProtectMatches(patterns)
	if truncated {
		l.notes = append(l.notes, "protect: stopped looking for matches of ** patterns; deeper ones are only checked by the file tools")
	}
	l.protDirs = map[string]bool{}
	for _, m := range matches {
		if !l.contains(m) || slices.ContainsFunc(l.protected, func(p string) bool { return within(m, p) }) {
			continue
		}
		fi, err := os.Lstat(m)
		if err != nil || fi.Mode()&os.ModeSymlink != 0 {
			l.notes = append(l.notes, fmt.Sprintf("protect %s: a symlink, not mounted", m))
			continue
		}
		l.sources[m] = m
		l.protected = append(l.protected, m)
		l.protDirs[m] = fi.IsDir()
	}
	slices.Sort(l.protected)
}

// staticPrefix returns the longest leading part of glob g without pattern characters, as an
// absolute path (relative globs are relative to the workspace), and whether g has no pattern
// characters at all.
func (l *layout) staticPrefix(g string) (string, bool) {
	if !filepath.IsAbs(g) {
		g = filepath.Join(l.workspace, g)
	}
	segs := strings.Split(filepath.Clean(g), "/")
	for i, s := range segs {
		if strings.ContainsAny(s, `*?[{\`) {
			prefix := strings.Join(segs[:i], "/")
			if prefix == "" {
				prefix = "/"
			}
			return prefix, false
		}
	}
	return filepath.Clean(g), true
}

// within reports whether path p is root or below it.
func within(p, root string) bool {
	if root == "/" {
		return true
	}
	return p == root || strings.HasPrefix(p, root+"/")
}

// appendRoot adds p to roots unless one of them already holds it, and drops the roots p holds.
func appendRoot(roots []string, p string) []string {
	if slices.ContainsFunc(roots, func(r string) bool { return within(p, r) }) {
		return roots
	}
	roots = slices.DeleteFunc(roots, func(r string) bool { return within(r, p) })
	roots = append(roots, p)
	slices.Sort(roots)
	return roots
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
