package file

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// WriteFile is the write_file tool: {path, content, append?}. Without append it replaces the
// file atomically (a temporary file in the same directory, fsync, rename), so readers see the
// old or the new content, never a mix, and a crash leaves no half-written file; an existing
// file keeps its permission bits. With append it adds content at the end. Missing parent
// directories are created inside the allowed root. It refuses to write through a symlink, to
// anything but a regular file, and to append to a file with several hard links. Safe for
// concurrent use; concurrent writes to one file are last-rename-wins.
type WriteFile struct{ c *checker }

// Name returns "write_file".
func (t *WriteFile) Name() string { return "write_file" }

// Description tells the model how to write files and where it may.
func (t *WriteFile) Description(tool.Context) string {
	return fmt.Sprintf("Write a text file: replace its whole content (atomically), or add to its end with append=true. "+
		"Missing parent directories are created. content is at most %d bytes per call; write larger files in parts with append. "+
		"Symlinks are not written through. %s", t.c.maxWrite, t.c.policyText(accessWrite))
}

// Parameters returns the strict schema of {path, content, append?}.
func (t *WriteFile) Parameters() json.RawMessage {
	return schema([]string{"path", "content"},
		prop{name: "path", typ: "string", desc: "File to write, relative to the working directory or absolute."},
		prop{name: "content", typ: "string", desc: "The text to write."},
		prop{name: "append", typ: "boolean", desc: "Add content at the end of the file instead of replacing it (default false)."},
	)
}

// Annotations: write_file changes files; appending twice is not the same as once.
func (t *WriteFile) Annotations() tool.Annotations {
	return tool.Annotations{Tags: []string{"file"}, Source: "builtin"}
}

// Meta summarises a call: "write 120 bytes to src/a.go", "append 12 bytes to log.txt".
func (t *WriteFile) Meta(m map[string]any) string {
	content, _ := m["content"].(string)
	verb := "write"
	if ap, _ := m["append"].(bool); ap {
		verb = "append"
	}
	return fmt.Sprintf("%s %d bytes to %s", verb, len(content), t.c.metaPath(m["path"], ""))
}

// Execute writes the file.
func (t *WriteFile) Execute(ctx context.Context, call tool.Invocation) tool.Result {
	if err := ctx.Err(); err != nil {
		return failure(t.Name(), err)
	}
	a := args(call.Args)
	if err := a.Only("path", "content", "append"); err != nil {
		return failure(t.Name(), err)
	}
	p, err := a.Str("path", true)
	if err != nil {
		return failure(t.Name(), err)
	}
	content, err := a.Str("content", true)
	if err != nil {
		return failure(t.Name(), err)
	}
	appendMode, err := a.Bool("append")
	if err != nil {
		return failure(t.Name(), err)
	}
	if int64(len(content)) > t.c.maxWrite {
		return tool.Refused(layerSize, ruleMaxWrite, fmt.Sprintf("%s: content is %d bytes, over the limit of %d bytes per call; write the file in parts with append=true", t.Name(), len(content), t.c.maxWrite))
	}
	msg, ch, err := t.c.writeFile(p, []byte(content), appendMode)
	if err != nil {
		return failure(t.Name(), err)
	}
	res := tool.OK(msg)
	res.Changes = []state.FileChange{ch}
	return res
}

// writeFile writes content to the file the model named as arg, describes what it did and
// records the change (digests before and after, a diff of a small text file).
func (c *checker) writeFile(arg string, content []byte, appendMode bool) (string, state.FileChange, error) {
	tg, err := c.openTarget(arg)
	if err != nil {
		return "", state.FileChange{}, err
	}
	defer tg.dir.Close()
	shown := c.display(tg.abs)
	var before snapshot
	if tg.old != nil {
		if before, err = snap(tg.dir, tg.base); err != nil {
			return "", state.FileChange{}, fmt.Errorf("read %s: %w", shown, err)
		}
	}
	msg, err := c.put(tg, shown, content, appendMode)
	if err != nil {
		return "", state.FileChange{}, err
	}
	after, err := snap(tg.dir, tg.base)
	if err != nil {
		return "", state.FileChange{}, fmt.Errorf("read %s back: %w", shown, err)
	}
	return msg, change(shown, before, after), nil
}

