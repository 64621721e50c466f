package sandbox

import (
	"errors"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// maxProtectWalk bounds the directory entries the helper visits to find the matches of the
// protected patterns with "**" (such as **/.env): a walk per call must stay cheap. What lies
// beyond it is not masked by the OS layer; Applied.Notes says so.
const maxProtectWalk = 200_000

// errWalkLimit stops a protect walk at maxProtectWalk entries.
var errWalkLimit = errors.New("walk limit reached")

// ProtectMatches returns the existing paths that match the protected patterns (absolute,
// filepath.Match syntax per segment, "**" for any number of segments, matched without regard
// to case, as the file tools do), in walk order. Patterns with "**" are looked for by walking
// their static prefix without following symbolic links and without entering a .git
// directory (the git patterns are static) or a directory already matched; the rest by
// filepath.Glob. truncated says a walk stopped at maxProtectWalk entries. The process
// helper's mount namespace and the container backend hide what it returns.
func ProtectMatches(patterns []string) (matches []string, truncated bool) {
	var deep [][]string
	roots := map[string]bool{}
	for _, pat := range patterns {
		if !strings.Contains(pat, "**") {
			found, _ := filepath.Glob(caseFold(pat)) // a bad pattern matches nothing
			matches = append(matches, found...)
			continue
		}
		deep = append(deep, splitPath(strings.ToLower(pat)))
		roots[staticPrefix(pat)] = true
	}
	visited := 0
	for _, root := range minimalRoots(slices.Collect(maps.Keys(roots))) {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable or vanished: nothing to mask there
			}
			if visited++; visited > maxProtectWalk {
				return errWalkLimit
			}
			segs := splitPath(strings.ToLower(p))
			if slices.ContainsFunc(deep, func(pat []string) bool { return matchSegments(pat, segs) }) {
				matches = append(matches, p)
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		})
		if errors.Is(err, errWalkLimit) {
			truncated = true
			break
		}
	}
	slices.Sort(matches)
	return slices.Compact(matches), truncated
}

// caseFold turns every letter of a filepath.Match pattern into a [xX] class, so that Glob
// matches without regard to case; letters already inside a class are left alone.
func caseFold(pat string) string {
	var b strings.Builder
	inClass := false
	for _, r := range pat {
		switch {
		case r == '[':
			inClass = true
		case r == ']':
			inClass = false
		case !inClass && strings.ToLower(string(r)) != strings.ToUpper(string(r)):
			b.WriteString("[" + strings.ToLower(string(r)) + strings.ToUpper(string(r)) + "]")
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func splitPath(p string) []string { return strings.Split(strings.Trim(p, "/"), "/") }

// matchSegments matches path segments against pattern segments, "**" standing for any
// number of segments (none included).
func matchSegments(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if matchSegments(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], segs[0]); err != nil || !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
