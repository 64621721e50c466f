package workflow

import (
	"fmt"
	"sort"
	"strings"

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
// plausible misspelling, else "".
func Suggest(got string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := distance(strings.ToLower(got), strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	limit := max(1, min(3, len(got)/3))
	if bestD < 0 || bestD > limit {
		return ""
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

// distance is the Damerau (optimal string alignment) edit distance.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
