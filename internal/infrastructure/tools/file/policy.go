// Package file implements awf's in-process file tools (read_file, write_file, list_dir, glob,
// grep) with the sandbox's L1 path enforcement built in. A path is resolved lexically against
// the working directory ("src/../src/x.go" is "src/x.go"), checked against the read or write
// globs and the protected globs, and opened through an os.Root at the matching glob's static
// prefix, so symlink escapes and check-then-open races are refused by the kernel's openat walk.
// After opening, the real path of the descriptor is checked too: a symlink that stays inside
// the root may only lead to a file the policy also allows. Non-regular files (FIFOs, devices)
// are refused without blocking. Known limit: a hard link made beforehand to a file elsewhere is
// indistinguishable from the file and can be read (not appended to); the OS layer (L2) is what
// keeps such links from being made. Shell and command tools live elsewhere.
//
// Globs are slash-separated: `**` as a whole segment matches any number of directories, `*`
// and `?` match within a name, `[...]` and `[!...]` are classes, `{a,b}` alternates, and a
// backslash escapes.
package file

import (
	"github.com/awf-dev/awf/internal/domain/tool"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// Default limits. MaxReadBytes caps the text one read_file call returns; MaxWriteBytes caps the
// content of one write_file call.
const (
	DefaultMaxReadBytes  = 256 << 10
	DefaultMaxWriteBytes = 10 << 20
)

// DefaultProtect lists the globs that are always protected, whatever the policy says: writing
// them can run code (git hooks, git config, awf's own tool manifests) or change secrets, and
// reading them can leak secrets. They apply at any depth.
var DefaultProtect = []string{
	"**/.git",
	"**/.git/hooks/**",
	"**/.git/config",
	"**/.awf/**",
	"**/.env",
	"**/.env.*",
}

// Policy says where the file tools may read and write.
//
// Globs are relative to WorkDir unless absolute; see the package's glob syntax (`**`, `*`, `?`,
// `[...]`, `{a,b}`). A nil Read or Write list means the default, all of WorkDir ("**"); an
// empty non-nil list allows nothing. Read and Write are independent: a path in Write only can be
// written but not read back. Protect is added to [DefaultProtect], matched case-insensitively,
// and wins over Read and Write: protected paths are neither read nor written by these tools
// (their names still show in list_dir and glob). Zero limits mean the defaults.
type Policy struct {
	WorkDir       string
	Read          []string
	Write         []string
	Protect       []string
	MaxReadBytes  int64
	MaxWriteBytes int64
}

// rule is one allow glob, compiled as written and, when its literal leading directories go
// through symlinks, also with their real path. A path matches the rule when it matches either
// form: the path the model writes usually follows the written form, the real path of the file
// opened follows the real form.
type rule struct {
	globs    []*glob
	prefixes []string // where roots open for both forms, one per brace alternative; see glob.Roots
}

// Match reports whether the absolute slash path s matches the rule.
func (r rule) Match(s string) bool {
	for _, g := range r.globs {
		if g.Match(s) {
			return true
		}
	}
	return false
}

// CouldContain reports whether paths below the absolute slash directory s could match.
func (r rule) CouldContain(s string) bool {
	for _, g := range r.globs {
		if g.CouldContain(s) {
			return true
		}
	}
	return false
}

// checker is a compiled Policy. It is immutable and safe for concurrent use.
type checker struct {
	workDir    string // canonical: absolute, symlinks resolved
	given      string // WorkDir as configured (absolute, cleaned), for paths the model copies
	read       []rule
	write      []rule
	protect    []*glob
	maxRead    int64
	maxWrite   int64
	realPath   func(*os.File) (string, error) // where an open file really is; see realpath_*.go
	readShown  []string
	writeShown []string
}

// compile validates the policy and resolves its globs to absolute, canonical patterns.
func (p Policy) compile() (*checker, error) {
	if p.WorkDir == "" {
		return nil, fault.New(fault.Invalid, "file policy: WorkDir is required")
	}
	given, err := filepath.Abs(p.WorkDir)
	if err != nil {
		return nil, fault.New(fault.Invalid, "file policy: work dir %s: %w", p.WorkDir, err)
	}
	canon, err := filepath.EvalSymlinks(given)
	if err != nil {
		return nil, fault.New(fault.Invalid, "file policy: work dir %s: %w", p.WorkDir, err)
	}
	if fi, err := os.Stat(canon); err != nil || !fi.IsDir() {
		return nil, fault.New(fault.Invalid, "file policy: work dir %s is not a directory", p.WorkDir)
	}
	c := &checker{
		workDir:  canon,
		given:    given,
		maxRead:  orDefault(p.MaxReadBytes, DefaultMaxReadBytes),
		maxWrite: orDefault(p.MaxWriteBytes, DefaultMaxWriteBytes),
		realPath: fdRealPath,
	}
	if c.read, c.readShown, err = c.compileRules("read", p.Read); err != nil {
		return nil, err
	}
	if c.write, c.writeShown, err = c.compileRules("write", p.Write); err != nil {
		return nil, err
	}
	for _, pat := range slices.Concat(DefaultProtect, p.Protect) {
		for _, form := range c.absPatterns(pat) {
			g, err := compileGlob(form, true)
			if err != nil {
				return nil, fault.New(fault.Invalid, "file policy: protect: %w", err)
			}
			c.protect = append(c.protect, g)
		}
	}
	return c, nil
}

func orDefault(v, def int64) int64 {
	if v <= 0 {
		return def
	}
	return v
}

// compileRules compiles an allow list; nil means all of the working directory.
func (c *checker) compileRules(kind string, pats []string) ([]rule, []string, error) {
	if pats == nil {
		pats = []string{"**"}
	}
	var rules []rule
	var shown []string
	for _, pat := range pats {
		forms := c.absPatterns(pat)
		var r rule
		for _, form := range forms {
			g, err := compileGlob(form, false)
			if err != nil {
				return nil, nil, fault.New(fault.Invalid, "file policy: %s: %w", kind, err)
			}
			r.globs = append(r.globs, g)
			for _, pre := range g.Roots() {
				r.prefixes = append(r.prefixes, filepath.FromSlash(pre))
			}
		}
		rules = append(rules, r)
		shown = append(shown, forms[0])
	}
	return rules, shown, nil
}

// absPatterns makes a glob absolute: relative globs are joined to the canonical working
// directory, escaped so that its name is matched literally. It returns the pattern as written
// and, when the literal leading directories of the pattern go through symlinks, a second form
// with their real path, because the tools also check the real paths of the files they open.
func (c *checker) absPatterns(pat string) []string {
	pat = filepath.ToSlash(pat)
	if !strings.HasPrefix(pat, "/") {
		pat = escapeGlob(filepath.ToSlash(c.workDir)) + "/" + pat
	}
	pat = cleanPattern(pat)
	lit, rest := literalHead(pat)
	real := filepath.ToSlash(canonicalPrefix(filepath.FromSlash(lit)))
	if real == lit {
		return []string{pat}
	}
	if rest == "" {
		return []string{pat, escapeGlob(real)}
	}
	return []string{pat, cleanPattern(escapeGlob(real) + "/" + rest)}
}

// literalHead splits an absolute slash pattern into its leading segments without wildcards or
// braces (unescaped, as a path) and the pattern text after them.
func literalHead(pat string) (lit, rest string) {
	segs := strings.Split(strings.TrimPrefix(pat, "/"), "/")
	var head []string
	for i, s := range segs {
		if strings.ContainsAny(s, "{},") {
			return "/" + strings.Join(head, "/"), strings.Join(segs[i:], "/")
		}
		l, ok := literalSegment(s)
		if !ok {
			return "/" + strings.Join(head, "/"), strings.Join(segs[i:], "/")
		}
		head = append(head, l)
	}
	return "/" + strings.Join(head, "/"), ""
}

// cleanPattern cleans a slash pattern lexically.
func cleanPattern(p string) string {
	return filepath.ToSlash(filepath.Clean(filepath.FromSlash(p)))
}

// canonicalPrefix resolves symlinks in the longest existing part of dir, so that an allowed
// directory configured through a symlink (say /tmp on macOS) compares with real paths.
func canonicalPrefix(dir string) string {
	dir = filepath.Clean(dir)
	tail := ""
	for cur := dir; ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, tail)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return dir
		}
		tail = filepath.Join(filepath.Base(cur), tail)
		cur = parent
	}
}

// Layers and rules of the file tools' refusals, as the audit record shows them (see
// tool.Refusal). The rules besides the path lists (sandbox.paths.read, sandbox.paths.write)
// are the fixed checks of this package.
const (
	layerRoot    = "L1 os.Root"
	layerSize    = "L1 size gate"
	ruleProtect  = "protect"
	ruleSymlink  = "no unverifiable symlinks"
	ruleEscape   = "os.Root containment"
	ruleRace     = "open race"
	ruleRegular  = "regular files only"
	ruleHardLink = "no append through hard links"
	ruleMaxWrite = "max_write_bytes"
)

// deniedf returns a refusal by the file policy under rule, in words a model can act on.
func deniedf(rule, format string, args ...any) error {
	return tool.Refusef(layerRoot, rule, format, args...)
}
