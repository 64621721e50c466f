//go:build linux

package sandbox

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maskSource is a small detached tmpfs, read-only, holding an empty directory and an empty
// file: the masks bound over protected paths. Nothing outside the helper's mount namespace
// ever sees it.
type maskSource struct {
	fd int // the detached mount
	// attached says the source is mounted beneath the first directory it hides: closing fd
	// then leaves it to go with the mount namespace. Closing a detached mount unmounts it,
	// which waits for an RCU grace period: up to milliseconds on a loaded machine, for every
	// call.
	attached bool
	// files are masks with content, by the path they hide (a git config's safe keys).
	files map[string]string
}

const (
	maskDir  = "dir"
	maskFile = "empty"
)

// newMaskSource makes the tmpfs with the new mount API (fsopen, fsmount); contents are the
// masks with content, by the path they hide.
func newMaskSource(contents map[string][]byte) (*maskSource, error) {
	fs, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("mountns: masks: fsopen tmpfs: %w", err)
	}
	defer unix.Close(fs)
	for _, kv := range [][2]string{{"size", "4k"}, {"mode", "0755"}} {
		if err := unix.FsconfigSetString(fs, kv[0], kv[1]); err != nil {
			return nil, fmt.Errorf("mountns: masks: tmpfs %s: %w", kv[0], err)
		}
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		return nil, fmt.Errorf("mountns: masks: tmpfs: %w", err)
	}
	fd, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("mountns: masks: fsmount: %w", err)
	}
	src := &maskSource{fd: fd, files: map[string]string{}}
	if err := src.populate(contents); err != nil {
		src.close()
		return nil, err
	}
	return src, nil
}

func (s *maskSource) populate(contents map[string][]byte) error {
	if err := unix.Mkdirat(s.fd, maskDir, 0o555); err != nil {
		return fmt.Errorf("mountns: masks: %w", err)
	}
	if err := s.create(maskFile, nil); err != nil {
		return err
	}
	for target, data := range contents {
		name := fmt.Sprintf("file-%d", len(s.files))
		if err := s.create(name, data); err != nil {
			return err
		}
		s.files[target] = name
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}
	if err := unix.MountSetattr(s.fd, "", unix.AT_EMPTY_PATH, &attr); err != nil {
		return fmt.Errorf("mountns: masks: read-only: %w", err)
	}
	return nil
}

func (s *maskSource) create(name string, data []byte) error {
	f, err := unix.Openat(s.fd, name, unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o444)
	if err != nil {
		return fmt.Errorf("mountns: masks: %w", err)
	}
	defer unix.Close(f)
	if _, err := unix.Write(f, data); err != nil {
		return fmt.Errorf("mountns: masks: %w", err)
	}
	return nil
}

func (s *maskSource) close() { unix.Close(s.fd) }

// hide mounts the empty directory over the directory p, or the empty file over anything
// else. The first directory hidden gets the source itself mounted beneath its mask, out of
// sight. Kernels that cannot clone from a detached mount (before 6.15) get a fresh tmpfs
// over a directory and /dev/null on a nodev mount over a file, which refuses reads and
// writes alike.
func (s *maskSource) hide(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return nil // gone since it was found: nothing to hide
	}
	if fi.IsDir() && !s.attached {
		if err := unix.MoveMount(s.fd, "", unix.AT_FDCWD, p, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("mountns: hide protected %s: %w", p, err)
		}
		s.attached = true
	}
	name := maskFile
	if fi.IsDir() {
		name = maskDir
	} else if f, ok := s.files[p]; ok {
		name = f
	}
	fd, err := unix.OpenTree(s.fd, name, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return hideOld(p, fi.IsDir())
	}
	defer unix.Close(fd)
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, p, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("mountns: hide protected %s: %w", p, err)
	}
	return nil
}

func hideOld(p string, dir bool) error {
	const flags = unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if dir {
		if err := unix.Mount("tmpfs", p, "tmpfs", flags, "size=4k,mode=0555"); err != nil {
			return fmt.Errorf("mountns: hide protected %s: %w", p, err)
		}
		return nil
	}
	if err := unix.Mount("/dev/null", p, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("mountns: hide protected %s: %w", p, err)
	}
	if err := unix.Mount("", p, "", unix.MS_REMOUNT|unix.MS_BIND|flags, ""); err != nil {
		return fmt.Errorf("mountns: hide protected %s: %w", p, err)
	}
	return nil
}

// dirKey identifies a state of a directory: any entry created, removed or renamed in it
// changes its ctime (and mtime); replacing it changes its inode.
type dirKey struct {
	dev, ino     uint64
	ctime, mtime int64 // nanoseconds
}

// statDirKey returns the key of the directory p, and false when it cannot be read.
func statDirKey(p string) (dirKey, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return dirKey{}, false
	}
	return dirKey{dev: st.Dev, ino: st.Ino, ctime: st.Ctim.Nano(), mtime: st.Mtim.Nano()}, true
}

// settled says the key's ctime was more than racyWindow before now: a later change cannot
// share its timestamp.
func (k dirKey) settled(now time.Time) bool {
	return now.UnixNano()-k.ctime > int64(racyWindow)
}

