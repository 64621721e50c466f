//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// maskedFiles are secrets of the system directories: /dev/null is bound over them.
var maskedFiles = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/security/opasswd",
	"/etc/ssh/ssh_host_*_key",
}

// maskedDirs are secret directories of the system directories: an empty read-only tmpfs
// hides them.
var maskedDirs = []string{"/etc/ssl/private"}

// mounts is the mount namespace set-up of Enter.
type mounts struct {
	spec  *Spec
	paths *openedPaths
	// idmap asks for the writable paths to show their owner as spec.Plan.DropUID.
	idmap bool
	// exec is what an exec allowlist lets processes execute; nil without one.
	exec    *ExecSet
	usernss map[[2]int]*os.File // idmapping user namespaces by on-disk owner
	// Results.
	procMounted bool
	idmapped    bool  // every writable path that exists got its idmapping
	idmapErr    error // why idmapping failed
	notes       []string
}

// setup makes the mount namespace: everything read-only, a fresh /proc for the pid namespace,
// the writable paths and the temp dir read-write (idmapped for a dropped root), protected
// paths read-only and pinned, secrets masked; then re-enters the working directory through
// the new mounts.
func (m *mounts) setup(pidns bool) error {
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("mountns: working directory: %w", err)
	}
	defer m.closeUserns()
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("mountns: make mounts private: %w", err)
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | m.noexec()}); err != nil {
		return fmt.Errorf("mountns: make / read-only: %w", err)
	}
	if pidns {
		// A /proc that shows the sandbox's processes only: awf's /proc/<pid>/environ is
		// out of sight. When it cannot be mounted, Enter keeps /proc out of reach.
		m.procMounted = unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "") == nil
	}
	writable := slices.Clone(m.spec.Write)
	clones, err := m.cloneWritable(writable, m.idmap)
	m.idmapped = m.idmap && err == nil
	if m.idmap && err != nil {
		// All or nothing: a root whose uid cannot drop must not meet idmapped mounts, which
		// would show it its own files as someone else's.
		m.idmapErr = err
		clones, err = m.cloneWritable(writable, false)
	}
	if err != nil {
		return err
	}
	if t := m.spec.Plan.TempDir; t != "" {
		tmp, err := m.cloneWritable([]string{t}, false)
		if err != nil {
			closeClones(clones)
			return err
		}
		clones = append(clones, tmp...)
	}
	for _, c := range clones {
		if err := m.moveTo(c.fd, c.at, c.name, c.path); err != nil {
			closeClones(clones)
			return err
		}
	}
	closeClones(clones)
	if err := m.protect(); err != nil {
		return err
	}
	if err := m.allowExec(); err != nil {
		return err
	}
	if !m.idmapped && os.Geteuid() == 0 {
		// Only a root that keeps its uid can read them; uid 65534 and a user cannot.
		if err := m.mask(); err != nil {
			return err
		}
	}
	if m.idmapped {
		if err := m.expose(append(slices.Clone(writable), cwd)); err != nil {
			return err
		}
	}
	if err := os.Chdir(cwd); err != nil {
		return fmt.Errorf("mountns: re-enter %s: %w", cwd, err)
	}
	return nil
}

// clone is a detached copy of a writable path's mount tree, to be mounted at (at, name).
type clone struct {
	fd   int
	at   int
	name string
	path string
}

func closeClones(cs []clone) {
	for _, c := range cs {
		unix.Close(c.fd)
	}
}

// cloneWritable makes read-write (and, when asked, idmapped) copies of the writable paths that
// exist, detached until moveTo. The paths' opened descriptors (openPaths) are used when there
// are some, so that what is bound is exactly what was checked.
func (m *mounts) cloneWritable(paths []string, idmap bool) ([]clone, error) {
	var out []clone
	for _, path := range paths {
		at, name, flags := unix.AT_FDCWD, path, uint(0)
		if fd := m.paths.fd(path); fd >= 0 {
			at, name, flags = fd, "", unix.AT_EMPTY_PATH
		}
		fd, err := unix.OpenTree(at, name, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|flags)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			closeClones(out)
			return nil, fmt.Errorf("mountns: clone %s: %w", path, err)
		}
		out = append(out, clone{fd: fd, at: at, name: name, path: path})
		attr := unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY, Attr_set: m.noexec()}
		if idmap {
			ns, err := m.usernsFor(path)
			if err != nil {
				closeClones(out)
				return nil, fmt.Errorf("idmapped mount of %s: %w", path, err)
			}
			attr.Attr_set, attr.Userns_fd = unix.MOUNT_ATTR_IDMAP, uint64(ns.Fd())
		}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &attr); err != nil {
			closeClones(out)
			if idmap {
				return nil, fmt.Errorf("idmapped mount of %s: %w", path, err)
			}
			return nil, fmt.Errorf("mountns: make %s writable: %w", path, err)
		}
	}
	return out, nil
}

