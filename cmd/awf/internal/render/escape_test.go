package render

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	tests := map[string]string{
		"":                              "",
		"plain\n\ttabbed\n":             "plain\n\ttabbed\n",
		"crlf\r\nkept":                  "crlf\r\nkept",
		"lone\rcr":                      `lone\rcr`,
		"\x1b]0;pwned\x07\x1b[2J":       `\x1b]0;pwned\a\x1b[2J`,
		"osc8 \x1b]8;;http://x\x1b\\y":  `osc8 \x1b]8;;http://x\x1b\y`,
		"back\bspace del\x7f nul\x00":   `back\bspace del\x7f nul\x00`,
		"c1 \u009b31m":                  `c1 \u009b31m`,
		"bidi \u202eevil\u202c \u2066x": `bidi \u202eevil\u202c \u2066x`,
		"zero\u200bwidth ls\u2028ps":    `zero\u200bwidth ls\u2028ps`,
		"bad \xff\xfe utf8":             `bad \xff\xfe utf8`,
		"ünïcödé 漢字 🎉 nbsp\u00a0 \\d+":  "ünïcödé 漢字 🎉 nbsp\u00a0 \\d+",
	}
	for in, want := range tests {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLine(t *testing.T) {
	tests := map[string]string{
		"plain":                   "plain",
		`say "hi"`:                `say "hi"`,
		"two\nlines\tand tab":     `two\nlines\tand tab`,
		`back\slash`:              `back\\slash`,
		"\x1b]0;pwned\x07":        `\x1b]0;pwned\a`,
		"bidi \u202e bad \xff ok": `bidi \u202e bad \xff ok`,
		"ünïcödé":                 "ünïcödé",
	}
	for in, want := range tests {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOutText(t *testing.T) {
	raw := "\x1b[2J\xff"
	if got := OutText(raw, false); got != raw {
		t.Errorf("OutText off a terminal = %q, want the bytes unchanged", got)
	}
	if got := OutText(raw, true); got != `\x1b[2J\xff` {
		t.Errorf("OutText on a terminal = %q", got)
	}
}

// FuzzText states what a terminal is shown: valid UTF-8 with no control or format character
// but line feeds, tabs and the CR of a CRLF, whatever the input; Line shows neither.
func FuzzText(f *testing.F) {
	for _, s := range []string{"a\x1b[31mb", "\r\n\r", "\xff\u202e", "ok\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Text(s), Line(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("escaped %q is not valid UTF-8: %q", s, out)
			}
			for i, r := range out {
				if r < ' ' && r != '\n' && r != '\t' && r != '\r' || r == 0x7f || 0x80 <= r && r < 0xa0 {
					t.Fatalf("escaped %q holds control %U at %d: %q", s, r, i, out)
				}
				if r == '\r' && !strings.HasPrefix(out[i:], "\r\n") {
					t.Fatalf("escaped %q holds a lone CR: %q", s, out)
				}
			}
		}
		if l := Line(s); strings.ContainsAny(l, "\n\r\t") {
			t.Fatalf("Line(%q) = %q spans lines", s, l)
		}
	})
}

// BenchmarkText measures escaping 64 KiB of tool output: plain text (nothing to escape, the
// common case) and text with an escape sequence on every line.
func BenchmarkText(b *testing.B) {
	plain := strings.Repeat("ok  \tgithub.com/awf-dev/awf/internal/x\t0.123s ünï\n", 1400)
	hostile := strings.Repeat("\x1b[31mFAIL\x1b[0m github.com/awf-dev/awf/internal/x\n", 1400)
	for name, s := range map[string]string{"plain": plain, "escapes": hostile} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				Text(s)
			}
		})
	}
}
