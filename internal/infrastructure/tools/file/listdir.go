package file

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/awf-dev/awf/internal/domain/tool"
)

// MaxListEntries caps the entries list_dir and glob return.
const MaxListEntries = 1000

// ListDir is the list_dir tool: {path}. It lists a directory's entries sorted by name, one a
// line: "name/" for a directory, "name  123 B" for a file, "name -> target" for a symlink,
// and "name  (fifo)" and the like for other types. Only entries the model could read or
// descend towards are listed. Safe for concurrent use.
type ListDir struct{ c *checker }

// Name returns "list_dir".
func (t *ListDir) Name() string { return "list_dir" }

// Description tells the model how to list directories.
func (t *ListDir) Description(tool.Context) string {
	return fmt.Sprintf("List a directory's entries, sorted by name, one per line: \"name/\" for a directory, "+
		"\"name  123 B\" for a file with its size, \"name -> target\" for a symlink. At most %d entries. "+
		"Use \".\" for the working directory. %s", MaxListEntries, t.c.policyText(accessRead))
}

// Parameters returns the strict schema of {path}.
func (t *ListDir) Parameters() json.RawMessage {
	return schema([]string{"path"},
		prop{name: "path", typ: "string", desc: "Directory to list, relative to the working directory (\".\" for itself) or absolute."},
	)
}

// Annotations: list_dir never changes anything.
func (t *ListDir) Annotations() tool.Annotations { return readOnly() }

// Meta summarises a call: "list src".
func (t *ListDir) Meta(m map[string]any) string { return "list " + t.c.metaPath(m["path"], ".") }

// Execute lists the directory.
func (t *ListDir) Execute(ctx context.Context, call tool.Invocation) tool.Result {
	if err := ctx.Err(); err != nil {
		return failure(t.Name(), err)
	}
	a := args(call.Args)
	if err := a.Only("path"); err != nil {
		return failure(t.Name(), err)
	}
	p, err := a.Str("path", false)
	if err != nil {
		return failure(t.Name(), err)
	}
	out, truncated, err := t.c.listDir(p)
	if err != nil {
		return failure(t.Name(), err)
	}
	res := tool.OK(out)
	res.Truncated = truncated
	return res
}

// listDir lists the directory the model named as arg.
func (c *checker) listDir(arg string) (string, bool, error) {
	if arg == "" {
		arg = "."
	}
	root, abs, err := c.openDir(arg)
	if err != nil {
		return "", false, err
	}
	defer root.Close()
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return "", false, c.openError(arg, abs, err)
	}
	var b strings.Builder
	n := 0
	for _, e := range entries { // fs.ReadDir sorts by name
		full := filepath.Join(abs, e.Name())
		if _, ok := c.allowed(full, accessRead); !ok && !(e.IsDir() && c.listable(full)) {
			continue // names outside the read globs stay hidden; protected names show
		}
		if n == MaxListEntries {
			fmt.Fprintf(&b, "[awf: listing stopped at %d of %d entries; use glob to narrow it]\n", MaxListEntries, len(entries))
			return b.String(), true, nil
		}
		n++
		b.WriteString(formatEntry(root.FS(), e))
		b.WriteByte('\n')
	}
	if n == 0 {
		return "(empty directory)\n", false, nil
	}
	return b.String(), false, nil
}

// formatEntry formats one directory entry with its type marker.
func formatEntry(fsys fs.FS, e fs.DirEntry) string {
	name := e.Name()
	switch t := e.Type(); {
	case t.IsDir():
		return name + "/"
	case t&fs.ModeSymlink != 0:
		target, err := fs.ReadLink(fsys, name)
		if err != nil {
			return name + " -> ?"
		}
		return name + " -> " + target
	case t.IsRegular():
		fi, err := e.Info()
		if err != nil {
			return name
		}
		return fmt.Sprintf("%s  %d B", name, fi.Size())
	default:
		return fmt.Sprintf("%s  (%s)", name, strings.TrimPrefix(describeType(t), "a "))
	}
}