// moveTo mounts the detached tree fd at (at, name): a descriptor with name "", or a path.
func (m *mounts) moveTo(fd, at int, name, path string) error {
	flags := unix.MOVE_MOUNT_F_EMPTY_PATH
	if name == "" {
		flags |= unix.MOVE_MOUNT_T_EMPTY_PATH
	}
	if err := unix.MoveMount(fd, "", at, name, flags); err != nil {
		return fmt.Errorf("mountns: mount %s: %w", path, err)
	}
	return nil
}

func (m *mounts) move(fd int, path string) error {
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("mountns: mount %s: %w", path, err)
	}
	return nil
}

// usernsFor returns a user namespace that maps path's on-disk owner to DropUID: one the parent
// passed (Plan.IDMaps), or one made here.
func (m *mounts) usernsFor(path string) (*os.File, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nil, err
	}
	key := [2]int{int(st.Uid), int(st.Gid)}
	if ns, ok := m.usernss[key]; ok {
		return ns, nil
	}
	var ns *os.File
	for _, im := range m.spec.Plan.IDMaps {
		if im.UID == key[0] && im.GID == key[1] && im.FD > 2 {
			ns = os.NewFile(uintptr(im.FD), "idmap-userns")
		}
	}
	if ns == nil {
		var err error
		if ns, err = newIDMapNamespace(key[0], key[1], m.spec.Plan.DropUID); err != nil {
			return nil, err
		}
	}
	if m.usernss == nil {
		m.usernss = map[[2]int]*os.File{}
	}
	m.usernss[key] = ns
	return ns, nil
}

func (m *mounts) closeUserns() {
	for _, ns := range m.usernss {
		ns.Close()
	}
}

// protect hides every existing match of the protected patterns (Plan.Protected): an empty
// read-only directory over a directory, an empty read-only file over anything else, so that a
// process can neither read nor write them (.env, .git/config, .awf, .git/hooks). Before that,
// the directories between a match and its writable root are bound onto themselves (a mount
// point cannot be renamed or removed, so .git cannot be swapped for another). A match that is
// a symbolic link is hidden at its target when that lies in a path the process may read. A
// match of Spec.Visible is bound read-only instead of hidden.
func (m *mounts) protect() error {
	matches := m.spec.Plan.Protected
	if m.spec.Plan.ProtectTruncated {
		m.notes = append(m.notes, fmt.Sprintf("protect: stopped looking for matches of ** patterns after %d entries", maxProtectWalk))
	}
	var targets, pins []string
	reachable := rootsOf(append(slices.Clone(m.spec.Read), m.spec.Write...))
	for _, p := range matches {
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			if p, err = filepath.EvalSymlinks(p); err != nil || !reachable.covers(p) {
				continue // dangling, or out of reach anyway
			}
		}
		targets = append(targets, p)
		root := writableRoot(p, m.spec.Write)
		for d := filepath.Dir(p); root != "" && d != root && within(d, root); d = filepath.Dir(d) {
			pins = append(pins, d)
		}
	}
	if len(targets) == 0 {
		return nil
	}
	byDepth := func(a, b string) int {
		if c := strings.Count(a, "/") - strings.Count(b, "/"); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	}
	slices.SortFunc(pins, byDepth)
	slices.SortFunc(targets, byDepth)
	hidden := rootsOf(targets)
	for _, d := range slices.Compact(pins) {
		if hidden.covers(d) {
			continue
		}
		if err := m.rebind(d, 0, 0, true); err != nil {
			return err
		}
	}
	src, err := newMaskSource(gitConfigMasks(targets))
	if err != nil {
		return err
	}
	defer src.close() // attached by then, mostly: see maskSource.attached
	done := rootSet{}
	for _, p := range slices.Compact(targets) {
		if done.covers(p) {
			continue // beneath a directory already hidden
		}
		hide := src.hide
		if slices.ContainsFunc(m.spec.Visible, func(v string) bool { return matchSegments(splitPath(v), splitPath(p)) }) {
			hide = func(p string) error { return m.rebind(p, unix.MOUNT_ATTR_RDONLY, 0, true) }
		}
		if err := hide(p); err != nil {
			return err
		}
		done[p] = true
	}
	return nil
}

// rebind binds path over itself, with the set attributes set and the clear ones cleared,
// keeping the mounts beneath it when recursive.
func (m *mounts) rebind(path string, set, clear uint64, recursive bool) error {
	flags := uint(unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC)
	if recursive {
		flags |= unix.AT_RECURSIVE
	}
	fd, err := unix.OpenTree(unix.AT_FDCWD, path, flags)
	if err != nil {
		return fmt.Errorf("mountns: clone %s: %w", path, err)
	}
	defer unix.Close(fd)
	if set|clear != 0 {
		attr := unix.MountAttr{Attr_set: set, Attr_clr: clear}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
			return fmt.Errorf("mountns: set the attributes of %s: %w", path, err)
		}
	}
	return m.move(fd, path)
}

