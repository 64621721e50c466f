// Package pathglob matches a path, split into its segments, against a pattern whose "**"
// segments stand for any number of segments (none included), for every part of awf that
// matches such patterns: the file tools' globs, which a model writes, and the sandbox's
// protected and visible paths, which a workflow writes. Trying each place a "**" could end,
// as a backtracking match does, costs time exponential in the number of "**": eight of them
// against a path 40 segments deep took 13 s. Match is a dynamic programme over the pattern's
// and the path's prefixes instead, in time proportional to their product.
package pathglob

// Any is the pattern segment that stands for any number of path segments.
const Any = "**"

// Match reports whether the pattern segments pat match the path segments segs. isAny tells
// the segments that stand for any number of path segments; match compares one other pattern
// segment with one path segment.
func Match[P any](pat []P, segs []string, isAny func(P) bool, match func(P, string) bool) bool {
	// prev[j]: pat[:i-1] matches segs[:j]; cur[j]: pat[:i] matches segs[:j].
	var buf [2 * 64]bool
	n := len(segs) + 1
	var prev, cur []bool
	if 2*n <= len(buf) {
		prev, cur = buf[:n], buf[n:2*n] // most paths: no allocation
	} else {
		prev, cur = make([]bool, n), make([]bool, n)
	}
	prev[0] = true
	for _, p := range pat {
		anyP := isAny(p)
		cur[0] = anyP && prev[0]
		for j := 1; j < n; j++ {
			if anyP {
				cur[j] = prev[j] || cur[j-1]
				continue
			}
			cur[j] = prev[j-1] && match(p, segs[j-1])
		}
		prev, cur = cur, prev
	}
	return prev[n-1]
}
