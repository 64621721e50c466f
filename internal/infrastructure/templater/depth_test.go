package templater

import (
	"errors"
	"strings"
	"testing"
)

// TestExpressionDepth: expressions nested past maxExprDepth (brackets, prefix operators in a
// row) are refused at the bracket or operator that goes past it, before expr-lang parses
// them; what is inside a string literal does not count.
func TestExpressionDepth(t *testing.T) {
	n := maxExprDepth
	tests := []struct {
		name, src string
		refusedAt int // -1: compiles
	}{
		{"parentheses at the limit", strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + " == 1", -1},
		{"parentheses past it", strings.Repeat("(", n+1) + "1" + strings.Repeat(")", n+1), n},
		{"arrays past it", "len(" + strings.Repeat("[", n) + strings.Repeat("]", n) + ") == 1", 4 + n - 1},
		{"negations past it", strings.Repeat("!", n+1) + "true", n},
		{"not past it", strings.Repeat("not ", n+1) + "true", 4 * n},
		{"brackets in a string are text", `"` + strings.Repeat("(", 1000) + `" != ""`, -1},
		{"closed brackets do not add up", strings.Repeat("(1) + ", 1000) + "1 > 0", -1},
		{"binary minus is no prefix", strings.Repeat("1 - ", 1000) + "1 < 0", -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compileExpr(tc.src)
			var se *SyntaxError
			switch {
			case tc.refusedAt < 0 && err != nil:
				t.Fatalf("compileExpr: %v", err)
			case tc.refusedAt >= 0 && (!errors.As(err, &se) || !strings.Contains(se.Msg, "nested deeper than 256")):
				t.Fatalf("compileExpr error %v, want nested deeper than 256", err)
			case tc.refusedAt >= 0 && se.Offset != tc.refusedAt:
				t.Errorf("refused at %d, want %d", se.Offset, tc.refusedAt)
			}
		})
	}
}

// TestDeepExpressionRefusedBeforeParsing: 100,000 nested parentheses (265 MB of parser stack)
// are refused by the scan alone.
func TestDeepExpressionRefusedBeforeParsing(t *testing.T) {
	src := strings.Repeat("(", 100_000) + "1" + strings.Repeat(")", 100_000)
	allocs := testing.AllocsPerRun(3, func() {
		if _, err := compileExpr(src); err == nil {
			t.Fatal("compiled")
		}
	})
	if allocs > 10 {
		t.Errorf("%v allocations to refuse it; want the scan alone (at most 10)", allocs)
	}
}

// TestSyntaxErrorQuotesAShortenedExpression: the message quotes at most 120 bytes of the
// expression, cut at a character.
func TestSyntaxErrorQuotesAShortenedExpression(t *testing.T) {
	src := "inputs.x == " + strings.Repeat("é", 200) + " ==="
	_, err := compileExpr(src)
	if err == nil {
		t.Fatal("compiled")
	}
	if len(err.Error()) > 250 || !strings.Contains(err.Error(), `..."`) || strings.ContainsRune(err.Error(), '\uFFFD') {
		t.Errorf("error %q: want the expression cut to 120 bytes at a character", err)
	}
}
