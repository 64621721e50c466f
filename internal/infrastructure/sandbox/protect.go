package sandbox

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/awf-dev/awf/internal/infrastructure/pathglob"
)

// maxProtectWalk bounds the directory entries visited to find the matches of the protected
// patterns with "**" (such as **/.env): a walk per call must stay cheap. What lies beyond it is
// not masked by the OS layer; Applied.Notes says so.
const maxProtectWalk = 200_000

// errWalkLimit stops a protect walk at maxProtectWalk entries.
var errWalkLimit = errors.New("walk limit reached")

// ProtectMatches returns the existing paths that match the protected patterns, reading every
// directory of the walk (ProtectIndex.Matches without a cache, every letter of the patterns
// matched without regard to case).
func ProtectMatches(patterns []string) (matches []string, truncated bool) {
	return (&ProtectIndex{statOnly: true}).Matches("", patterns) // one walk: nothing to watch for
}

// ProtectIndex finds the protected paths of working directories call after call: it keeps,
// per directory walked, what the walk found there, and reads a directory again only when it
// changed: inotify says so where it can watch the directory (dirWatch, Linux), lstat
// otherwise (another inode, device, ctime or mtime). Creating, removing or
// renaming an entry changes its directory's ctime and mtime, and nothing but the clock sets
// ctime, so a protected file created by an earlier call (or anything else) is found whatever
// timestamps that call set. A directory whose ctime was less than racyWindow old when it was
// read (or lies in the future) is read again the next time: timestamps are coarse, and a
// change in the same tick would not show. One per run (the process runner's); the zero value
// is ready and safe for concurrent use.
type ProtectIndex struct {
	mu sync.Mutex
	// sets are the records by pattern set, then by directory.
	sets map[string]map[string]*dirRecord
	// watch tells which directories changed without a system call per directory (inotify,
	// Linux); nil until the first walk, or when it cannot be had: then lstat tells.
	watch   *dirWatch
	watched bool // watch was tried
	// statOnly never watches (tests of the lstat comparison).
	statOnly bool
	// eager watches from the first walk rather than after watchFrom directories (tests).
	eager bool
	// last is the result of the last walk of each pattern set when every directory it went
	// through was watched and nothing stopped it: while the watch's generation is the same,
	// nothing it walked changed, and the next Matches gives it again without walking.
	last map[string]walkResult
	// skips counts the walks last spared, for the tests.
	skips int
	now   func() time.Time // time.Now when nil; tests move it on
	// reads counts the directories read, stats those compared with lstat (or read) and
	// entries the entries read: the walks' cost, after which the index watches (watchFrom).
	reads, stats, entries int
}

// walkResult is what a walk found, and the watch's generation when it ran.
type walkResult struct {
	gen       uint64
	matches   []string
	truncated bool
}

// Close stops watching the directories; the index still works after it, with lstat.
func (x *ProtectIndex) Close() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.watch.close()
	x.watch = nil
}

// watchFrom is how much the walks of an index cost, in directories compared with lstat plus
// entries read, before it starts watching the directories. Watching costs once what walking
// costs per call: the kernel frees an inotify instance that had watches only after a grace
// period of a few timer ticks, and the process waits for it when it closes the instance or
// exits (12 to 18 ms on the build VM, against about 1.3 µs to compare a directory or read an
// entry). So an index watches once its walks have spent about that: in a workspace of 5,000
// directories from the third call on, where a directory of 5,000 entries changes between
// calls (and is read again at each) from the third, in a small quiet one never, and a run of
// a few calls pays for neither.
const watchFrom = 10_000

// racyWindow is how old a directory's ctime must be when it is read for the record to be
// trusted next time without reading the directory again.
const racyWindow = time.Second

// dirRecord is what one read of a directory gave the walk.
type dirRecord struct {
	key   dirKey
	stamp watchStamp // the watch's state when the record was checked
	racy  bool       // read too soon after a change: read it again next time
	items []walkItem // the entries that matter, in name order
	tail  int        // entries after the last item
}

