package file

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/infrastructure/pathglob"
)

// maxBraceExpansions bounds how many patterns one glob may expand into, so that a pattern like
// {a,b}{a,b}{a,b}... cannot make matching slow.
const maxBraceExpansions = 256

// glob is one compiled path pattern. Patterns are slash-separated; `**` as a whole segment
// matches zero or more segments, `*` and `?` match within one segment, `[...]` is a character
// class and `{a,b}` an alternation (expanded at compile time). A backslash escapes the next
// character.
type glob struct {
	raw   string      // the pattern as shown in messages
	alts  [][]string  // brace-expanded alternatives, each split into segments
	heads [][]string  // per alternative: its leading literal segments, unescaped
	tails [][]segment // per alternative: the segments after the head
	fold  bool        // match case-insensitively
}

// segment is one compiled pattern segment; literal ones compare by equality.
type segment struct {
	pat   string
	lit   string
	isLit bool
}

// compileGlob compiles a slash-separated pattern. fold makes the match case-insensitive (used
// for protected paths, so .ENV is .env on case-insensitive file systems).
func compileGlob(pattern string, fold bool) (*glob, error) {
	if pattern == "" {
		return nil, fmt.Errorf("empty glob pattern")
	}
	if strings.ContainsRune(pattern, 0) {
		return nil, fmt.Errorf("glob %q contains a NUL byte", pattern)
	}
	src := pattern
	if fold {
		src = strings.ToLower(src)
	}
	expanded, err := expandBraces(src)
	if err != nil {
		return nil, fmt.Errorf("glob %q: %w", pattern, err)
	}
	g := &glob{raw: pattern, fold: fold}
	for _, e := range expanded {
		segs := splitSegments(e)
		for i, s := range segs {
			segs[i] = shellClass(s)
			s = segs[i]
			if _, err := path.Match(s, ""); err != nil {
				return nil, fmt.Errorf("glob %q: bad segment %q: %w", pattern, s, err)
			}
		}
		g.alts = append(g.alts, segs)
		head, _ := literalPrefix(segs)
		g.heads = append(g.heads, head)
		var tail []segment
		for _, s := range segs[len(head):] {
			l, ok := literalSegment(s)
			tail = append(tail, segment{pat: s, lit: l, isLit: ok && s != "**"})
		}
		g.tails = append(g.tails, tail)
	}
	return g, nil
}

// splitSegments splits a slash path into its non-empty segments, dropping "." segments. An
// absolute path keeps no leading marker: callers compare absolute paths with absolute patterns.
func splitSegments(p string) []string {
	parts := strings.Split(p, "/")
	out := parts[:0]
	for _, s := range parts {
		if s != "" && s != "." {
			out = append(out, s)
		}
	}
	return out
}

// Match reports whether the slash path name matches the pattern.
func (g *glob) Match(name string) bool {
	if g.fold {
		name = strings.ToLower(name)
	}
	return g.matchSplit(splitSegments(name))
}

// matchSplit is Match on a path already split into segments (and lower-cased for a folding
// glob), so that callers checking one path against many globs split it once.
func (g *glob) matchSplit(segs []string) bool {
	for i, tail := range g.tails {
		head := g.heads[i]
		if len(segs) < len(head) || !slices.Equal(segs[:len(head)], head) {
			continue
		}
		if matchSegments(tail, segs[len(head):]) {
			return true
		}
	}
	return false
}

// CouldContain reports whether some path strictly below the directory dir could match the
// pattern: the walk and listing tools use it to descend only where matches can exist.
func (g *glob) CouldContain(dir string) bool {
	if g.fold {
		dir = strings.ToLower(dir)
	}
	segs := splitSegments(dir)
	for i, tail := range g.tails {
		head := g.heads[i]
		if len(segs) < len(head) {
			if slices.Equal(segs, head[:len(segs)]) {
				return true // the rest of the head lies below dir
			}
			continue
		}
		if slices.Equal(segs[:len(head)], head) && couldExtend(tail, segs[len(head):]) {
			return true
		}
	}
	return false
}

