package workflow

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// Severity says whether a problem stops the workflow.
type Severity int

// Severities.
const (
	SeverityError Severity = iota
	SeverityWarning
)

// Problem is one finding about a workflow, pointing at its source like a compiler message.
type Problem struct {
	Pos      Pos
	Field    string // dotted path such as "steps[2].command", when known
	Msg      string
	Hint     string // e.g. `did you mean "prompt"?`
	Severity Severity
}

func (p Problem) String() string {
	var b strings.Builder
	if p.Pos.File != "" {
		b.WriteString(p.Pos.String() + ": ")
	}
	if p.Severity == SeverityWarning {
		b.WriteString("warning: ")
	}
	b.WriteString(p.Msg)
	if p.Hint != "" {
		b.WriteString(" (" + p.Hint + ")")
	}
	return b.String()
}

// Problems is every error found in one pass over a file, reported together. As an error it is
// of kind fault.Invalid.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// FaultKind classifies a Problems error as an invalid workflow.
func (ps Problems) FaultKind() fault.Kind { return fault.Invalid }

// Errors returns only the problems of error severity.
func (ps Problems) Errors() Problems {
	var out Problems
	for _, p := range ps {
		if p.Severity == SeverityError {
			out = append(out, p)
		}
	}
	return out
}

// Sort orders problems by file, line and column, keeping the order of equal positions.
func (ps Problems) Sort() {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i].Pos, ps[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

// Err returns the error problems as an error, or nil when there are none.
func (ps Problems) Err() error {
	errs := ps.Errors()
	if len(errs) == 0 {
		return nil
	}
	errs.Sort()
	return errs
}

// Suggest returns the candidate nearest to got by edit distance, if it is near enough to be a
// plausible misspelling, else "": the first of the nearest, at most 3 edits away (fewer for a
// short got). It is called for every unknown name of a file, with every name the file could
// have meant (its earlier steps, say), so a candidate whose length alone puts it too far is
// not compared, and a comparison stops as soon as it cannot beat the best so far: a workflow
// of 8,000 steps each naming a step that does not exist took 14 s when every pair was
// measured in full.
func Suggest(got string, candidates []string) string {
	limit := max(1, min(3, len(got)/3))
	g := []rune(strings.ToLower(got))
	best, bestD := "", limit+1
	var buf [64]rune
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if n := utf8.RuneCountInString(lc) - len(g); n >= bestD || -n >= bestD {
			continue // the distance is at least the difference in length
		}
		if d := distanceWithin(g, append(buf[:0], []rune(lc)...), bestD-1); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// DidYouMean formats Suggest's answer as a hint, or returns "".
func DidYouMean(got string, candidates []string) string {
	if s := Suggest(got, candidates); s != "" {
		return fmt.Sprintf("did you mean %q?", s)
	}
	return ""
}

// Hinter gives DidYouMean's hints for the problems of one file, comparing at most
// HintBudget candidates in all. Where both the names a problem could have meant and the
// problems grow with the file (references to steps that do not exist, each compared with
// every earlier step), hints for every problem would cost the square of the file's size;
// within the budget the first problems get their hints and the rest none, the same ones for
// the same file.
type Hinter struct{ left int }

// HintBudget is how many candidates a Hinter compares: about 0.1 s of comparisons.
const HintBudget = 1 << 19

// NewHinter returns a Hinter with the whole budget.
func NewHinter() *Hinter { return &Hinter{left: HintBudget} }

// DidYouMean is DidYouMean while the budget lasts, "" for candidates past what is left (a
// short list, an input's declared names, can still be compared once the workflow's steps
// cannot).
func (h *Hinter) DidYouMean(got string, candidates []string) string {
	if len(candidates) > h.left {
		return ""
	}
	h.left -= len(candidates)
	return DidYouMean(got, candidates)
}

// distanceWithin is the Damerau (optimal string alignment) edit distance between a and b
// when it is at most bound; otherwise some number above bound.
func distanceWithin(a, b []rune, bound int) int {
	var rows [3 * 65]int
	var prev2, prev, cur []int
	if n := len(b) + 1; n <= 65 {
		prev2, prev, cur = rows[:n], rows[n:2*n], rows[2*n:3*n]
	} else {
		prev2, prev, cur = make([]int, n), make([]int, n), make([]int, n)
	}
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		curMin := i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			curMin = min(curMin, cur[j])
		}
		// The rows' least cells never decrease (a cell comes from this row, or from the
		// one before plus one edit, whose least cell is at most one less than this row's):
		// once past bound, so is the distance.
		if curMin > bound {
			return bound + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
