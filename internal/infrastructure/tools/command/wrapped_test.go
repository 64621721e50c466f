package command_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/infrastructure/tools/command"
)

var arguments = []tool.Param{{Name: "arguments", Type: "array<string>", Required: true, Description: "Arguments for the command"}}

func probe(t *testing.T, cfg command.Config, tmpl string, params ...tool.Param) *command.Wrapped {
	t.Helper()
	if params == nil {
		params = arguments
	}
	w, err := command.NewWrapped(tool.WrapSpec{Name: "probe", Title: "Probe", Description: "prints its argv",
		Wraps: "run_command", Command: tmpl, Params: params}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func list(vs ...string) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// TestWrappedHostileValues: every element of the arguments array reaches the program as one
// argument, verbatim, through the real process runner.
func TestWrappedHostileValues(t *testing.T) {
	cfg := config(t)
	w := probe(t, cfg, quoted(t, exe(t))+" "+argvFlag+" --fixed 'two words' {arguments} -type f")
	var all []string
	for _, h := range hostile {
		all = append(all, h.value)
		t.Run(h.name, func(t *testing.T) {
			res := w.Execute(t.Context(), tool.Invocation{Args: map[string]any{"arguments": list(h.value, "after")}})
			want := []string{"--fixed", "two words", h.value, "after", "-type", "f"}
			if diff := cmp.Diff(want, argvOf(t, res)); diff != "" {
				t.Errorf("argv for %q (-want +got):\n%s", h.value, diff)
			}
		})
	}
	res := w.Execute(t.Context(), tool.Invocation{Args: map[string]any{"arguments": list(all...)}})
	if diff := cmp.Diff(append(append([]string{"--fixed", "two words"}, all...), "-type", "f"), argvOf(t, res)); diff != "" {
		t.Errorf("all hostile values at once (-want +got):\n%s", diff)
	}
	res = w.Execute(t.Context(), tool.Invocation{Args: map[string]any{"arguments": list()}})
	if diff := cmp.Diff([]string{"--fixed", "two words", "-type", "f"}, argvOf(t, res)); diff != "" {
		t.Errorf("no arguments (-want +got):\n%s", diff)
	}
	noPwned(t, cfg.Dir)
}

// TestWrappedLargeValues: 200 KB of arguments arrive verbatim; a single argument beyond the
// kernel's limit is a clear error, not a truncation.
func TestWrappedLargeValues(t *testing.T) {
	w := probe(t, config(t), quoted(t, exe(t))+" "+argvFlag+" {arguments}")
	a := strings.Repeat("x'\"$(y)`;\n", 100<<10/10)
	b := strings.Repeat("-", 100<<10)
	res := w.Execute(t.Context(), tool.Invocation{Args: map[string]any{"arguments": list(a, b)}})
	if got := argvOf(t, res); len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("two 100 KB arguments came back as %d arguments", len(got))
	}
	res = w.Execute(t.Context(), tool.Invocation{Args: map[string]any{"arguments": list(strings.Repeat("z", 200<<10))}})
	want := "probe: arguments[0] is 204800 bytes; one program argument holds at most 131071 bytes"
	if res.Succeeded() || res.Error != want {
		t.Errorf("200 KB argument = %q, want %q", res.Error, want)
	}
}

// TestWrappedCallErrors are seed 004's tool call errors.
func TestWrappedCallErrors(t *testing.T) {
	rec := &portstest.ProcessRecorder{}
	w := probe(t, command.Config{Process: rec}, "find {arguments} -type f")
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"missing arguments", map[string]any{}, `probe: missing required argument "arguments": an array of strings, one per program argument`},
		{"not an array", map[string]any{"arguments": ". -name x"}, `probe: argument "arguments" must be an array of strings, got a string`},
		{"element not a string", map[string]any{"arguments": []any{".", json.Number("3")}}, `probe: arguments[1] must be a string, got a number`},
		{"NUL", map[string]any{"arguments": list(".", "a\x00b")}, `probe: arguments[1] contains a NUL byte, which no program argument can hold`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := w.Execute(t.Context(), tool.Invocation{Args: tc.args})
			if res.Succeeded() || res.Error != tc.want {
				t.Errorf("Execute(%v) = %q, want %q", tc.args, res.Error, tc.want)
			}
		})
	}
	if rec.Calls() != 0 {
		t.Errorf("%d processes ran for invalid calls", rec.Calls())
	}
}

// TestWrappedScript pins the script the process runner receives: exec, quoted literals,
// values only as variable references.
func TestWrappedScript(t *testing.T) {
	rec := &portstest.ProcessRecorder{}
	cfg := command.Config{Process: rec, Dir: "/work"}
	params := append([]tool.Param{{Name: "name", Type: "string"}, {Name: "depth", Type: "integer", Default: 2, HasDefault: true}}, arguments...)
	w := probe(t, cfg, `find "my dir" {arguments} -maxdepth {depth} --name={name} '*.go'`, params...)
	res := w.Execute(t.Context(), tool.Invocation{Args: map[string]any{"arguments": list("$(x)", "-o"), "name": "a b"}, Input: "in"})
	if !res.Succeeded() {
		t.Fatal(res.Error)
	}
	got := rec.Requests()[0]
	want := ports.ProcessRequest{
		Script: `exec find 'my dir' "${AWF_A1}" "${AWF_A2}" -maxdepth "${AWF_A3}" '--name='"${AWF_A4}" '*.go'`,
		Vars:   map[string]string{"AWF_A1": "$(x)", "AWF_A2": "-o", "AWF_A3": "2", "AWF_A4": "a b"},
		Dir:    "/work", Stdin: "in",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("process request (-want +got):\n%s", diff)
	}
	// An optional parameter left out removes its word.
	w.Execute(t.Context(), tool.Invocation{Args: map[string]any{"arguments": list()}})
	if got := rec.Requests()[1].Script; got != `exec find 'my dir' -maxdepth "${AWF_A1}" '*.go'` {
		t.Errorf("script without name = %s", got)
	}
	if got := w.Meta(map[string]any{"arguments": list(".", "-name", "*.go")}); got != `find 'my dir' . -name '*.go' -maxdepth 2 '*.go'` {
		t.Errorf("Meta = %s", got)
	}
}

func TestWrappedDefinitionErrors(t *testing.T) {
	cfg := command.Config{Process: &portstest.ProcessRecorder{}}
	tests := []struct{ tmpl, want string }{
		{"", "a wrapped tool needs an @command"},
		{"find {arguments} | head", "must be one simple command"},
		{"find {arguments}; rm x", "must be one simple command (no ;, && or newlines)"},
		{"find {arguments} > out", "no redirections"},
		{"X=1 find {arguments}", "must not assign variables"},
		{"find $HOME {arguments}", `word "$HOME": only literal text and {param} placeholders are allowed`},
		{"find \"$(pwd)\" {arguments}", `only literal text and {param} placeholders are allowed`},
		{"{arguments} -type f", "must start with a program name, not a placeholder"},
		{"find {argumnets}", `{argumnets} is not a declared @param (did you mean "arguments"?)`},
		{"find --x={arguments}", "{arguments} is an array: it must be a word of its own"},
		{"find 'unterminated", "does not parse"},
	}
	for _, tc := range tests {
		t.Run(tc.tmpl, func(t *testing.T) {
			_, err := command.NewWrapped(tool.WrapSpec{Name: "w", Command: tc.tmpl, Params: arguments}, cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewWrapped(%q) = %v, want %q", tc.tmpl, err, tc.want)
			}
		})
	}
}