// put replaces or appends to the target and describes what it did.
func (c *checker) put(tg target, shown string, content []byte, appendMode bool) (string, error) {
	if appendMode {
		size, err := appendFile(tg.dir, tg.base, tg.old, content)
		if err != nil {
			return "", fmt.Errorf("append to %s: %w", shown, err)
		}
		return fmt.Sprintf("appended %d bytes to %s (now %d bytes)", len(content), shown, size), nil
	}
	if err := replaceFile(tg.dir, tg.base, tg.old, content); err != nil {
		return "", fmt.Errorf("write %s: %w", shown, err)
	}
	if tg.old == nil {
		return fmt.Sprintf("wrote %d bytes to %s (new file)", len(content), shown), nil
	}
	return fmt.Sprintf("wrote %d bytes to %s (replaced %d bytes)", len(content), shown, tg.old.Size()), nil
}

// target is a file about to be written: its directory held open as a root, its name there, its
// resolved path, and what is there now (nil when nothing).
type target struct {
	dir  *os.Root
	base string
	abs  string
	old  fs.FileInfo
}

// openTarget checks the path the model named as arg for writing and opens its directory,
// creating missing ones. The caller closes target.dir.
func (c *checker) openTarget(arg string) (target, error) {
	abs, err := c.resolve(arg)
	if err != nil {
		return target{}, err
	}
	if strings.HasSuffix(filepath.ToSlash(arg), "/") {
		return target{}, fmt.Errorf("%q names a directory; give a file path", arg)
	}
	rootDir, err := c.check(arg, abs, accessWrite)
	if err != nil {
		return target{}, err
	}
	rel := relTo(rootDir, abs)
	if rel == "." {
		return target{}, fmt.Errorf("%s is a directory; give a file path", c.display(abs))
	}
	if err := c.ensureDir(rootDir); err != nil {
		return target{}, fmt.Errorf("create %s: %w", c.display(rootDir), err)
	}
	root, err := c.openRootAt(rootDir)
	if err != nil {
		return target{}, c.openError(arg, abs, err)
	}
	defer root.Close()
	relDir, base := path.Split(rel)
	dir, err := c.openWriteDir(arg, root, rootDir, path.Clean("./"+relDir), base)
	if err != nil {
		return target{}, err
	}
	old, err := c.existing(dir, base, arg, abs)
	if err != nil {
		dir.Close()
		return target{}, err
	}
	return target{dir: dir, base: base, abs: abs, old: old}, nil
}

// existing returns what is at base in dir now: nil when nothing, the regular file's info, or
// an error for a symlink, a directory or another kind of file.
func (c *checker) existing(dir *os.Root, base, arg, abs string) (fs.FileInfo, error) {
	old, err := dir.Lstat(base)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, c.openError(arg, abs, err)
	case old.Mode()&fs.ModeSymlink != 0:
		target, _ := dir.Readlink(base)
		return nil, deniedf(ruleSymlink, "%s is a symlink (to %q); write_file does not write through symlinks, write the target path instead", c.display(abs), target)
	case old.IsDir():
		return nil, fmt.Errorf("%s is a directory; give a file path", c.display(abs))
	case !old.Mode().IsRegular():
		return nil, deniedf(ruleRegular, "%s is not a regular file (%s); only regular files are written", c.display(abs), describeType(old.Mode()))
	}
	return old, nil
}

// ensureDir creates a write glob's static prefix when it does not exist yet: through the
// working directory's root when inside it, else (a configured absolute glob) directly.
func (c *checker) ensureDir(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if !within(dir, c.workDir) {
		return os.MkdirAll(dir, 0o755)
	}
	r, err := openRootDir(c.workDir)
	if err != nil {
		return err
	}
	defer r.Close()
	return r.MkdirAll(relTo(c.workDir, dir), 0o755)
}

