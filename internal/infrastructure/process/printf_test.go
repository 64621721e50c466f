package process

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/expand"

	"github.com/awf-dev/awf/internal/domain/ports"
)

// TestStreamedPrintfMatchesTheBuiltin runs each printf call as scripts write it (streamed when
// the format allows) and as `builtin printf` (the interpreter's own): the bytes and the exit
// status must be the same.
func TestStreamedPrintfMatchesTheBuiltin(t *testing.T) {
	tests := []struct{ name, args string }{
		{"one value", `'%s' "$V"`},
		{"reused format", `'%s\n' a b c`},
		{"more values than directives", `'x%sy%s|' 1 2 3`},
		{"fewer values", `'<%s><%s>' only`},
		{"no values", `'%s'`},
		{"escapes around values", `'a\tb\\c%s\n' z`},
		{"octal, hex and unicode escapes", `'\x41%s\101\u00e9' q`},
		{"an escape right before a directive", `'\\%s' x`},
		{"a backslash escaping the %", `'\%s' x`},
		{"trailing backslash", `'%s\' x`},
		{"percent sign", `'%s%%' x`},
		{"other directives", `'%d:%s' 4 x`},
		{"width", `'%5s' x`},
		{"no directive", `'plain\n' ignored`},
		{"leading dash", `'-%s' x`},
		{"empty value", `'[%s]' ""`},
		{"value with percent and backslash", `'%s' '50%\n\t'`},
		{"value like an option", `'%s' -v`},
	}
	vars := map[string]string{"V": strings.Repeat("value with spaces\n", 1000)}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			streamed := runLocal(t, "printf "+tc.args, vars)
			builtin := runLocal(t, "builtin printf "+tc.args, vars)
			if streamed.Stdout != builtin.Stdout || streamed.ExitCode != builtin.ExitCode {
				t.Errorf("printf %s: streamed %q (exit %d), builtin %q (exit %d)",
					tc.args, cut(streamed.Stdout), streamed.ExitCode, cut(builtin.Stdout), builtin.ExitCode)
			}
		})
	}
}

func TestStreamedPrintfKeepsAScriptsOwnPrintf(t *testing.T) {
	got := runLocal(t, `printf() { echo "mine: $*"; }; printf '%s' x`, nil)
	if got.Stdout != "mine: %s x\n" {
		t.Errorf("stdout = %q, want the script's own printf function", got.Stdout)
	}
}

func TestStreamedPrintfIntoAPipe(t *testing.T) {
	got := runLocal(t, `printf '%s' "$V" | wc -c`, map[string]string{"V": strings.Repeat("x", 3<<20)})
	if strings.TrimSpace(got.Stdout) != "3145728" {
		t.Errorf("wc -c = %q, want 3145728", got.Stdout)
	}
}

func TestStreamable(t *testing.T) {
	for format, want := range map[string]bool{
		"%s": true, "%s\\n": true, "a%sb%sc": true, `\\%s`: true,
		"": false, "plain": false, "%d": false, "%%%s": false, "%5s": false, "-%s": false,
		`\%s`: false, `%s\`: false,
	} {
		if got := streamable(format); got != want {
			t.Errorf("streamable(%q) = %v, want %v", format, got, want)
		}
	}
}

func runLocal(t *testing.T, script string, vars map[string]string) ports.ProcessResult {
	t.Helper()
	res, err := NewLocal(Config{}).Run(t.Context(), ports.ProcessRequest{Script: script, Vars: vars, BaseEnv: MinimalEnv()})
	if err != nil {
		t.Fatalf("Run(%q): %v", script, err)
	}
	return res
}

func cut(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// BenchmarkPrintfLargeValue is printf '%s' of a 10 MB variable into a pipe: streamed, and
// through the interpreter's builtin (which formats it into two more copies first).
func BenchmarkPrintfLargeValue(b *testing.B) {
	vars := map[string]string{"V": strings.Repeat("x", 10<<20)}
	for _, script := range []string{`printf '%s' "$V" | wc -c`, `builtin printf '%s' "$V" | wc -c`} {
		b.Run(strings.Fields(script)[0], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewLocal(Config{}).Run(b.Context(), ports.ProcessRequest{Script: script, Vars: vars, BaseEnv: MinimalEnv()}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzStreamPrintfMatchesTheBuiltin: for every format streamable accepts, streamPrintf writes
// the bytes the interpreter's printf builtin would (its loop over expand.Format, copied from
// mvdan.cc/sh/v3/interp's builtin).
func FuzzStreamPrintfMatchesTheBuiltin(f *testing.F) {
	for _, s := range [][3]string{
		{"%s", "a", "b"}, {`%s\n`, "x", ""}, {`\x41%s\101`, "%d", `\n`}, {`a\tb%sc%s`, "1", "2"},
		{`\\%s`, "-v", "--"}, {`\u00e9%s\U0001F600`, "é", "\x00"}, {`%s\0`, "", ""}, {`\e[%sm`, "1", "0"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, format, a, b string) {
		if !streamable(format) {
			return
		}
		for _, args := range [][]string{nil, {a}, {a, b}, {a, b, a}} {
			var got strings.Builder
			if err := streamPrintf(&got, format, args); err != nil {
				t.Fatalf("streamPrintf(%q, %q): %v", format, args, err)
			}
			if want := builtinPrintf(t, format, args); got.String() != want {
				t.Fatalf("printf %q %q: streamed %q, builtin %q", format, args, got.String(), want)
			}
		}
	})
}

// builtinPrintf is what the interpreter's printf builtin prints.
func builtinPrintf(t *testing.T, format string, args []string) string {
	if args == nil {
		args = []string{} // as the builtin has them: nil would mean "no % directives"
	}
	var out strings.Builder
	for {
		s, n, err := expand.Format(&expand.Config{}, format, args)
		if err != nil {
			t.Fatalf("expand.Format(%q): %v", format, err)
		}
		out.WriteString(s)
		args = args[n:]
		if n == 0 || len(args) == 0 {
			return out.String()
		}
	}
}

// printf -- FORMAT ... prints what bash prints: "--" ends the options and is not output, for a
// format the stream serves and for one the builtin formats.
func TestPrintfDoubleDashEndsOptions(t *testing.T) {
	for script, want := range map[string]string{
		`printf -- '%s-%s' a b`:   "a-b",
		`printf -- '%d|%x' 3 255`: "3|ff",
		`printf -- '-%s' x`:       "-x",
		`printf '%s' --`:          "--",
	} {
		if got := runLocal(t, script, nil); got.Stdout != want || got.ExitCode != 0 {
			t.Errorf("%s: stdout %q (exit %d), want %q", script, got.Stdout, got.ExitCode, want)
		}
	}
}