// walkItem is an entry of a directory that the walk acts on: a match, a nested repository's
// .git, or a directory to walk into; before counts the other entries before it.
type walkItem struct {
	path   string
	kind   itemKind
	before int
}

type itemKind uint8

const (
	itemNone itemKind = iota // an entry the walk only counts
	itemMatch
	itemGit
	itemDir
)

// Matches returns the existing paths that match the protected patterns (absolute,
// filepath.Match syntax per segment, "**" for any number of segments, matched without regard
// to case as the file tools do; the segments of dir, the working directory, are taken as they
// are), sorted. Patterns with "**" are looked for by walking their static prefix without
// following symbolic links and without entering a .git directory (the git patterns are
// static) or a directory already matched (by a walk, or whole by a static pattern, as .awf:
// its mount hides everything beneath it); the rest by filepath.Glob. truncated says a walk
// stopped at maxProtectWalk entries. The process helper's mount namespace hides what it
// returns.
func (x *ProtectIndex) Matches(dir string, patterns []string) (matches []string, truncated bool) {
	var deep [][]string
	var set strings.Builder
	roots := map[string]bool{}
	hidden := map[string]bool{} // directories matched whole: the walks do not enter them
	for _, pat := range patterns {
		if !strings.Contains(pat, "**") {
			found, _ := filepath.Glob(foldBelow(dir, pat)) // a bad pattern matches nothing
			matches = append(matches, found...)
			for _, f := range found {
				if fi, err := os.Lstat(f); err == nil && fi.IsDir() {
					hidden[f] = true
					set.WriteString("=" + f + "\x00") // the records depend on them
				}
			}
			continue
		}
		deep = append(deep, splitPath(strings.ToLower(pat)))
		roots[staticPrefix(pat)] = true
		set.WriteString(pat + "\x00")
	}
	// Walks do not enter .git: a root inside one (.git/modules) is walked on its own.
	inGit := func(r string) bool { return strings.Contains(r+"/", "/.git/") }
	all := slices.Collect(maps.Keys(roots))
	walks := append(minimalRoots(slices.DeleteFunc(slices.Clone(all), inGit)), slices.DeleteFunc(all, func(r string) bool { return !inGit(r) })...)
	x.mu.Lock()
	defer x.mu.Unlock()
	now := time.Now
	if x.now != nil {
		now = x.now
	}
	if !x.watched && !x.statOnly && len(deep) > 0 && (x.eager || x.stats+x.entries >= watchFrom) {
		x.watch, x.watched = newDirWatch(), true
	}
	x.watch.drain()
	key := set.String()
	gen, watching := x.watch.generation()
	if last, ok := x.last[key]; ok && watching && last.gen == gen {
		x.skips++
		matches = append(matches, last.matches...)
		slices.Sort(matches)
		return slices.Compact(matches), last.truncated
	}
	delete(x.last, key)
	w := &protectWalk{deep: indexPatterns(deep), hidden: hidden, old: x.sets[key], seen: map[string]*dirRecord{}, now: now(),
		watch: x.watch, reads: &x.reads, stats: &x.stats, entries: &x.entries}
	for _, root := range walks {
		// A root reached through a symbolic link (a working directory under a linked
		// directory) is walked: only the links beneath it are not followed.
		fi, err := os.Stat(root)
		if err != nil || !fi.IsDir() {
			w.unwatched = true // its creation would be an event in no watched directory
		}
		if err != nil {
			continue // missing: nothing to mask there
		}
		if err := w.visit(root, w.kind(root, fi.IsDir())); errors.Is(err, errWalkLimit) {
			truncated = true
			break
		}
	}
	if len(deep) > 0 {
		if x.sets == nil {
			x.sets = map[string]map[string]*dirRecord{}
		}
		x.sets[key] = w.seen // the directories of this walk only: the rest went away
		if watching && !truncated && !w.unwatched {
			if x.last == nil {
				x.last = map[string]walkResult{}
			}
			x.last[key] = walkResult{gen: gen, matches: slices.Clone(w.matches)}
		}
	}
	matches = append(matches, w.matches...)
	slices.Sort(matches)
	return slices.Compact(matches), truncated
}

