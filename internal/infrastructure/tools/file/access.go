package file

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/awf-dev/awf/internal/domain/workflow"
)

// access is the kind of access a check is for.
type access int

const (
	accessRead access = iota
	accessWrite
)

func (a access) String() string {
	if a == accessWrite {
		return "write"
	}
	return "read"
}

// rule names the policy list that allows paths for a, as refusals record it.
func (a access) rule() string { return "sandbox.paths." + a.String() }

// resolve turns a path argument into a clean absolute path. It is lexical: "src/../src/x.go"
// is "src/x.go". Symlinks are dealt with when the file is opened (os.Root refuses escapes, the
// real-path check refuses in-root detours to files the policy does not allow).
func (c *checker) resolve(arg string) (string, error) {
	if arg == "" {
		return "", errors.New("path is empty")
	}
	if strings.ContainsRune(arg, 0) {
		return "", fmt.Errorf("path %q contains a NUL byte", arg)
	}
	p := filepath.FromSlash(arg)
	if !filepath.IsAbs(p) {
		return filepath.Join(c.workDir, p), nil
	}
	p = filepath.Clean(p)
	if c.given != c.workDir && within(p, c.given) {
		// The model copied the working directory as configured; use its real spelling.
		rel, _ := filepath.Rel(c.given, p)
		p = filepath.Join(c.workDir, rel)
	}
	return p, nil
}

// within reports whether the clean absolute path p is dir or below it.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(p, dir)
}

// relTo returns p relative to dir (both clean and absolute, p within dir), as a slash path.
func relTo(dir, p string) string {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return "."
	}
	return filepath.ToSlash(rel)
}

// display shows a path the way the model should write it: relative to the working directory
// when inside it, absolute otherwise.
func (c *checker) display(abs string) string {
	if within(abs, c.workDir) {
		return relTo(c.workDir, abs)
	}
	return filepath.ToSlash(abs)
}

// protectedBy returns the protected glob that matches abs, or nil.
func (c *checker) protectedBy(abs string) *glob {
	segs := splitSegments(strings.ToLower(filepath.ToSlash(abs)))
	for _, g := range c.protect {
		if g.matchSplit(segs) {
			return g
		}
	}
	return nil
}

func (c *checker) rules(a access) ([]rule, []string) {
	if a == accessWrite {
		return c.write, c.writeShown
	}
	return c.read, c.readShown
}

// allowed reports whether abs matches an allow glob for a, and returns the static prefix where
// the matching glob's os.Root opens.
func (c *checker) allowed(abs string, a access) (string, bool) {
	rules, _ := c.rules(a)
	s := filepath.ToSlash(abs)
	for _, r := range rules {
		if !r.Match(s) {
			continue
		}
		best := ""
		for _, pre := range r.prefixes {
			if within(abs, pre) && len(pre) > len(best) {
				best = pre
			}
		}
		if best != "" {
			return best, true
		}
	}
	return "", false
}

// check applies the policy to the resolved path abs, written by the model as arg. It returns
// the directory at which to open the os.Root: the matching glob's static prefix, or its parent
// when the glob has no wildcard and names the file itself (see glob.Roots).
func (c *checker) check(arg, abs string, a access) (string, error) {
	if g := c.protectedBy(abs); g != nil {
		return "", deniedf(ruleProtect, "%s is protected (matches %s): the file tools never read or write it", c.display(abs), g.raw)
	}
	prefix, ok := c.allowed(abs, a)
	if !ok {
		_, shown := c.rules(a)
		return "", deniedf(a.rule(), "path %q is outside the allowed %s paths [%s]", arg, a, strings.Join(shown, " "))
	}
	return prefix, nil
}

// checkReal applies the policy to the real path a symlink led to. Both the path as written and
// the file reached must be allowed.
func (c *checker) checkReal(arg, real string, a access) error {
	if g := c.protectedBy(real); g != nil {
		return deniedf(ruleProtect, "path %q leads through a symlink to %s, which is protected (matches %s)", arg, c.display(real), g.raw)
	}
	if _, ok := c.allowed(real, a); !ok {
		_, shown := c.rules(a)
		return deniedf(a.rule(), "path %q leads through a symlink to %s, which is outside the allowed %s paths [%s]", arg, real, a, strings.Join(shown, " "))
	}
	return nil
}

// openRootAt opens an os.Root at the directory dir. Inside the working directory the root is
// opened from the working directory's own root, so a directory swapped for a symlink cannot
// lead outside it; elsewhere (absolute globs) dir is a configured prefix or a parent of one.
func (c *checker) openRootAt(dir string) (*os.Root, error) {
	anchor := dir
	if within(dir, c.workDir) {
		anchor = c.workDir
	}
	r, err := openRootDir(anchor)
	if err != nil {
		return nil, err
	}
	rel := relTo(anchor, dir)
	if rel == "." {
		return r, nil
	}
	defer r.Close()
	return subRoot(r, rel)
}

// subRoot opens the directory rel of r as a root. The "/." suffix makes the os.Root walk open
// rel itself with O_DIRECTORY, so a FIFO there fails with ENOTDIR instead of blocking.
func subRoot(r *os.Root, rel string) (*os.Root, error) {
	if rel == "." || rel == "" {
		return r.OpenRoot(".")
	}
	return r.OpenRoot(rel + "/.")
}