// Roots returns, for each alternative, the directory where an os.Root for the paths it matches
// opens: its static prefix, or the parent of the prefix when the alternative has no wildcard at
// all and so names one path, which may be a file.
func (g *glob) Roots() []string {
	seen := map[string]bool{}
	var out []string
	for _, alt := range g.alts {
		lit, whole := literalPrefix(alt)
		if whole && len(lit) > 0 {
			lit = lit[:len(lit)-1]
		}
		p := "/" + strings.Join(lit, "/")
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// literalPrefix returns the unescaped leading segments of alt without wildcards, and whether
// that is all of alt.
func literalPrefix(alt []string) ([]string, bool) {
	var lit []string
	for _, s := range alt {
		l, ok := literalSegment(s)
		if !ok {
			return lit, false
		}
		lit = append(lit, l)
	}
	return lit, true
}

// StaticPrefixes returns, for each alternative, the leading segments that contain no
// wildcard, unescaped and joined as an absolute slash path ("/" when the first segment is
// already a wildcard). The file tools open their os.Root there.
func (g *glob) StaticPrefixes() []string {
	seen := map[string]bool{}
	var out []string
	for _, alt := range g.alts {
		lit, _ := literalPrefix(alt)
		p := "/" + strings.Join(lit, "/")
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// literalSegment returns the segment with escapes removed when it has no wildcard.
func literalSegment(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '*', '?', '[':
			return "", false
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// matchSegments reports whether the pattern segments p match the name segments s, with `**`
// matching any number of segments (pathglob: linear in the product of their lengths).
func matchSegments(p []segment, s []string) bool {
	return pathglob.Match(p, s, segment.isAny, segment.match)
}

// couldExtend reports whether some name with the segments d as a strict prefix could match p.
func couldExtend(p []segment, d []string) bool {
	// reach[i]: p[:i] matches d exactly.
	reach := make([]bool, len(p)+1)
	col := make([]bool, len(d)+1) // p[:i] matches d[:j], for the current i
	next := make([]bool, len(d)+1)
	col[0] = true
	reach[0] = len(d) == 0
	for i := 1; i <= len(p); i++ {
		seg := p[i-1]
		next[0] = seg.pat == "**" && col[0]
		for j := 1; j <= len(d); j++ {
			if seg.pat == "**" {
				next[j] = col[j] || next[j-1]
				continue
			}
			next[j] = col[j-1] && seg.match(d[j-1])
		}
		col, next = next, col
		reach[i] = col[len(d)]
	}
	for i := 0; i < len(p); i++ {
		if reach[i] {
			return true // the remaining segments p[i:] can match something below d
		}
	}
	return len(p) > 0 && reach[len(p)] && p[len(p)-1].pat == "**"
}

// shellClass rewrites the shell's negated class "[!...]" as path.Match's "[^...]".
func shellClass(s string) string {
	if !strings.Contains(s, "[!") {
		return s
	}
	b := []byte(s)
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '[':
			if i+1 < len(b) && b[i+1] == '!' {
				b[i+1] = '^'
			}
		}
	}
	return string(b)
}

// isAny reports whether s stands for any number of segments.
func (s segment) isAny() bool { return s.pat == pathglob.Any }

// match matches one name; `**` inside a longer segment acts like `*`.
func (s segment) match(name string) bool {
	if s.isLit {
		return s.lit == name
	}
	ok, err := path.Match(s.pat, name)
	return err == nil && ok
}

// expandBraces expands {a,b} alternations, nested or not, honouring backslash escapes.
func expandBraces(p string) ([]string, error) {
	open := -1
	depth := 0
	var commas []int
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
				commas = commas[:0]
			}
			depth++
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		case '}':
			if depth == 0 {
				return nil, fmt.Errorf("unmatched '}'")
			}
			depth--
			if depth == 0 {
				return expandAt(p, open, i, commas)
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unmatched '{'")
	}
	return []string{p}, nil
}

// expandAt expands the outermost group p[open:close] whose top-level commas are at commas,
// then recurses on each result for further groups.
func expandAt(p string, open, close int, commas []int) ([]string, error) {
	head, tail := p[:open], p[close+1:]
	var options []string
	start := open + 1
	for _, c := range commas {
		options = append(options, p[start:c])
		start = c + 1
	}
	options = append(options, p[start:close])
	var out []string
	for _, o := range options {
		more, err := expandBraces(head + o + tail)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
		if len(out) > maxBraceExpansions {
			return nil, fmt.Errorf("expands to more than %d patterns", maxBraceExpansions)
		}
	}
	return out, nil
}

// escapeGlob escapes every pattern metacharacter in a literal path, so a working directory
// named "a[1]" is matched literally when relative globs are joined to it.
func escapeGlob(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '*', '?', '[', ']', '{', '}', '\\', ',':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