// noexec is MOUNT_ATTR_NOEXEC under an exec allowlist: every mount is noexec but the
// programs' and libraries' own (allowExec), so that the dynamic loader cannot map a program
// that is not allowed (ld.so /usr/bin/id) nor a copy in a writable directory.
func (m *mounts) noexec() uint64 {
	if m.spec.ExecAllowlist {
		return unix.MOUNT_ATTR_NOEXEC
	}
	return 0
}

// allowExec binds each allowed program and library of an exec allowlist over itself
// without noexec.
func (m *mounts) allowExec() error {
	if m.exec == nil {
		return nil
	}
	for _, p := range slices.Concat(m.exec.Programs, m.exec.Libraries) {
		if err := m.rebind(p, 0, unix.MOUNT_ATTR_NOEXEC, true); err != nil {
			return err
		}
	}
	return nil
}

// mask hides the secrets of /etc.
func (m *mounts) mask() error {
	for _, pat := range maskedFiles {
		matches, _ := filepath.Glob(pat)
		for _, p := range matches {
			if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			if err := unix.Mount("/dev/null", p, "", unix.MS_BIND, ""); err != nil {
				return fmt.Errorf("mountns: mask %s: %w", p, err)
			}
		}
	}
	for _, d := range maskedDirs {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			continue
		}
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0755"); err != nil {
			return fmt.Errorf("mountns: mask %s: %w", d, err)
		}
	}
	return nil
}

// writableRoot returns the writable path p is in, or "".
func writableRoot(p string, write []string) string {
	for _, w := range write {
		if within(p, w) {
			return w
		}
	}
	return ""
}

// expose makes the paths the dropped uid needs reachable when an ancestor directory is closed
// to it (such as /root, mode 0700): an empty read-only tmpfs covers the highest such
// ancestor, and the paths beneath it are bound back at their places. The rest of the
// ancestor's content stays hidden, which also helps when Landlock is missing.
func (m *mounts) expose(extra []string) error {
	uid := m.spec.Plan.DropUID
	need := minimalRoots(append(append(slices.Clone(m.spec.Read), extra...), m.spec.Plan.TempDir))
	covered := map[string][]string{} // closed ancestor -> paths beneath it
	for _, p := range need {
		if p == "" || p == "/" {
			continue
		}
		if a := closedAncestor(p, uid); a != "" {
			covered[a] = append(covered[a], p)
		}
	}
	for _, a := range minimalRoots(mapKeys(covered)) {
		var paths []string
		for b, ps := range covered {
			if within(b, a) {
				paths = append(paths, ps...)
			}
		}
		if err := m.skeleton(a, minimalRoots(paths)); err != nil {
			return err
		}
	}
	return nil
}

// closedAncestor returns the highest ancestor of p that uid cannot search, or "".
func closedAncestor(p string, uid int) string {
	var parts []string
	for d := filepath.Dir(p); d != "/" && d != "."; d = filepath.Dir(d) {
		parts = append(parts, d)
	}
	for i := len(parts) - 1; i >= 0; i-- {
		var st unix.Stat_t
		if unix.Stat(parts[i], &st) != nil {
			return ""
		}
		search := st.Mode&0o001 != 0 ||
			int(st.Uid) == uid && st.Mode&0o100 != 0 ||
			int(st.Gid) == uid && st.Mode&0o010 != 0
		if !search {
			return parts[i]
		}
	}
	return ""
}

// skeleton covers dir with a tmpfs and binds paths (beneath dir) back.
func (m *mounts) skeleton(dir string, paths []string) error {
	clones := make([]int, 0, len(paths))
	defer func() {
		for _, fd := range clones {
			unix.Close(fd)
		}
	}()
	var kept []string
	for _, p := range paths {
		fd, err := unix.OpenTree(unix.AT_FDCWD, p, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return fmt.Errorf("mountns: clone %s: %w", p, err)
		}
		clones, kept = append(clones, fd), append(kept, p)
	}
	isDir := make([]bool, len(kept))
	for i, p := range kept {
		fi, err := os.Stat(p)
		isDir[i] = err == nil && fi.IsDir()
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=64k,mode=0755"); err != nil {
		return fmt.Errorf("mountns: cover %s: %w", dir, err)
	}
	for i, p := range kept {
		if err := makeMountPoint(p, isDir[i]); err != nil {
			return fmt.Errorf("mountns: recreate %s: %w", p, err)
		}
		if err := m.move(clones[i], p); err != nil {
			return err
		}
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, dir, 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("mountns: make %s read-only: %w", dir, err)
	}
	return nil
}

func makeMountPoint(p string, dir bool) error {
	if dir {
		return os.MkdirAll(p, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

func mapKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