// openRootDir opens a root at the absolute directory dir, failing rather than blocking when
// dir is not a directory.
func openRootDir(dir string) (*os.Root, error) {
	return os.OpenRoot(strings.TrimSuffix(dir, string(filepath.Separator)) + string(filepath.Separator) + ".")
}

// rootRealPath returns where a root really is.
func (c *checker) rootRealPath(r *os.Root) (string, error) {
	d, err := r.Open(".")
	if err != nil {
		return "", err
	}
	defer d.Close()
	return c.realPath(d)
}

// verifyOpened checks, after opening, that the open file f (reached as rel inside root, from
// the path abs the model wrote as arg) is allowed: when its real path differs from abs, a
// symlink inside the root was followed and the file reached must be allowed too. Where real
// paths are unavailable it refuses any symlink on the way instead.
func (c *checker) verifyOpened(arg, abs string, root *os.Root, rel string, f *os.File, a access) error {
	real, err := c.realPath(f)
	if err != nil {
		return c.verifyNoSymlinks(arg, root, rel, f)
	}
	if real == abs {
		return nil
	}
	return c.checkReal(arg, real, a)
}

// verifyNoSymlinks is the fallback of verifyOpened: no component of rel may be a symlink, and
// the open file must be the one the name now denotes.
func (c *checker) verifyNoSymlinks(arg string, root *os.Root, rel string, f *os.File) error {
	if rel != "." {
		parts := strings.Split(rel, "/")
		for i := range parts {
			p := strings.Join(parts[:i+1], "/")
			fi, err := root.Lstat(p)
			if err != nil {
				return fmt.Errorf("check %s: %w", p, err)
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				return deniedf(ruleSymlink, "path %q goes through the symlink %s; symlinks cannot be verified on this system, use the real path", arg, p)
			}
		}
	}
	named, err := root.Lstat(rel)
	if err != nil {
		return fmt.Errorf("check %s: %w", rel, err)
	}
	opened, err := f.Stat()
	if err != nil {
		return fmt.Errorf("check %s: %w", rel, err)
	}
	if !os.SameFile(named, opened) {
		return deniedf(ruleRace, "path %q changed while it was being opened; try again", arg)
	}
	return nil
}

// openRead opens the regular file the model named as arg for reading. The caller closes it.
func (c *checker) openRead(arg string) (*os.File, string, error) {
	abs, err := c.resolve(arg)
	if err != nil {
		return nil, "", err
	}
	prefix, err := c.check(arg, abs, accessRead)
	if err != nil {
		return nil, abs, err
	}
	root, err := c.openRootAt(prefix)
	if err != nil {
		return nil, abs, c.openError(arg, abs, err)
	}
	defer root.Close()
	rel := relTo(prefix, abs)
	// O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
	f, err := root.OpenFile(rel, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, abs, c.openError(arg, abs, err)
	}
	if err := c.regularOrRefuse(arg, f); err != nil {
		f.Close()
		return nil, abs, err
	}
	if err := c.verifyOpened(arg, abs, root, rel, f, accessRead); err != nil {
		f.Close()
		return nil, abs, err
	}
	return f, abs, nil
}

// regularOrRefuse refuses anything but a regular file: directories, FIFOs, devices, sockets.
func (c *checker) regularOrRefuse(arg string, f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", arg, err)
	}
	switch m := fi.Mode(); {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return fmt.Errorf("%s is a directory (use list_dir or glob)", arg)
	default:
		return deniedf(ruleRegular, "%s is not a regular file (%s); only regular files are read or written", arg, describeType(m))
	}
}

func describeType(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	default:
		return "type " + m.Type().String()
	}
}

// openError turns an error from opening into words the model can act on.
func (c *checker) openError(arg, abs string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		msg := fmt.Sprintf("%s: no such file or directory", c.display(abs))
		if hint := c.suggest(abs); hint != "" {
			msg += " (" + hint + ")"
		}
		return errors.New(msg)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%s: a parent of this path is not a directory", c.display(abs))
	case strings.Contains(err.Error(), "path escapes from parent"):
		return deniedf(ruleEscape, "path %q leads outside its allowed directory through a symlink or \"..\"; refused", arg)
	case errors.Is(err, syscall.ELOOP):
		return deniedf(ruleSymlink, "path %q has too many levels of symlinks", arg)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied by the operating system", c.display(abs))
	}
	return fmt.Errorf("%s: %w", c.display(abs), err)
}

// suggest proposes a near name for a missing path: a sibling whose name is a plausible
// misspelling, looked up through the working directory's root.
func (c *checker) suggest(abs string) string {
	dir, name := filepath.Split(abs)
	dir = filepath.Clean(dir)
	if !within(dir, c.workDir) {
		return ""
	}
	r, err := openRootDir(c.workDir)
	if err != nil {
		return ""
	}
	defer r.Close()
	entries, err := fs.ReadDir(r.FS(), relTo(c.workDir, dir))
	if err != nil {
		return ""
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if c.readable(filepath.Join(dir, e.Name())) || (e.IsDir() && c.listable(filepath.Join(dir, e.Name()))) {
			names = append(names, e.Name()) // never suggest what the model may not see
		}
	}
	s := workflow.Suggest(name, names)
	if s == "" {
		return ""
	}
	return fmt.Sprintf("did you mean %s?", c.display(filepath.Join(dir, s)))
}