// protectWalk is one walk of Matches.
type protectWalk struct {
	deep   patternIndex
	lower  []byte                // matchAny's buffer
	hidden map[string]bool       // directories a static pattern matched: hidden whole, not entered
	old    map[string]*dirRecord // the records of the last walk with these patterns
	seen   map[string]*dirRecord // the records of this one
	now    time.Time
	watch  *dirWatch // nil: lstat decides
	// unwatched says a directory of the walk (or a root) has no watch: a change there would
	// make no event, so the result is not kept for the next Matches.
	unwatched bool
	reads     *int
	stats     *int
	entries   *int
	visited   int
	matches   []string
}

// visit counts the entry p, then takes it as what kind says: a match, a nested repository's
// .git (its hooks and config, not its objects) or a directory to walk into.
func (w *protectWalk) visit(p string, kind itemKind) error {
	if w.visited++; w.visited > maxProtectWalk {
		return errWalkLimit
	}
	switch kind {
	case itemMatch:
		w.matches = append(w.matches, p)
	case itemGit:
		w.matches = append(w.matches, w.record(p, true).paths()...)
	case itemDir:
		return w.dir(p)
	}
	return nil
}

// kind says what the walk does with the entry p.
func (w *protectWalk) kind(p string, isDir bool) itemKind {
	switch {
	case w.deep.matchAny(p, &w.lower), isDir && w.hidden[p]:
		return itemMatch
	case isDir && filepath.Base(p) == ".git":
		return itemGit
	case isDir:
		return itemDir
	}
	return itemNone
}

// dir walks the directory p, from its record.
func (w *protectWalk) dir(p string) error {
	rec := w.record(p, false)
	for _, it := range rec.items {
		if w.visited += it.before; w.visited > maxProtectWalk {
			return errWalkLimit
		}
		if err := w.visit(it.path, it.kind); err != nil {
			return err
		}
	}
	if w.visited += rec.tail; w.visited > maxProtectWalk {
		return errWalkLimit
	}
	return nil
}

// record returns the record of the directory p: the last walk's when p has not changed since,
// or a new one. The record of a nested repository's .git (git) holds its matching children.
//
// A watched directory with no event since it was last checked is taken as it was, with no
// system call. Otherwise it is watched first (add), then compared with lstat or read: a change
// after that is an event for the next walk.
func (w *protectWalk) record(p string, git bool) *dirRecord {
	old := w.old[p]
	if old != nil && w.watch.fresh(p, old.stamp) {
		w.seen[p] = old
		return old
	}
	stamp := w.watch.add(p)
	w.unwatched = w.unwatched || !stamp.watched()
	key, keyed := statDirKey(p)
	*w.stats++
	if keyed && old != nil && !old.racy && old.key == key {
		old.stamp = stamp
		w.seen[p] = old
		return old
	}
	// Racy: a change in the tick it was read would not show in lstat; with a watch, events
	// decide and the record stands until one comes.
	rec := &dirRecord{key: key, racy: !keyed || !key.settled(w.now), stamp: stamp}
	entries, _ := os.ReadDir(p) // unreadable or vanished: nothing to mask there
	*w.reads++
	*w.entries += len(entries)
	for _, e := range entries {
		child := filepath.Join(p, e.Name())
		kind := w.kind(child, e.IsDir())
		switch {
		case git && kind != itemMatch:
			continue // a repository's own entries are not walked, nor counted
		case kind == itemNone:
			rec.tail++
			continue
		}
		rec.items = append(rec.items, walkItem{path: child, kind: kind, before: rec.tail})
		rec.tail = 0
	}
	w.seen[p] = rec
	return rec
}

