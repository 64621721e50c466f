package shellsyntax

import (
	"errors"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

const deep = "nested deeper than 256 levels of ( and {; awf refuses scripts this deep"

func TestParseRefusesDeepNesting(t *testing.T) {
	nest := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "true" + strings.Repeat(close, n)
	}
	tests := []struct {
		name, src string
		want      string // the error, "" when src parses
	}{
		{"subshells at the limit", nest("(", ")", MaxDepth), ""},
		{"command substitutions at the limit", "echo " + nest("$(", ")", MaxDepth), ""},
		{"one past the limit", "echo " + nest("$(", ")", MaxDepth+1), "s.sh:1:519: nested deeper than 256 levels of ( and {; awf refuses scripts this deep"},
		{"braces and parentheses together", nest("{ (", ") }", MaxDepth/2+1), "s.sh:1:385: nested deeper than 256 levels of ( and {; awf refuses scripts this deep"},
		{"on a later line", "echo hi\n  " + nest("(", ")", MaxDepth+1), "s.sh:2:259: nested deeper than 256 levels of ( and {; awf refuses scripts this deep"},
		{"single quotes are text", "echo '" + strings.Repeat("(", 1000) + "'", ""},
		{"escaped parentheses are text", "echo " + strings.Repeat(`\(`, 1000), ""},
		{"an escaped quote does not end $'...'", "echo $'it\\'s' " + nest("(", ")", MaxDepth+1), "s.sh:1:271: nested deeper than 256 levels of ( and {; awf refuses scripts this deep"},
		{"an apostrophe in a comment hides nothing", "# it's\n" + nest("(", ")", MaxDepth+1), "s.sh:2:257: " + deep},
		{"a # inside a word starts no comment", "echo a#b " + nest("(", ")", MaxDepth+1), "s.sh:1:266: " + deep},
		{"an apostrophe in a here-document hides nothing", "cat <<EOF\ndon't\nEOF\n" + nest("(", ")", MaxDepth+1), "s.sh:4:257: " + deep},
		{"the same after <<- and tabs", "cat <<-EOF\n\tdon't\n\tEOF\n" + nest("(", ")", MaxDepth+1), "s.sh:4:257: " + deep},
		{"$( ) in a here-document counts", "cat <<EOF\n" + nest("$(", ")", MaxDepth+1) + "\nEOF\n", "s.sh:2:514: " + deep},
		{"a here-document of a few parentheses", "cat <<'EOF'\n(((\nEOF\necho ok", ""},
		{"closed levels do not add up", strings.Repeat("(true); ", 1000), ""},
		{"an ordinary parse error", "echo )", ordinary("echo )")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.src, "s.sh")
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Parse: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("Parse error %v, want %s", err, tc.want)
			}
			var pe syntax.ParseError
			if err != nil && !errors.As(err, &pe) {
				t.Errorf("error %T, want a syntax.ParseError (callers read its position)", err)
			}
		})
	}
}

// TestParseRefusesBeforeParsing: a script of 100,000 nested $( (300 KB, 900 MB to parse) is
// refused in a few allocations.
func TestParseRefusesBeforeParsing(t *testing.T) {
	src := "echo " + strings.Repeat("$(", 100_000) + "true" + strings.Repeat(")", 100_000)
	allocs := testing.AllocsPerRun(3, func() {
		if _, err := Parse(src, ""); err == nil {
			t.Fatal("parsed")
		}
	})
	if allocs > 10 {
		t.Errorf("%v allocations to refuse it; want the scan alone (at most 10)", allocs)
	}
}

// ordinary is the error mvdan.cc/sh's own parser gives for src.
func ordinary(src string) string {
	_, err := syntax.NewParser().Parse(strings.NewReader(src), "s.sh")
	return err.Error()
}

// FuzzTooDeep: the scan never panics on any script, and refuses one only when it holds more
// than MaxDepth of ( and { in all.
func FuzzTooDeep(f *testing.F) {
	for _, s := range []string{"echo $(ls)", "cat <<-'E'\n\t(\n\tE\n", "# it's\n(", `echo $'a\'b' "(" \(`, "a <<", "'", "\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if _, deep := tooDeep(src); deep && strings.Count(src, "(")+strings.Count(src, "{") <= MaxDepth {
			t.Fatalf("refused with %d ( and { in all", strings.Count(src, "(")+strings.Count(src, "{"))
		}
	})
}
