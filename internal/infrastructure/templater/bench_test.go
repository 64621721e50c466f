package templater

import "testing"

func BenchmarkRenderCached(b *testing.B) {
	tp := New()
	scope := testScope()
	const tmpl = "Implement {{inputs.feature}} in {{workflow.dir}} after {{states.build.output}} ({{inputs.count}})"
	if _, err := tp.Render(tmpl, scope); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tp.Render(tmpl, scope); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvalCached(b *testing.B) {
	tp := New()
	scope := testScope()
	const expr = "states.build.exit_code == 0 && inputs.count > 2"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tp.EvalBool(expr, scope); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCommandBind(b *testing.B) {
	tp := New()
	scope := valueScope("it's a \"pattern\"; $(id)")
	const tmpl = "rg -- '{{inputs.v}}' {{workflow.dir}} | head -n {{inputs.count}}"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tp.Command(tmpl, scope); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCommandCompile measures the first binding of a template: parse, bind, shell parse
// and checks.
func BenchmarkCommandCompile(b *testing.B) {
	scope := valueScope("x")
	const tmpl = "rg -- '{{inputs.v}}' {{workflow.dir}} | head -n {{inputs.count}}"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New().Command(tmpl, scope); err != nil {
			b.Fatal(err)
		}
	}
}
