package shellsyntax

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
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

// TestParseRefusesDeepRecursionWithoutBrackets: compound commands, prefixes and operators
// nest without a ( or { for the scan to count; the parser is stopped while it reads them, with
// a syntax.ParseError near the place, in a few MB, and the same scripts a hundred levels deep
// still parse.
func TestParseRefusesDeepRecursionWithoutBrackets(t *testing.T) {
	shapes := []struct{ name, before, open, middle, close, after string }{
		{"if", "", "if true; then ", "true", "; fi", ""},
		{"while", "", "while true; do ", "true", "; done", ""},
		{"for", "", "for a in b; do ", "true", "; done", ""},
		{"case", "", "case a in x) ", "true", ";; esac", ""},
		{"case patterns close no $(", "", "$(case a in x) ", "true", ";; esac)", ""},
		{"time", "", "time ", "true", "", ""},
		{"coproc", "", "coproc ", "true", "", ""},
		{"function bodies", "", "f() ", "{ true; }", "", ""},
		{"arithmetic negation", "echo $((", "!", "1", "", "))"},
		{"arithmetic assignment", "echo $((", "a=", "1", "", "))"},
		{"arithmetic ternary", "echo $((", "1?1:", "1", "", "))"},
		{"arithmetic power", "echo $((", "2**", "1", "", "))"},
		{"test negation", "[[ ", "! ", "a", "", " ]]"},
		{"test operators", "[[ ", "a && ", "a", "", " ]]"},
	}
	nest := func(n int, s struct{ name, before, open, middle, close, after string }) string {
		return s.before + strings.Repeat(s.open, n) + s.middle + strings.Repeat(s.close, n) + s.after
	}
	for _, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			if _, err := Parse(nest(100, s), "s.sh"); err != nil && strings.Contains(err.Error(), "too deep") {
				t.Fatalf("100 levels refused: %v", err)
			}
			src := nest(30_000, s)
			var err error
			stack := stackGrowth(func() { _, err = Parse(src, "s.sh") })
			var pe syntax.ParseError
			if !errors.As(err, &pe) || !strings.Contains(pe.Text, "nested too deep to parse") {
				t.Fatalf("30,000 levels: error %v, want a syntax.ParseError saying it is nested too deep", err)
			}
			if !strings.HasPrefix(err.Error(), "s.sh:1:") || pe.Pos.Offset() >= uint(len(src)) {
				t.Errorf("refused at %v (offset %d of %d), want a place on line 1 inside the script", err, pe.Pos.Offset(), len(src))
			}
			if stack > 32<<20 {
				t.Errorf("the stack grew to %d MB before the refusal; want at most 32", stack>>20)
			}
		})
	}
}

// stackGrowth is how large the stack of a goroutine running f grew.
func stackGrowth(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	done := make(chan uint64)
	go func() {
		f()
		runtime.ReadMemStats(&after)
		done <- after.StackInuse
	}()
	inUse := <-done
	return inUse - min(inUse, before.StackInuse)
}

// TestWatchedParseIsThePlainParse: a long script, read in chunks while the parser's depth is
// watched, gives the same tree, positions and errors as the parser reading it whole.
func TestWatchedParseIsThePlainParse(t *testing.T) {
	body := "if [ -f \"$f\" ]; then\n  echo \"$(basename \"$f\")\" | tr a-z A-Z >> out.txt  # a comment\nfi\n"
	for _, src := range []string{
		strings.Repeat(body, 100),
		strings.Repeat(body, 100) + "echo )\n",
		strings.Repeat("cat <<EOF\n$(date) ${HOME}\nEOF\n", 200),
		"echo " + strings.Repeat("x", 1018) + "é\n" + strings.Repeat(body, 30),        // a rune across two chunks
		"echo " + strings.Repeat("y", 2042) + "\\\n z\r\n" + strings.Repeat(body, 30), // so is an escaped line break
	} {
		got, gotErr := Parse(src, "s.sh")
		want, wantErr := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "s.sh")
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("error %v, want %v", gotErr, wantErr)
		}
		if gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("a %d-byte script parsed in chunks gives another tree than parsed whole", len(src))
		}
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

// FuzzParse: whatever the script, Parse gives what the parser gives reading it whole, unless it
// refuses it as too deep; it never panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"echo $(ls)", "if a; then b; fi", "case a in x) y;; esac", "echo $((1?2:3))", "[[ ! a && b ]]", "f() { :; }"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		src = strings.Repeat(src, guardFrom/max(len(src), 1)+1) // long enough to be watched
		_, err := Parse(src, "s.sh")
		if err != nil && strings.Contains(err.Error(), "awf refuses scripts this deep") {
			return
		}
		_, want := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "s.sh")
		if fmt.Sprint(err) != fmt.Sprint(want) {
			t.Fatalf("error %v, want %v", err, want)
		}
	})
}

// TestCheckReportsOnlyDepth: Check is for text another parser reads, which reports its own
// syntax errors.
func TestCheckReportsOnlyDepth(t *testing.T) {
	if err := Check("echo ok", "e"); err != nil {
		t.Errorf("a plain script: %v", err)
	}
	if err := Check("echo )", "e"); err != nil {
		t.Errorf("a syntax error is the other parser's to report: %v", err)
	}
	for _, deep := range []string{strings.Repeat("(", MaxDepth+1), strings.Repeat("time ", 30_000) + "true"} {
		if err := Check(deep, "e"); err == nil || !strings.HasPrefix(err.Error(), "e:1:") {
			t.Errorf("a script too deep: error %v, want the refusal at its place", err)
		}
	}
}

// TestParseRefusesLongDeepStretches: watching a deep parse costs in proportion to its depth,
// so a long stretch of script read deep down is refused (a 5 MB script inside 1,800 ifs took
// 7 s, ten times its parse); the same script 100 levels down parses.
func TestParseRefusesLongDeepStretches(t *testing.T) {
	body := strings.Repeat("true\n", 20_000) // 100 KB
	for _, tc := range []struct {
		levels int
		refuse bool
	}{{100, false}, {1000, true}} {
		src := strings.Repeat("if true; then\n", tc.levels) + body + strings.Repeat("fi\n", tc.levels)
		_, err := Parse(src, "s.sh")
		if refused := err != nil && strings.Contains(err.Error(), "64 KB of script inside"); refused != tc.refuse {
			t.Errorf("%d levels around 100 KB: error %v, want refused %v", tc.levels, err, tc.refuse)
		}
	}
}
