//go:build unix

package sandbox

import "golang.org/x/sys/unix"

// holdDir takes a shared lock on dir for as long as the sandbox lives; release drops it.
func holdDir(dir string) (release func(), err error) {
	return lockDir(dir, unix.LOCK_SH)
}

// takeDir takes dir when no process holds it (a non-blocking exclusive lock).
func takeDir(dir string) (release func(), ok bool) {
	release, err := lockDir(dir, unix.LOCK_EX|unix.LOCK_NB)
	return release, err == nil
}

// lockDir opens dir (not following a symbolic link, close-on-exec: no program of the sandbox
// inherits it) and flocks it with how.
func lockDir(dir string, how int) (func(), error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(fd, how); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return func() { unix.Close(fd) }, nil
}
