package templater

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
)

// valueScope is a scope whose inputs.v is value.
func valueScope(value string) ports.Scope {
	s := testScope()
	s["inputs"].(map[string]any)["v"] = value
	return s
}

// runBound interprets a bound command with its variables set, as the process runner does,
// and returns its standard output.
func runBound(t testing.TB, ctx context.Context, b ports.BoundCommand) string {
	t.Helper()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(b.Script), "")
	if err != nil {
		t.Fatalf("parse bound script %q: %v", b.Script, err)
	}
	env := []string{"PATH=/usr/bin:/bin"}
	for k, v := range b.Vars {
		env = append(env, k+"="+v)
	}
	var out, errOut bytes.Buffer
	r, err := interp.New(interp.Env(expand.ListEnviron(env...)), interp.StdIO(nil, &out, &errOut))
	if err != nil {
		t.Fatalf("interp.New: %v", err)
	}
	if err := r.Run(ctx, f); err != nil {
		t.Fatalf("run %q: %v (stderr %q)", b.Script, err, errOut.String())
	}
	return out.String()
}

// echoTemplates print inputs.v back in every quoting context; want gives the expected output
// for a value.
var echoTemplates = []struct {
	name, tmpl, script string
	want               func(v string) string
}{
	{"bare", "printf '%s' {{inputs.v}}", `printf '%s' "${AWF_T1}"`, ident},
	{"bare leading dot", "printf '%s' {{ .inputs.v }}", `printf '%s' "${AWF_T1}"`, ident},
	{"inside a word", "printf '%s' pre{{inputs.v}}post", `printf '%s' pre"${AWF_T1}"post`, wrap("pre", "post")},
	{"double quotes", `printf '%s' "a {{inputs.v}} b"`, `printf '%s' "a ${AWF_T1} b"`, wrap("a ", " b")},
	{"single quotes", "printf '%s' '{{inputs.v}}'", `printf '%s' ''"${AWF_T1}"''`, ident},
	{"single quotes with text", "printf '%s' 'x {{inputs.v}} y'", `printf '%s' 'x '"${AWF_T1}"' y'`, wrap("x ", " y")},
	{"dollar single quotes", `printf '%s' $'\t{{inputs.v}}'`, `printf '%s' $'\t'"${AWF_T1}"$''`, wrap("\t", "")},
	{"twice", "printf '%s|%s' {{inputs.v}} '{{inputs.v}}'", `printf '%s|%s' "${AWF_T1}" ''"${AWF_T2}"''`, func(v string) string { return v + "|" + v }},
	{"parameter default", `printf '%s' "${UNSET_X:-{{inputs.v}}}"`, `printf '%s' "${UNSET_X:-"${AWF_T1}"}"`, ident},
	{"command substitution", `printf '%s' "$(printf '%s' {{inputs.v}})"`, `printf '%s' "$(printf '%s' "${AWF_T1}")"`, trimNewlines},
	{"assignment", "X={{inputs.v}}; printf '%s' \"$X\"", `X="${AWF_T1}"; printf '%s' "$X"`, ident},
	{"comment quote does not confuse", "printf '%s' {{inputs.v}} # it's fine", `printf '%s' "${AWF_T1}" # it's fine`, ident},
	{"escaped quote", `printf '%s' \'{{inputs.v}}`, `printf '%s' \'"${AWF_T1}"`, wrap("'", "")},
}

func ident(v string) string { return v }

func wrap(pre, post string) func(string) string {
	return func(v string) string { return pre + v + post }
}

// trimNewlines is what $(...) does to its output.
func trimNewlines(v string) string { return strings.TrimRight(v, "\n") }

// hostile are values that would change a naively spliced command.
var hostile = []string{
	"", "plain", "two words", "  spaced  ", "'", `"`, `'"'"'`, "; id", "&& id", "|| id", "| id",
	"$(id)", "`id`", "$HOME", "${HOME}", "$((1+1))", "a\nb", "\n", "a\r\nb", "--option", "-rf",
	"--pre=sh", "*", "?", "[a-z]*", "~", "~root", "{a,b}", `\`, `\\`, `\n`, `\'`, "!", "!!",
	"#", "# comment", "EOF", "x\nEOF\ny", "$'x'", `$"x"`, "<(id)", ">(id)", "> /tmp/x", "< /etc/passwd",
	"2>&1", "&", "a=b", "IFS=x", "${IFS}", "é ü 日本", "\xff\xfe invalid utf8", "\t\v\f",
	"'; rm -rf / #", "\"; rm -rf / #", "$(rm -rf /)", "{{inputs.feature}}", "${AWF_T1}", "$AWF_T2",
}

