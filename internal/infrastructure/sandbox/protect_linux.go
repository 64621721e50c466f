//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"time"

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