// openWriteDir opens, as a root of its own, the directory relDir (inside root, which is at
// rootDir) that will hold base, creating missing directories. Before creating anything it
// checks where the deepest existing ancestor really is, and after, where the directory really
// is: a symlink inside the root may not lead the write to a path the policy does not allow.
// Holding the directory open keeps the later create and rename in the checked directory.
func (c *checker) openWriteDir(arg string, root *os.Root, rootDir, relDir, base string) (*os.Root, error) {
	anc := relDir
	for anc != "." {
		if fi, err := root.Stat(anc); err == nil {
			if !fi.IsDir() {
				return nil, fmt.Errorf("%s is not a directory, so %q cannot be created below it", c.display(filepath.Join(rootDir, anc)), arg)
			}
			break
		}
		anc = path.Dir(anc)
	}
	ancRoot, err := subRoot(root, anc)
	if err != nil {
		return nil, c.openError(arg, filepath.Join(rootDir, anc), err)
	}
	rest := relTo(filepath.Join(rootDir, anc), filepath.Join(rootDir, relDir))
	if err := c.verifyDir(arg, root, anc, ancRoot, filepath.Join(rootDir, anc), path.Join(rest, base)); err != nil {
		ancRoot.Close()
		return nil, err
	}
	if rest == "." {
		return ancRoot, nil
	}
	defer ancRoot.Close()
	if err := ancRoot.MkdirAll(rest, 0o755); err != nil {
		return nil, c.openError(arg, filepath.Join(rootDir, relDir), err)
	}
	dir, err := subRoot(ancRoot, rest)
	if err != nil {
		return nil, c.openError(arg, filepath.Join(rootDir, relDir), err)
	}
	if err := c.verifyDir(arg, root, relDir, dir, filepath.Join(rootDir, relDir), base); err != nil {
		dir.Close()
		return nil, err
	}
	return dir, nil
}

// verifyDir checks that the directory dir, reached as rel inside root and written by the
// model as lexical path lexDir, really is there, or that the path tail below where it really
// is may be written as well.
func (c *checker) verifyDir(arg string, root *os.Root, rel string, dir *os.Root, lexDir, tail string) error {
	d, err := dir.Open(".")
	if err != nil {
		return fmt.Errorf("open %s: %w", c.display(lexDir), err)
	}
	defer d.Close()
	real, err := c.realPath(d)
	if err != nil {
		return c.verifyNoSymlinks(arg, root, rel, d)
	}
	if real == lexDir {
		return nil
	}
	return c.checkReal(arg, filepath.Join(real, filepath.FromSlash(tail)), accessWrite)
}

// replaceFile replaces base in dir atomically: write a temporary file, fsync it, rename it
// over base, fsync the directory. The temporary file is removed on any failure.
func replaceFile(dir *os.Root, base string, old fs.FileInfo, content []byte) (err error) {
	perm := fs.FileMode(0o644)
	if old != nil {
		perm = old.Mode().Perm()
	}
	tmp := ".awf-" + rand.Text() + ".tmp"
	// O_EXCL: never follows a symlink, never reuses an existing file.
	f, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			dir.Remove(tmp)
		}
	}()
	if _, err := f.Write(content); err != nil {
		return err
	}
	if old != nil {
		if err := f.Chmod(perm); err != nil { // keep the old bits despite the umask
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := dir.Rename(tmp, base); err != nil {
		return err
	}
	return syncDir(dir)
}

// appendFile appends content to base in dir and returns the new size. An existing file must
// still be the regular, singly linked file old describes when it is opened: a file swapped for
// a symlink or FIFO in between, or a hard link to a file elsewhere, is refused.
func appendFile(dir *os.Root, base string, old fs.FileInfo, content []byte) (int64, error) {
	var f *os.File
	var err error
	if old == nil {
		f, err = dir.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	} else {
		if n := linkCount(old); n > 1 {
			return 0, deniedf(ruleHardLink, "the file has %d hard links, so appending would change the other names too; refused", n)
		}
		f, err = dir.OpenFile(base, os.O_WRONLY|os.O_APPEND|oNonblock, 0)
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if old != nil && (!os.SameFile(old, fi) || !fi.Mode().IsRegular() || linkCount(fi) > 1) {
		return 0, deniedf(ruleRace, "the file changed while it was being opened; try again")
	}
	if _, err := f.Write(content); err != nil {
		return 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	fi, err = f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), f.Close()
}

// syncDir flushes a directory's entries, so a rename survives a crash.
func syncDir(dir *os.Root) error {
	d, err := dir.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}