func TestCommandContexts(t *testing.T) {
	tp := New()
	for _, tc := range echoTemplates {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tp.Command(tc.tmpl, valueScope("ref"))
			if err != nil {
				t.Fatalf("Command(%q) error: %v", tc.tmpl, err)
			}
			if b.Script != tc.script {
				t.Errorf("Command(%q).Script = %q, want %q", tc.tmpl, b.Script, tc.script)
			}
		})
	}
}

// TestCommandInjection binds hostile values in every quoting context and checks (a) the script
// is byte-identical whatever the value, (b) the interpreted script prints the value verbatim.
func TestCommandInjection(t *testing.T) {
	tp := New()
	for _, tc := range echoTemplates {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := tp.Command(tc.tmpl, valueScope("ref"))
			if err != nil {
				t.Fatalf("Command(%q): %v", tc.tmpl, err)
			}
			for _, v := range hostile {
				b, err := tp.Command(tc.tmpl, valueScope(v))
				if err != nil {
					t.Fatalf("Command(%q) with %q: %v", tc.tmpl, v, err)
				}
				if b.Script != ref.Script {
					t.Errorf("Command(%q) with %q: Script = %q, want %q", tc.tmpl, v, b.Script, ref.Script)
				}
				if got, want := runBound(t, t.Context(), b), tc.want(v); got != want {
					t.Errorf("Command(%q) with %q printed %q, want %q", tc.tmpl, v, got, want)
				}
			}
		})
	}
}

func TestCommandHeredoc(t *testing.T) {
	tp := New()
	tests := []struct {
		name, tmpl, script string
		want               func(string) string
	}{
		{"body", "cat <<EOF\n{{inputs.v}}\nEOF\n", "cat <<EOF\n${AWF_T1}\nEOF\n", func(v string) string { return v + "\n" }},
		{"body with text and a later word", "cat <<-END\n\tline {{inputs.v}}\n\tEND\nprintf '%s' {{inputs.v}}",
			"cat <<-END\n\tline ${AWF_T1}\n\tEND\nprintf '%s' \"${AWF_T2}\"", func(v string) string { return "line " + v + "\n" + v }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range hostile {
				b, err := tp.Command(tc.tmpl, valueScope(v))
				if err != nil {
					t.Fatalf("Command(%q) with %q: %v", tc.tmpl, v, err)
				}
				if b.Script != tc.script {
					t.Fatalf("Command(%q).Script = %q, want %q", tc.tmpl, b.Script, tc.script)
				}
				if got, want := runBound(t, t.Context(), b), tc.want(v); got != want {
					t.Errorf("Command(%q) with %q printed %q, want %q", tc.tmpl, v, got, want)
				}
			}
		})
	}
}

func TestCommandLargeValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 200<<10)
	for i := range buf {
		buf[i] = byte(1 + rng.IntN(255)) // every byte but NUL
	}
	v := string(buf)
	tp := New()
	for _, tc := range echoTemplates[:5] {
		b, err := tp.Command(tc.tmpl, valueScope(v))
		if err != nil {
			t.Fatalf("Command(%q) with 200 KB: %v", tc.tmpl, err)
		}
		if len(b.Script) > 100 {
			t.Errorf("Command(%q) script holds the value: %d bytes", tc.tmpl, len(b.Script))
		}
		if got := runBound(t, t.Context(), b); got != tc.want(v) {
			t.Errorf("Command(%q) with 200 KB printed %d bytes, want %d", tc.tmpl, len(got), len(tc.want(v)))
		}
	}
}

func TestCommandNUL(t *testing.T) {
	_, err := New().Command("printf '%s' {{inputs.v}}", valueScope("a\x00b"))
	if err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Fatalf("Command with a NUL value error = %v, want a NUL error", err)
	}
	if k := fault.KindOf(err); k != fault.Execution {
		t.Errorf("NUL error kind = %v, want execution", k)
	}
}

func TestCommandVars(t *testing.T) {
	b, err := New().Command("cd {{inputs.feature}} && ls {{inputs.count}} {{inputs.list}} # {{inputs.on}}", testScope())
	if err != nil {
		t.Fatal(err)
	}
	want := ports.BoundCommand{
		Script: `cd "${AWF_T1}" && ls "${AWF_T2}" "${AWF_T3}" # ${AWF_T4}`,
		Vars:   map[string]string{"AWF_T1": "login page", "AWF_T2": "3", "AWF_T3": `[1,"two",3.5]`, "AWF_T4": "true"},
		Argv:   [][]string{{"cd", "login page"}, {"ls", "3", `[1,"two",3.5]`}},
	}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("Command mismatch (-want +got):\n%s", diff)
	}
}