// paths are the paths of the record's items.
func (r *dirRecord) paths() []string {
	out := make([]string, len(r.items))
	for i, it := range r.items {
		out[i] = it.path
	}
	return out
}

// foldBelow is caseFold for the segments of pat beneath dir; dir's own are taken as they are.
func foldBelow(dir, pat string) string {
	if rest, ok := strings.CutPrefix(pat, dir+"/"); ok && dir != "" {
		return dir + "/" + caseFold(rest)
	}
	return caseFold(pat)
}

// patternIndex holds split patterns by their leading literal segments (those with no glob
// character), joined with "/": a path can match a pattern only if its own leading segments
// are those, so it is compared with the patterns filed under one of its prefixes, not with
// all. Every entry of a walk was compared with every pattern, which made a policy of
// thousands of protect patterns cost their number times the entries at every call.
type patternIndex struct {
	byKey map[string][][]string
	// depths are the numbers of segments the keys have, ascending: only prefixes of those
	// lengths are looked up (a policy's patterns mostly share one, the workspace's).
	depths []int
}

func indexPatterns(pats [][]string) patternIndex {
	x := patternIndex{byKey: map[string][][]string{}}
	for _, pat := range pats {
		n := 0
		for n < len(pat) && pat[n] != "**" && !strings.ContainsAny(pat[n], `*?[\`) {
			n++
		}
		key := strings.Join(pat[:n], "/")
		x.byKey[key] = append(x.byKey[key], pat)
		if !slices.Contains(x.depths, n) {
			x.depths = append(x.depths, n)
		}
	}
	slices.Sort(x.depths)
	return x
}

// matchAny reports whether the path p matches one of the patterns, without regard to case.
// It is called for every entry a walk reads, so it allocates nothing for most of them: p is
// lowered into buf (reused from call to call), the patterns are looked up by the lowered
// path's prefixes of the keys' lengths (map look-ups of a converted byte slice do not
// allocate), and the last segment is tried first, before the path is split.
func (x patternIndex) matchAny(p string, buf *[]byte) bool {
	if len(x.depths) == 0 {
		return false
	}
	*buf = appendLower((*buf)[:0], p)
	trimmed := bytes.Trim(*buf, "/") // what splitPath splits
	m := pathMatch{lower: *buf, name: strings.ToLower(filepath.Base(p))}
	d := 0
	if x.depths[0] == 0 {
		if m.any(x.byKey[""]) {
			return true
		}
		d++
	}
	// trimmed[:i] has segs segments where i is the end of trimmed or a "/".
	for i, segs := 0, 0; i <= len(trimmed) && d < len(x.depths); i++ {
		if i < len(trimmed) && trimmed[i] != '/' {
			continue
		}
		if segs++; segs == x.depths[d] {
			if m.any(x.byKey[string(trimmed[:i])]) {
				return true
			}
			d++
		}
	}
	return false
}

// appendLower appends s lowered as strings.ToLower lowers it.
func appendLower(b []byte, s string) []byte {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return append(b, strings.ToLower(s)...)
		}
	}
	for i := range len(s) {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// pathMatch is one path being matched: lowered, its last segment, and its segments once a
// pattern needs them.
type pathMatch struct {
	lower []byte
	name  string
	segs  []string
}

// any reports whether the path matches one of pats.
func (m *pathMatch) any(pats [][]string) bool {
	for _, pat := range pats {
		if last := pat[len(pat)-1]; last != "**" {
			if ok, _ := path.Match(last, m.name); !ok {
				continue
			}
		}
		if m.segs == nil {
			m.segs = splitPath(string(m.lower))
		}
		if matchSegments(pat, m.segs) {
			return true
		}
	}
	return false
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
// number of segments (none included), the others filepath.Match patterns.
func matchSegments(pat, segs []string) bool {
	return pathglob.Match(pat, segs, isAnySegments, matchSegment)
}

func isAnySegments(p string) bool { return p == pathglob.Any }

func matchSegment(p, seg string) bool {
	ok, err := path.Match(p, seg)
	return err == nil && ok
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