// dirWatch tells which directories of a protect walk changed since their record was made,
// with inotify, so that an unchanged directory costs no system call at all: with lstat per
// directory, a sandboxed call in a workspace of 5,000 directories (a node_modules) cost 20 ms
// more than a plain step. A directory is watched before it is read or its record is trusted
// again (add, which returns the stamp the record keeps), so any change after that is an event;
// drain turns the queued events into new versions of the directories they name before each
// walk, and a record is fresh while its stamp is the directory's current one. A directory that
// cannot be watched (the user's watch limit), and every record after the queue overflowed,
// falls back to the lstat comparison.
type dirWatch struct {
	fd int
	// mounts is /proc/self/mountinfo, which polls readable with POLLPRI when the mount table
	// changes: a file system mounted inside the workspace makes no inotify event in the
	// directory it covers, so any change of the mounts makes every stamp stale (lstat then
	// sees the mount's other device and inode). nil when it cannot be had: then every walk
	// takes stamps as stale (lstat decides). A raw descriptor: registered with Go's poller
	// (os.Open), the poller's epoll would take the change before our poll sees it.
	mounts   int
	wds      map[int32]string  // watch descriptor -> the directory's path (the latest added)
	watching map[string]bool   // paths with a live watch
	ver      map[string]uint64 // events seen per path
	epoch    uint64            // queue overflows and mount changes: every stamp before one is stale
	gen      uint64            // every event, overflow and mount change: see generation
	// limit is how many directories awf watches at most: a quarter of the user's inotify
	// watches (fs.inotify.max_user_watches), so that editors and other tools keep the rest.
	limit int
}

// watchStamp is the state of the watch of a directory when its record was checked.
type watchStamp struct {
	ok         bool // the directory was watched
	ver, epoch uint64
}

// watchMask is what makes a record stale: an entry created, removed or renamed in the
// directory, the directory itself moved or removed, or its attributes changed (a directory
// made readable again shows entries no event announced).
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_MOVE_SELF | unix.IN_DELETE_SELF | unix.IN_ATTRIB | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// newDirWatch returns a watch, or nil when inotify is not available (the lstat comparison
// then does all the work).
func newDirWatch() *dirWatch {
	mounts, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil // without it, a mount would go unseen: lstat decides
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		unix.Close(mounts)
		return nil
	}
	d := &dirWatch{fd: fd, mounts: mounts, wds: map[int32]string{}, watching: map[string]bool{}, ver: map[string]uint64{},
		limit: watchLimit()}
	d.rearm()
	return d
}

// watchLimit is a quarter of the user's inotify watches, 2,048 when the limit cannot be read
// (a quarter of the kernel's smallest default).
func watchLimit() int {
	data, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches")
	if err != nil {
		return 2048
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || n <= 0 {
		return 2048
	}
	return n / 4
}

// mountsChanged reports whether the mount table changed since the last call (or it cannot
// tell), and then re-arms the poll.
func (d *dirWatch) mountsChanged() bool {
	fds := []unix.PollFd{{Fd: int32(d.mounts), Events: unix.POLLPRI}}
	n, err := unix.Poll(fds, 0)
	if err == nil && (n == 0 || fds[0].Revents&(unix.POLLPRI|unix.POLLERR) == 0) {
		return false
	}
	d.rearm()
	return true
}

// rearm reads the mount table, after which a poll waits for its next change.
func (d *dirWatch) rearm() {
	if _, err := unix.Seek(d.mounts, 0, io.SeekStart); err != nil {
		return
	}
	var buf [4096]byte
	for {
		if n, _ := unix.Read(d.mounts, buf[:]); n <= 0 {
			return
		}
	}
}

// fresh says nothing changed in the directory p since its record took stamp s.
func (d *dirWatch) fresh(p string, s watchStamp) bool {
	return d != nil && s.ok && d.watching[p] && s.epoch == d.epoch && s.ver == d.ver[p]
}

// add watches p from now on and returns the stamp of a record the caller then makes by
// checking p (lstat or read); not ok when p cannot be watched.
func (d *dirWatch) add(p string) watchStamp {
	if d == nil || (!d.watching[p] && len(d.watching) >= d.limit) {
		return watchStamp{} // past awf's share of the watches: lstat decides
	}
	wd, err := unix.InotifyAddWatch(d.fd, p, watchMask)
	if err != nil {
		return watchStamp{}
	}
	d.wds[int32(wd)] = p
	d.watching[p] = true
	return watchStamp{ok: true, ver: d.ver[p], epoch: d.epoch}
}

// drain reads every queued event and counts it against the directory it names; an
// overflowed queue makes every stamp stale. Events are queued by the system call that made
// the change, so a change finished before drain is seen by it.
func (d *dirWatch) drain() {
	if d == nil {
		return
	}
	if d.mountsChanged() {
		d.epoch++
		d.gen++
	}
	var buf [16 << 10]byte
	for {
		n, err := unix.Read(d.fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return // EAGAIN: nothing more queued
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			off += unix.SizeofInotifyEvent + int(ev.Len)
			d.event(ev.Wd, ev.Mask)
		}
	}
}

// event counts one event of watch wd.
func (d *dirWatch) event(wd int32, mask uint32) {
	d.gen++
	if mask&unix.IN_Q_OVERFLOW != 0 {
		d.epoch++
		return
	}
	p, ok := d.wds[wd]
	if !ok {
		return
	}
	d.ver[p]++
	if mask&unix.IN_IGNORED != 0 { // the directory went away: its watch with it
		delete(d.wds, wd)
		delete(d.watching, p)
	}
}

// generation counts every event, overflow and mount change drained so far: while it stays
// the same, no watched directory changed. ok is false without a watch.
func (d *dirWatch) generation() (gen uint64, ok bool) {
	if d == nil {
		return 0, false
	}
	return d.gen, true
}

// close stops watching.
func (d *dirWatch) close() {
	if d != nil {
		unix.Close(d.fd)
		unix.Close(d.mounts)
	}
}

// watched says the directory had a watch when the stamp was taken.
func (s watchStamp) watched() bool { return s.ok }