func TestCommandRaw(t *testing.T) {
	tp := New()
	scope := valueScope("--verbose --color")
	b, err := tp.Command("echo {{ raw(inputs.v) }} {{inputs.feature}}", scope)
	if err != nil {
		t.Fatal(err)
	}
	want := ports.BoundCommand{Script: `echo --verbose --color "${AWF_T1}"`, Vars: map[string]string{"AWF_T1": "login page"},
		Argv: [][]string{{"echo", "--verbose", "--color", "login page"}}}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("Command with raw mismatch (-want +got):\n%s", diff)
	}
	if _, err := tp.Command("echo {{ raw(inputs.v) }}", valueScope("'unclosed")); err == nil {
		t.Error("raw value that breaks the syntax: no error")
	}
	if _, err := tp.Command("echo {{ raw(inputs.v) }}", valueScope("$AWF_T1")); err == nil {
		t.Error("raw value using a reserved name: no error")
	}
	if _, err := tp.Command(`echo {{ raw(inputs.v) }} {{inputs.count}}`, valueScope(`"`)); err == nil {
		t.Error("raw value that unquotes a later placeholder: no error")
	}
}

func TestCommandErrors(t *testing.T) {
	tests := []struct {
		name, tmpl string
		offset     int
		msg        string
	}{
		{"does not parse", "echo 'open {{inputs.v}}", 11, "does not parse as shell"},
		{"unbalanced", "if true; then echo {{inputs.v}}", 0, "must end with `fi`"},
		{"unquoted parameter default", "echo ${X:-{{inputs.v}}}", 10, "one quoted word"},
		{"arithmetic", "echo $(( {{inputs.v}} + 1 ))", 9, "in arithmetic would be evaluated as code"},
		{"arithmetic command", "(( n = {{inputs.v}} ))", 7, "in arithmetic"},
		{"let", "let n={{inputs.v}}", 6, "in arithmetic"},
		{"subscript", "echo ${a[{{inputs.v}}]}", 9, "subscript"},
		{"assignment subscript", "a[{{inputs.v}}]=1", 2, "subscript"},
		{"slice", "echo ${s:{{inputs.v}}}", 9, "subscript or offset"},
		{"numeric test", "[[ {{inputs.v}} -eq 1 ]]", 3, "numeric [[ ]] comparison"},
		{"eval", "eval echo {{inputs.v}}", 10, "eval runs its argument as shell code"},
		{"sh -c", `sh -c "grep {{inputs.v}} f"`, 12, "sh -c runs its argument"},
		{"bash -ec", `bash -ec 'echo {{inputs.v}}'`, 15, "bash -c runs its argument"},
		{"sudo bash -c", `sudo -u x /bin/bash -c "{{inputs.v}}"`, 24, "bash -c"},
		{"bash -o pipefail -c", `bash -o pipefail -c "{{inputs.v}}"`, 21, "bash -c"},
		{"bash -c --", `bash -c -- "{{inputs.v}}"`, 12, "bash -c"},
		{"sh -c via substitution", `sh -c "$(echo {{inputs.v}})"`, 14, "sh -c"},
		{"trap", `trap "echo {{inputs.v}}" EXIT`, 11, "trap runs"},
		{"quoted heredoc", "cat <<'EOF'\n{{inputs.v}}\nEOF", 12, "quoted here-document"},
		{"heredoc delimiter", "cat <<{{inputs.v}}\nx\n", 6, "delimiter"},
		{"backslash before", `echo \{{inputs.v}}`, 6, "backslash"},
		{"dollar before", `echo ${{inputs.v}}`, 6, `"$"`},
		{"reserved name", `echo $AWF_T1 {{inputs.v}}`, 0, "reserved"},
		{"reserved braced", `echo "${AWF_T1}" {{inputs.v}}`, 0, "reserved"},
		{"reserved without placeholders", `echo $AWF_T3`, 0, "reserved"},
		{"raw not whole", `echo {{ "x" + raw(inputs.v) }}`, 14, "raw() must be the whole expression"},
		{"template syntax", "echo {{ inputs.v", 5, "unterminated"},
		{"expression syntax", "echo {{ inputs.v + }}", 18, "unexpected token"},
	}
	tp := New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tp.Command(tc.tmpl, valueScope("1"))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Command(%q) = %q, %v; want a *SyntaxError", tc.tmpl, b.Script, err)
			}
			if se.Offset != tc.offset || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("Command(%q) error = offset %d %q, want offset %d containing %q", tc.tmpl, se.Offset, se.Msg, tc.offset, tc.msg)
			}
			if k := fault.KindOf(err); k != fault.Invalid {
				t.Errorf("Command(%q) error kind = %v, want invalid", tc.tmpl, k)
			}
		})
	}
}

