package statestore

import (
	"math"
	"strings"
	"testing"
	"unicode"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"
)

// trickyStrings are values YAML writers get wrong; they seed the fuzz target too.
var trickyStrings = []string{
	"", " ", "  ", "\t", "yes", "no", "on", "off", "y", "n", "~", "null", "Null", "true", "False",
	"1", "-1", "0x10", "0o17", "017", "1_000", "1e3", "1e+20", ".inf", "-.inf", ".nan", "1.0",
	"2026-01-02", "2026-01-02T03:04:05Z", "12:30", "-", "- x", ":", "a: b", "a #b", "#", "'",
	`"`, "{", "}", "[", "]", "{a: 1}", "*x", "&x", "!x", "!!str", "%x", "@x", "`x", "|", ">",
	"?", "? x", ",", "  lead", "trail  ", "---", "...", "a\\b", "ünïcödé 🎉 漢字 עברית",
	"line1\nline2", "line1\nline2\n", "x\n\n\n", "\n", "\n\n", "\nleading", "\n\nleading",
	" lead space\nx", "\n lead after blank\nx", "x\n ", "x\n \ny", "x\n\t\ny", "tabs\n\t\tx",
	"a\r\nb\r\n", "a\rb", "mixed\r\nand\n", "\x00nul\nx", "bell\a\nx", "a\u0085b\nc",
	"a\u2028b\nc", "\ufeffbom\nx", "x\n#comment\n---\n...\n", "key: value\n- item\n",
	"  indented\n  block\n", "trailing spaces   \nx   ", "\"quoted\"\n'single'\n",
	"{\"json\": [1, 2]}\n", "emoji 🎉\nzwj 👩‍💻\ncombining é\n", strings.Repeat("long line ", 200),
	strings.Repeat("many\n", 500), "\xff", "raw \xff\xfe bytes\x00\x80\n", "\x1b]0;pwned\x07\x1b[2J\xff\n",
	"\xc3", "ok\xe2\x82", "!!binary /w==",
}

// roundTrip encodes v inside a map, as state fields are, and decodes it back.
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	doc := map[string]any{"outer": map[string]any{"seq": []any{map[string]any{"v": v}}}}
	data, err := encodeYAML(doc)
	if err != nil {
		t.Fatalf("encodeYAML(%#v): %v", v, err)
	}
	var got map[string]any
	if err := yaml.Unmarshal([]byte(data), &got); err != nil {
		t.Fatalf("decode %#v: %v\n%s", v, err, data)
	}
	return normalize(got["outer"].(map[string]any)["seq"].([]any)[0].(map[string]any)["v"])
}

func TestEncodeYAMLStrings(t *testing.T) {
	for _, s := range trickyStrings {
		if got := roundTrip(t, s); got != s {
			t.Errorf("round trip of %q = %q", s, got)
		}
	}
}

func TestEncodeYAMLMultilineKeys(t *testing.T) {
	for _, key := range []string{"k\nk", "k\n", " k\r\nx", ""} {
		data, err := encodeYAML(map[string]string{key: "v\nv"})
		if err != nil {
			t.Fatalf("encodeYAML: %v", err)
		}
		var got map[string]string
		if err := yaml.Unmarshal([]byte(data), &got); err != nil {
			t.Fatalf("decode key %q: %v\n%s", key, err, data)
		}
		if diff := cmp.Diff(map[string]string{key: "v\nv"}, got); diff != "" {
			t.Errorf("key %q round trip (-want +got):\n%s", key, diff)
		}
	}
}

func TestEncodeYAMLLiteralBlocks(t *testing.T) {
	data, err := encodeYAML(map[string]string{"out": "line1\nline2\n"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "out: |\n  line1\n  line2\n"; data != want {
		t.Errorf("encodeYAML = %q, want %q", data, want)
	}
}

func TestEncodeYAMLNumbers(t *testing.T) {
	values := []any{0, 1, -1, math.MaxInt64, math.MinInt64, 0.0, 1.0, -2.5, 0.1, 1e20, 1e-7, -1.5e300,
		math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), true, false, nil}
	for _, v := range values {
		if got := roundTrip(t, v); !cmp.Equal(got, v) {
			t.Errorf("round trip of %#v = %#v", v, got)
		}
	}
	if got, ok := roundTrip(t, math.NaN()).(float64); !ok || !math.IsNaN(got) {
		t.Errorf("round trip of NaN = %#v", got)
	}
}

func TestFloatWithPoint(t *testing.T) {
	tests := map[string]string{"1e+20": "1.0e+20", "1.5e+20": "1.5e+20", "2.5": "2.5", "-3E-7": "-3.0E-7", ".inf": ".inf"}
	for in, want := range tests {
		if got := floatWithPoint(in); got != want {
			t.Errorf("floatWithPoint(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzEncodeYAMLString states the property the store relies on: any string, valid UTF-8 or
// not, in any position of the document, reads back as itself.
func FuzzEncodeYAMLString(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := roundTrip(t, s); got != s {
			t.Errorf("round trip of %q = %q", s, got)
		}
		data, err := encodeYAML(map[string]map[string]string{"m": {s: "v"}})
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]map[string]string
		if err := yaml.Unmarshal([]byte(data), &got); err != nil || got["m"][s] != "v" || len(got["m"]) != 1 {
			t.Errorf("round trip of key %q = %q, %v\n%s", s, got, err, data)
		}
	})
}

func TestLiteralSafeCharacters(t *testing.T) {
	for c := range rune(256) {
		s := "a" + string(c) + "b\nc"
		want := c == '\t' || c == '\n' || unicode.IsPrint(c)
		if got := literalSafe(s); got != want {
			t.Errorf("literalSafe(%q) = %v, want %v", s, got, want)
		}
	}
}
