package file

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/tool"
)

// Glob is the glob tool: {pattern, path?}. The pattern is matched against paths relative to
// path (default "."): `**` matches any number of directories, `*` and `?` match within a name,
// `[...]` is a character class and `{a,b}` an alternation. Results are the paths of matching
// files and directories (directories end in "/"), relative to the working directory so they
// can be passed to read_file, sorted, at most [MaxListEntries]. .git directories are skipped,
// symlinks are listed but not followed, and nothing outside the allowed paths is returned.
// Safe for concurrent use.
type Glob struct{ c *checker }

// Name returns "glob".
func (t *Glob) Name() string { return "glob" }

// Description tells the model how to find files by name.
func (t *Glob) Description(tool.Context) string {
	return fmt.Sprintf("Find files by name pattern. pattern is relative to path (default \".\"): ** matches any number of directories, "+
		"* and ? match within a name, [abc] is a character class, {a,b} an alternation; for example **/*.go or src/{api,web}/**/*.ts. "+
		"Returns matching paths relative to the working directory, sorted, directories ending in /, at most %d. .git is skipped. %s",
		MaxListEntries, t.c.policyText(accessRead))
}

// Parameters returns the strict schema of {pattern, path?}.
func (t *Glob) Parameters() json.RawMessage {
	return schema([]string{"pattern"},
		prop{name: "pattern", typ: "string", desc: "Glob pattern relative to path, e.g. **/*.go."},
		prop{name: "path", typ: "string", desc: "Directory to search from, relative to the working directory (default \".\")."},
	)
}

// Annotations: glob never changes anything.
func (t *Glob) Annotations() tool.Annotations { return readOnly() }

// Meta summarises a call: "glob **/*.go in src".
func (t *Glob) Meta(m map[string]any) string {
	p, _ := m["pattern"].(string)
	return fmt.Sprintf("glob %s in %s", p, t.c.metaPath(m["path"], "."))
}

// Execute finds the matching paths.
func (t *Glob) Execute(ctx context.Context, call tool.Invocation) tool.Result {
	a := args(call.Args)
	if err := a.Only("pattern", "path"); err != nil {
		return failure(t.Name(), err)
	}
	pattern, err := a.Str("pattern", true)
	if err != nil {
		return failure(t.Name(), err)
	}
	dir, err := a.Str("path", false)
	if err != nil {
		return failure(t.Name(), err)
	}
	out, truncated, err := t.c.glob(ctx, pattern, dir)
	if err != nil {
		return failure(t.Name(), err)
	}
	res := tool.OK(out)
	res.Truncated = truncated
	return res
}

// compileRelative compiles a pattern that must stay below the directory it is relative to.
func compileRelative(pattern string) (*glob, error) {
	p := filepath.ToSlash(pattern)
	if strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("pattern %q must be relative; put the directory in path", pattern)
	}
	if slices.Contains(strings.Split(p, "/"), "..") {
		return nil, fmt.Errorf("pattern %q may not contain \"..\"; put the directory in path", pattern)
	}
	g, err := compileGlob(p, false)
	if err != nil {
		return nil, err
	}
	return g, nil
}

// glob lists the paths below the directory arg matching pattern.
func (c *checker) glob(ctx context.Context, pattern, arg string) (string, bool, error) {
	g, err := compileRelative(pattern)
	if err != nil {
		return "", false, err
	}
	root, base, err := c.openDir(arg)
	if err != nil {
		return "", false, err
	}
	root.Close() // openDir checked the directory; the walk opens its own roots
	var found []string
	truncated := false
	err = c.walk(ctx, base, func(abs string, d fs.DirEntry, _ *os.Root, _ string) error {
		rel := relTo(base, abs)
		if d.IsDir() && !g.Match(rel) {
			if !g.CouldContain(rel) {
				return fs.SkipDir
			}
			return nil
		}
		if !g.Match(rel) {
			return nil
		}
		if len(found) == MaxListEntries {
			truncated = true
			return errStopWalk
		}
		shown := c.display(abs)
		if d.IsDir() {
			if _, ok := c.allowed(abs, accessRead); !ok {
				return nil // a directory on the way to allowed paths, not itself allowed
			}
			shown += "/"
		}
		found = append(found, shown)
		return nil
	})
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return "", false, fmt.Errorf("stopped: %w", err)
		}
		return "", false, err
	}
	if len(found) == 0 {
		return fmt.Sprintf("no paths match %q in %s\n", pattern, c.display(base)), false, nil
	}
	slices.Sort(found)
	out := strings.Join(found, "\n") + "\n"
	if truncated {
		out += fmt.Sprintf("[awf: stopped at %d matches; narrow the pattern or path]\n", MaxListEntries)
	}
	return out, truncated, nil
}
