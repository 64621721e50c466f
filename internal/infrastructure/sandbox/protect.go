package sandbox

import (
	"errors"
	"io/fs"
	"maps"
	"os"
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
	// Walks do not enter .git: a root inside one (.git/modules) is walked on its own.
	inGit := func(r string) bool { return strings.Contains(r+"/", "/.git/") }
	all := slices.Collect(maps.Keys(roots))
	walks := append(minimalRoots(slices.DeleteFunc(slices.Clone(all), inGit)), slices.DeleteFunc(all, func(r string) bool { return !inGit(r) })...)
	visited := 0
	for _, root := range walks {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable or vanished: nothing to mask there
			}
			if visited++; visited > maxProtectWalk {
				return errWalkLimit
			}
			if matchAny(deep, p) {
				matches = append(matches, p)
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() && d.Name() == ".git" {
				// A nested repository: its hooks and config, not its objects.
				children, _ := os.ReadDir(p)
				for _, c := range children {
					if child := filepath.Join(p, c.Name()); matchAny(deep, child) {
						matches = append(matches, child)
					}
				}
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

// matchAny reports whether the path p matches one of the split patterns, without regard to
// case. The last segment is tried first: it rules out nearly every entry without splitting
// the path.
func matchAny(pats [][]string, p string) bool {
	name := strings.ToLower(filepath.Base(p))
	return slices.ContainsFunc(pats, func(pat []string) bool {
		if last := pat[len(pat)-1]; last != "**" {
			if ok, _ := path.Match(last, name); !ok {
				return false
			}
		}
		return matchSegments(pat, splitPath(strings.ToLower(p)))
	})
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

// gitSafeKeys are the keys of a repository's git config that a tool process still sees when
// the config is hidden: what git needs to read the repository at all (its format, object
// hash, ref storage), nothing that names a program, a path, a remote or a credential.
var gitSafeKeys = map[string][]string{
	"core":       {"repositoryformatversion", "bare", "filemode", "symlinks", "ignorecase", "precomposeunicode", "logallrefupdates"},
	"extensions": {"objectformat", "refstorage"},
}

// gitConfigMasks returns, for each hidden path that is a git config (.git/config, and a
// submodule's .git/modules/NAME/config), the content of its mask: its safe keys only
// (safeGitConfig), so that git still reads SHA-256 and reftable repositories.
func gitConfigMasks(targets []string) map[string][]byte {
	out := map[string][]byte{}
	for _, p := range targets {
		if filepath.Base(p) != "config" || !strings.Contains(p, "/.git/") {
			continue
		}
		data, err := os.ReadFile(p)
		if err == nil && len(data) <= 1<<20 {
			out[p] = safeGitConfig(data)
		}
	}
	return out
}

// safeGitConfig keeps the gitSafeKeys of a git config file whose values are plain words;
// every other line (subsections, includes, quoted or continued values) is dropped.
func safeGitConfig(data []byte) []byte {
	var b strings.Builder
	section, written := "", ""
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			section = strings.ToLower(strings.TrimSpace(strings.Trim(line, "[]")))
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		key, value = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(value)
		if !ok || !slices.Contains(gitSafeKeys[section], key) || !plainWord(value) {
			continue
		}
		if written != section {
			b.WriteString("[" + section + "]\n")
			written = section
		}
		b.WriteString("\t" + key + " = " + value + "\n")
	}
	return []byte(b.String())
}

func plainWord(s string) bool {
	return s != "" && len(s) <= 64 && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == ""
}
