package command_test

import (
	"testing"

	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/tools/command"
)

// TestVerify: a tool's verify: template is bound with the cut-off call's arguments (hostile
// values stay values) and its exit status is the verdict: 0 done, 1 not done, else unknown.
func TestVerify(t *testing.T) {
	cfg := config(t)
	spec := workflow.ToolSpec{Name: "send", Command: "true",
		Verify:     `case {{args.to}} in bob) exit 0;; alice) exit 1;; *) echo "cannot reach {{args.to}}" >&2; exit 7;; esac`,
		Parameters: []workflow.Param{{Name: "to", Type: workflow.TypeString, Required: true}}}
	tl, err := command.New(spec, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !tl.Checks() {
		t.Fatal("Checks() = false for a tool with verify:")
	}
	for to, want := range map[string]tool.Verdict{"bob": tool.VerdictDone, "alice": tool.VerdictNotDone,
		"carol": tool.VerdictUnknown, "bob; exit 0": tool.VerdictUnknown} {
		got := tl.Check(t.Context(), tool.Invocation{Args: map[string]any{"to": to}}, nil)
		if got.Verdict != want {
			t.Errorf("Check(to=%q) = %+v, want %s", to, got, want)
		}
	}
	plain, err := command.New(workflow.ToolSpec{Name: "plain", Command: "true"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Checks() {
		t.Error("Checks() = true for a tool without verify:")
	}
}
