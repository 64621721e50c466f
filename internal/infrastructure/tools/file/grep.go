package file

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"

	"github.com/awf-dev/awf/internal/domain/tool"
)

// Grep limits: matches returned per call, bytes of a matching line shown, size of a file
// searched (larger files are skipped and counted), and longest line scanned.
const (
	MaxGrepMatches   = 200
	MaxGrepLineBytes = 300
	MaxGrepFileBytes = 8 << 20
	maxScanLine      = 1 << 20
)

// Grep is the grep tool: {pattern, path?, glob?}. pattern is a Go (RE2) regular expression;
// path is a file or a directory searched recursively (default "."); glob filters files by name
// (a pattern without "/" matches the base name, one with "/" the path relative to path).
// Output is one "path:line: text" per matching line, paths relative to the working directory,
// in file order, at most [MaxGrepMatches] matches with lines cut at [MaxGrepLineBytes] bytes.
// Binary files, .git, protected files and symlinks are skipped. Safe for concurrent use.
type Grep struct{ c *checker }

// Name returns "grep".
func (t *Grep) Name() string { return "grep" }

// Description tells the model how to search file contents.
func (t *Grep) Description(tool.Context) string {
	return fmt.Sprintf("Search file contents with a regular expression (Go RE2 syntax; (?i) for case-insensitive). "+
		"path is a file or a directory searched recursively (default \".\"); glob filters file names, e.g. *.go or src/**/*.ts. "+
		"Output: one \"path:line: text\" per matching line, at most %d matches, lines cut at %d bytes. "+
		"Binary files, .git and symlinks are skipped. %s", MaxGrepMatches, MaxGrepLineBytes, t.c.policyText(accessRead))
}

// Parameters returns the strict schema of {pattern, path?, glob?}.
func (t *Grep) Parameters() json.RawMessage {
	return schema([]string{"pattern"},
		prop{name: "pattern", typ: "string", desc: "Regular expression (Go RE2 syntax) to search for."},
		prop{name: "path", typ: "string", desc: "File or directory to search, relative to the working directory (default \".\")."},
		prop{name: "glob", typ: "string", desc: "Only search files whose name matches this glob, e.g. *.go (with a /, matched against the path relative to path)."},
	)
}

// Annotations: grep never changes anything.
func (t *Grep) Annotations() tool.Annotations { return readOnly() }

// Meta summarises a call: `grep "func main" in src (*.go)`.
func (t *Grep) Meta(m map[string]any) string {
	p, _ := m["pattern"].(string)
	s := fmt.Sprintf("grep %q in %s", p, t.c.metaPath(m["path"], "."))
	if g, _ := m["glob"].(string); g != "" {
		s += " (" + g + ")"
	}
	return s
}

// Execute searches.
func (t *Grep) Execute(ctx context.Context, call tool.Invocation) tool.Result {
	a := args(call.Args)
	if err := a.Only("pattern", "path", "glob"); err != nil {
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
	filter, err := a.Str("glob", false)
	if err != nil {
		return failure(t.Name(), err)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return failure(t.Name(), fmt.Errorf("bad pattern: %w", err))
	}
	var g *glob
	if filter != "" {
		if g, err = compileRelative(filter); err != nil {
			return failure(t.Name(), fmt.Errorf("bad glob: %w", err))
		}
	}
	s := &search{c: t.c, re: re, filter: g, byPath: strings.Contains(filter, "/")}
	if err := s.run(ctx, dir); err != nil {
		return failure(t.Name(), err)
	}
	res := tool.OK(s.render(pattern))
	res.Truncated = s.full || s.cutLines
	return res
}

// search is one grep call's state.
type search struct {
	c        *checker
	re       *regexp.Regexp
	filter   *glob
	byPath   bool
	base     string
	out      strings.Builder
	matches  int
	full     bool // stopped at MaxGrepMatches
	cutLines bool
	large    int // files skipped for size
	binary   int // binary files skipped
	errs     int // files that could not be searched
}

// run searches the file or directory the model named as arg.
func (s *search) run(ctx context.Context, arg string) error {
	if arg == "" {
		arg = "."
	}
	abs, err := s.c.resolve(arg)
	if err != nil {
		return err
	}
	// Routing only: the file or the walk below makes every check again.
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		f, abs, err := s.c.openRead(arg)
		if err != nil {
			return err
		}
		defer f.Close()
		return s.searchFile(f, abs)
	}
	root, base, err := s.c.openDir(arg)
	if err != nil {
		return err
	}
	root.Close()
	s.base = base
	err = s.c.walk(ctx, base, func(abs string, d fs.DirEntry, root *os.Root, rel string) error {
		if d.IsDir() || d.Type()&fs.ModeSymlink != 0 || !s.wanted(abs, d.Name()) {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		s.searchIn(root, rel, abs)
		if s.full {
			return errStopWalk
		}
		return nil
	})
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("stopped after %d matches: %w", s.matches, err)
	}
	return err
}

// wanted applies the glob filter.
func (s *search) wanted(abs, name string) bool {
	if s.filter == nil {
		return true
	}
	if s.byPath {
		return s.filter.Match(relTo(s.base, abs))
	}
	return s.filter.Match(name)
}

// searchIn opens one file of a walk through its root and searches it; failures are counted.
func (s *search) searchIn(root *os.Root, rel, abs string) {
	f, err := root.OpenFile(rel, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		s.errs++
		return
	}
	defer f.Close()
	if s.c.regularOrRefuse(rel, f) != nil || s.c.verifyOpened(rel, abs, root, rel, f, accessRead) != nil {
		return
	}
	if err := s.searchFile(f, abs); err != nil {
		s.errs++
	}
}

// searchFile appends the matching lines of f, unless it is binary or too large.
func (s *search) searchFile(f *os.File, abs string) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() > MaxGrepFileBytes {
		s.large++
		return nil
	}
	br := bufio.NewReaderSize(f, bufferSize(fi.Size()))
	head, err := br.Peek(sniffBytes)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if looksBinary(head, err != nil) {
		s.binary++
		return nil
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 4<<10), maxScanLine)
	shown := s.c.display(abs)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if !s.re.Match(line) {
			continue
		}
		if s.matches == MaxGrepMatches {
			s.full = true
			return nil
		}
		s.matches++
		if len(line) > MaxGrepLineBytes {
			line = append(line[:runeCut(line, MaxGrepLineBytes):runeCut(line, MaxGrepLineBytes)], "…"...)
			s.cutLines = true
		}
		fmt.Fprintf(&s.out, "%s:%d: %s\n", shown, n, strings.TrimRight(string(line), "\r"))
	}
	return sc.Err()
}

// render returns the matches and notes about what was left out.
func (s *search) render(pattern string) string {
	out := s.out.String()
	if s.matches == 0 {
		out = fmt.Sprintf("no matches for %q\n", pattern)
	}
	if s.full {
		out += fmt.Sprintf("[awf: stopped at %d matches; narrow the pattern, path or glob]\n", MaxGrepMatches)
	}
	if s.binary > 0 && s.matches == 0 {
		out += fmt.Sprintf("[awf: skipped %d binary files]\n", s.binary)
	}
	if s.large > 0 {
		out += fmt.Sprintf("[awf: skipped %d files larger than %d bytes]\n", s.large, MaxGrepFileBytes)
	}
	if s.errs > 0 {
		out += fmt.Sprintf("[awf: %d files could not be searched]\n", s.errs)
	}
	return out
}
