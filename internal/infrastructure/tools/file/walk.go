package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// listable reports whether the directory abs may be listed or walked: it matches a read glob
// or some path below it could.
func (c *checker) listable(abs string) bool {
	s := filepath.ToSlash(abs)
	for _, r := range c.read {
		if r.Match(s) || r.CouldContain(s) {
			return true
		}
	}
	return false
}

// readable reports whether the file abs may be read: allowed by a read glob and not protected.
func (c *checker) readable(abs string) bool {
	if _, ok := c.allowed(abs, accessRead); !ok {
		return false
	}
	return c.protectedBy(abs) == nil
}

// openDir opens an os.Root at the directory the model named as arg, for listing or walking.
// The caller closes it.
func (c *checker) openDir(arg string) (*os.Root, string, error) {
	if arg == "" {
		arg = "."
	}
	abs, err := c.resolve(arg)
	if err != nil {
		return nil, "", err
	}
	if g := c.protectedBy(abs); g != nil {
		return nil, abs, deniedf(ruleProtect, "%s is protected (matches %s): the file tools never read or write it", c.display(abs), g.raw)
	}
	if !c.listable(abs) {
		return nil, abs, deniedf(accessRead.rule(), "path %q is outside the allowed read paths [%s]", arg, strings.Join(c.readShown, " "))
	}
	r, err := c.openDirRoot(abs)
	if errors.Is(err, syscall.ENOTDIR) {
		return nil, abs, fmt.Errorf("%s is not a directory (use read_file for a file)", c.display(abs))
	}
	if err != nil {
		return nil, abs, c.openError(arg, abs, err)
	}
	real, err := c.rootRealPath(r)
	if err == nil && real != abs && (!c.listable(real) || c.protectedBy(real) != nil) {
		r.Close()
		return nil, abs, deniedf(accessRead.rule(), "path %q leads through a symlink to %s, which is outside the allowed read paths [%s]", arg, real, strings.Join(c.readShown, " "))
	}
	return r, abs, nil
}

// openDirRoot opens a root at the directory abs: from the working directory's root or from the
// static prefix of a read glob that contains it, or at abs itself when abs is a parent of
// such a prefix (listing it shows only the way down to allowed paths).
func (c *checker) openDirRoot(abs string) (*os.Root, error) {
	if within(abs, c.workDir) {
		return c.openRootAt(abs)
	}
	for _, r := range c.read {
		for _, pre := range r.prefixes {
			if within(abs, pre) {
				root, err := openRootDir(pre)
				if err != nil {
					return nil, err
				}
				defer root.Close()
				return subRoot(root, relTo(pre, abs))
			}
		}
	}
	return openRootDir(abs)
}

// walkStarts returns the directories from which to walk below base: base itself when a read
// glob's prefix contains it, else the prefixes below base. Nested starts are dropped.
func (c *checker) walkStarts(base string) []string {
	var starts []string
	for _, r := range c.read {
		for _, pre := range r.prefixes {
			switch {
			case within(base, pre):
				starts = append(starts, base)
			case within(pre, base):
				starts = append(starts, pre)
			}
		}
	}
	slices.Sort(starts)
	starts = slices.Compact(starts)
	var out []string
	for _, s := range starts {
		if len(out) > 0 && within(s, out[len(out)-1]) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// walkFunc is called by walk for each entry: directories the policy lets the walk enter
// (returning fs.SkipDir skips one) and files, symlinks and others the policy lets the model
// read. root is the walk's open root and rel the entry's slash path inside it.
type walkFunc func(abs string, d fs.DirEntry, root *os.Root, rel string) error

// errStopWalk ends a walk early without an error.
var errStopWalk = errors.New("stop walk")

// walk visits, in lexical order, the entries below base that the policy lets the model see,
// never descending into .git, protected or disallowed directories, nor through symlinks.
// It stops when ctx is done.
func (c *checker) walk(ctx context.Context, base string, fn walkFunc) error {
	for _, start := range c.walkStarts(base) {
		if err := c.walkFrom(ctx, start, fn); err != nil {
			if errors.Is(err, errStopWalk) {
				return nil
			}
			return err
		}
	}
	return nil
}

func (c *checker) walkFrom(ctx context.Context, start string, fn walkFunc) error {
	root, err := c.openDirRoot(start)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("walk %s: %w", c.display(start), err)
	}
	defer root.Close()
	if real, err := c.rootRealPath(root); err == nil && real != start {
		return nil // the start was swapped for a symlink: nothing to walk
	}
	return c.walkDir(ctx, root, start, ".", fn)
}

// walkDir walks the directory rel of root (which is at start). Directories are opened with
// O_DIRECTORY|O_NONBLOCK, so a directory swapped for a FIFO fails instead of blocking.
func (c *checker) walkDir(ctx context.Context, root *os.Root, start, rel string, fn walkFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d, err := root.OpenFile(rel, os.O_RDONLY|oDirectory|oNonblock, 0)
	if err != nil {
		return nil // vanished or unreadable: skipped, not fatal
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return nil
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		child := path.Join(rel, e.Name())
		abs := filepath.Join(start, filepath.FromSlash(child))
		if e.IsDir() {
			if e.Name() == ".git" || c.protectedBy(abs) != nil || !c.listable(abs) {
				continue
			}
			err := fn(abs, e, root, child)
			if errors.Is(err, fs.SkipDir) {
				continue
			}
			if err != nil {
				return err
			}
			if err := c.walkDir(ctx, root, start, child, fn); err != nil {
				return err
			}
			continue
		}
		if !c.readable(abs) {
			continue
		}
		if err := fn(abs, e, root, child); err != nil {
			return err
		}
	}
	return nil
}
