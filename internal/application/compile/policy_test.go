package compile_test

import (
	"testing"

	"github.com/awf-dev/awf/internal/application/compile"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/templater"
)

func TestResolvePolicies(t *testing.T) {
	wf := &workflow.Workflow{
		Sandbox: &workflow.Policy{Paths: workflow.PathPolicy{Write: []string{"{{inputs.p}}/out/**"}}, Hosts: []string{"api.{{inputs.d}}"}},
		Tools: []workflow.ToolSpec{{Name: "read_file", Builtin: true,
			Restrictions: &workflow.Restrictions{Paths: []string{"{{inputs.p}}/**"}}}},
	}
	scope := ports.Scope{"inputs": map[string]any{"p": "proj", "d": "example.com"}}
	got, err := compile.ResolvePolicies(templater.New(), wf, scope)
	if err != nil {
		t.Fatal(err)
	}
	if got.Sandbox.Paths.Write[0] != "proj/out/**" || got.Sandbox.Hosts[0] != "api.example.com" ||
		got.Tools[0].Restrictions.Paths[0] != "proj/**" {
		t.Errorf("resolved = %+v %+v", got.Sandbox, got.Tools[0].Restrictions)
	}
	if wf.Sandbox.Paths.Write[0] != "{{inputs.p}}/out/**" || wf.Tools[0].Restrictions.Paths[0] != "{{inputs.p}}/**" {
		t.Error("ResolvePolicies modified its argument")
	}
	_, err = compile.ResolvePolicies(templater.New(), wf, ports.Scope{"inputs": map[string]any{}})
	if fault.KindOf(err) != fault.Usage {
		t.Errorf("missing input: err = %v (kind %v), want usage", err, fault.KindOf(err))
	}
}
