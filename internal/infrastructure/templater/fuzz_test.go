package templater

import (
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/ports"
)

// FuzzRender feeds arbitrary templates to every entry point: none may panic, and a template
// without placeholders renders as itself.
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"", "plain", "{{inputs.feature}}", "{{.inputs.count}} and {{ inputs.list }}", "{{", "}}", "{{}}",
		`{{ "}}" }}`, "{{ {'a': {'b': 1}} }}", "{{ states.build.output ?? 'x' }}", "{{ inputs?.a?.b }}",
		"{{ let x = 1; x }}", "{{ raw(inputs.feature) }}", "{{ map(inputs.list, #) }}", "{{ inputs.list[99] }}",
		"echo '{{inputs.feature}}' \"{{inputs.count}}\" $'{{inputs.on}}'", "cat <<EOF\n{{inputs.feature}}\nEOF",
		"{{ 1/0 }}", "{{ inputs.obj.nested.deep.x }}", "{{ filter(inputs.list, .x) }}", "{{ $env }}",
	} {
		f.Add(s)
	}
	tp := New()
	f.Fuzz(func(t *testing.T, tmpl string) {
		scope := testScope()
		out, err := tp.Render(tmpl, scope)
		if err == nil && !strings.Contains(tmpl, "{{") && out != tmpl {
			t.Errorf("Render(%q) = %q, want the text unchanged", tmpl, out)
		}
		_, _ = tp.Eval(tmpl, scope)
		_, _ = tp.EvalBool(tmpl, scope)
		// The script does not depend on the values (unless raw() splices one).
		b1, err1 := tp.Command(tmpl, scope)
		b2, err2 := tp.Command(tmpl, hostileScope())
		if err1 == nil && err2 == nil && !strings.Contains(tmpl, "raw") && b1.Script != b2.Script {
			t.Errorf("Command(%q): Script %q with plain values, %q with hostile ones", tmpl, b1.Script, b2.Script)
		}
	})
}

// FuzzCommand binds arbitrary values in every quoting context: the script never changes, and
// the shell prints the value back verbatim. Values with NUL bytes are refused.
func FuzzCommand(f *testing.F) {
	for _, v := range hostile {
		f.Add(v)
	}
	f.Add("a\x00b")
	tp := New()
	refs := make([]string, len(echoTemplates))
	for i, tc := range echoTemplates {
		b, err := tp.Command(tc.tmpl, valueScope("ref"))
		if err != nil {
			f.Fatalf("Command(%q): %v", tc.tmpl, err)
		}
		refs[i] = b.Script
	}
	f.Fuzz(func(t *testing.T, v string) {
		for i, tc := range echoTemplates {
			b, err := tp.Command(tc.tmpl, valueScope(v))
			if strings.IndexByte(v, 0) >= 0 {
				if err == nil {
					t.Fatalf("Command(%q) with a NUL value: no error", tc.tmpl)
				}
				continue
			}
			if err != nil {
				t.Fatalf("Command(%q) with %q: %v", tc.tmpl, v, err)
			}
			if b.Script != refs[i] {
				t.Fatalf("Command(%q) with %q: Script = %q, want %q", tc.tmpl, v, b.Script, refs[i])
			}
			if got, want := runBound(t, t.Context(), b), tc.want(v); got != want {
				t.Fatalf("Command(%q) with %q printed %q, want %q", tc.tmpl, v, got, want)
			}
		}
	})
}

// hostileScope is testScope with every input string replaced by shell syntax.
func hostileScope() ports.Scope {
	s := testScope()
	in := s["inputs"].(map[string]any)
	for k, v := range in {
		if _, ok := v.(string); ok {
			in[k] = "'\"; $(id) `id` && echo {{x}} ${HOME} *\n"
		}
	}
	return s
}
