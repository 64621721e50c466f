//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// openedPaths are the spec's read and write paths (and the temp dir), each opened once in
// the helper, so that the mounts and Landlock rules apply to exactly the file checked. A path
// inside the working directory, which earlier tool calls could write, must not lead through
// a symbolic link: `ln -s /etc build` must not turn a policy's write: [build] into /etc.
type openedPaths struct {
	fds map[string]int
}

// openPaths opens the paths of s that exist. A symbolic link inside the working directory
// is a fault.Denied refusal.
func openPaths(s *Spec) (*openedPaths, error) {
	op := &openedPaths{fds: map[string]int{}}
	paths := append(slices.Clone(s.Read), s.Write...)
	if s.Plan != nil && s.Plan.TempDir != "" {
		paths = append(paths, s.Plan.TempDir)
	}
	for _, p := range paths {
		if _, done := op.fds[p]; done {
			continue
		}
		fd, err := openChecked(s.Dir, p)
		switch {
		case errors.Is(err, unix.ENOENT):
			continue
		case err != nil:
			op.close()
			return nil, err
		}
		op.fds[p] = fd
	}
	return op, nil
}

// openChecked opens p as an O_PATH descriptor. Beneath dir it resolves no symbolic link and
// cannot leave dir.
func openChecked(dir, p string) (int, error) {
	if p == dir || !within(p, dir) {
		return unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	}
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("sandbox: open %s: %w", dir, err)
	}
	defer unix.Close(dfd)
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return -1, err
	}
	fd, err := unix.Openat2(dfd, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
		return -1, fault.New(fault.Denied, "sandbox: policy path %s leads through a symbolic link inside the working directory, which a tool could have planted", p)
	}
	return fd, err
}

// fd returns the descriptor of p, or -1 when p did not exist.
func (op *openedPaths) fd(p string) int {
	if fd, ok := op.fds[p]; ok {
		return fd
	}
	return -1
}

// landlockPaths names the opened ones among paths by their descriptors (/proc/self/fd/N),
// so that the rule is for the very file checked; missing ones are left out.
func (op *openedPaths) landlockPaths(paths []string) []string {
	var out []string
	for _, p := range paths {
		if fd, ok := op.fds[p]; ok {
			out = append(out, "/proc/self/fd/"+strconv.Itoa(fd))
		}
	}
	return out
}

func (op *openedPaths) close() {
	for _, fd := range op.fds {
		unix.Close(fd)
	}
	op.fds = nil
}