func TestCommandAllowed(t *testing.T) {
	tests := []string{
		`sh -c 'grep -- "$1" f' sh {{inputs.v}}`,     // a positional argument of sh -c is data
		`bash script.sh -c {{inputs.v}}`,             // -c after the script is the script's argument
		`echo $(( 1 + 2 )) {{inputs.v}}`,             // arithmetic without a value
		`[[ {{inputs.v}} == x* ]]`,                   // string comparison
		`cat <<EOF | grep {{inputs.v}}` + "\nx\nEOF", // heredoc then a word on the same line
		"echo {{inputs.v}} <<< {{inputs.v}}",         // here-string is not a heredoc
		`for f in {{inputs.v}}; do echo "$f"; done`,
		`case {{inputs.v}} in {{inputs.v}}) echo y;; esac`,
		"echo `echo {{inputs.v}}`",
	}
	tp := New()
	for _, tmpl := range tests {
		if _, err := tp.Command(tmpl, valueScope("1")); err != nil {
			t.Errorf("Command(%q) error: %v", tmpl, err)
		}
	}
}

func TestCommandOptionLike(t *testing.T) {
	tests := []struct {
		tmpl    string
		want    []bool
		command string
	}{
		{"rg '{{inputs.v}}' {{inputs.count}}", []bool{true, true}, "rg"},
		{"rg -- '{{inputs.v}}' dir", []bool{false}, ""},
		{"rg -e x{{inputs.v}}", []bool{false}, ""},
		{"{{inputs.v}} --flag", []bool{false}, ""},
		{`echo "{{inputs.v}}"`, []bool{true}, "echo"},
	}
	tp := New()
	for _, tc := range tests {
		ct, err := tp.command(tc.tmpl)
		if err != nil {
			t.Fatalf("command(%q): %v", tc.tmpl, err)
		}
		var got []bool
		for _, h := range ct.holes {
			got = append(got, h.optionLike)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("command(%q) option-like mismatch (-want +got):\n%s", tc.tmpl, diff)
		}
		if tc.command != "" && ct.holes[0].command != tc.command {
			t.Errorf("command(%q) command = %q, want %q", tc.tmpl, ct.holes[0].command, tc.command)
		}
	}
}

func TestCommandMissIsError(t *testing.T) {
	_, err := New().Command("echo {{inputs.featur}}", testScope())
	if err == nil || err.Error() != `inputs.featur: no such input (did you mean "feature"?)` {
		t.Errorf("Command miss error = %v", err)
	}
}

// TestCommandVarsSorted documents the variable numbering: in placeholder order.
func TestCommandVarsSorted(t *testing.T) {
	b, err := New().Command("echo {{inputs.count}} {{inputs.feature}} {{inputs.on}}", testScope())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for k := range b.Vars {
		names = append(names, k)
	}
	sort.Strings(names)
	if diff := cmp.Diff([]string{"AWF_T1", "AWF_T2", "AWF_T3"}, names); diff != "" {
		t.Errorf("var names mismatch (-want +got):\n%s", diff)
	}
	if b.Vars["AWF_T1"] != "3" || b.Vars["AWF_T3"] != "true" {
		t.Errorf("vars = %v, want numbered in placeholder order", b.Vars)
	}
}

// TestCommandOptionInjection: a value from args that would start an option is refused
// (fault.Denied), with or without raw() in the template; inputs are the author's, a "--"
// before the placeholder, a number, or printf's operands are not refused.
func TestCommandOptionInjection(t *testing.T) {
	scope := ports.Scope{"args": map[string]any{"a": "--output=x", "n": "-5"}, "inputs": map[string]any{"r": "-x", "d": "--flag"}}
	for _, tmpl := range []string{"rg {{args.a}} src", "{{ raw(inputs.r) }} ; cat {{args.a}}", "ls -l {{args.a}}"} {
		if _, err := New().Command(tmpl, scope); fault.KindOf(err) != fault.Denied {
			t.Errorf("Command(%q) error = %v, want denied", tmpl, err)
		}
	}
	for _, tmpl := range []string{"rg -- {{args.a}} src", "head -n {{args.n}}", "printf '%s' {{args.a}}", "ls {{inputs.d}}", "echo x{{args.a}}"} {
		if _, err := New().Command(tmpl, scope); err != nil {
			t.Errorf("Command(%q) error = %v, want bound", tmpl, err)
		}
	}
}
