package run

import (
	"fmt"
	"strings"
	"testing"

	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/bom/bomtest"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

func inputsWorkflow() *workflow.Workflow {
	return &workflow.Workflow{Name: "w", Inputs: []workflow.Input{
		{Name: "feature", Required: true, Description: "What to implement"},
		{Name: "count", Type: workflow.TypeInteger, Required: true},
		{Name: "mode", Default: "fast", HasDefault: true},
	}}
}

func TestMissingInputsWithoutTerminal(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	_, err := ResolveInputs(ios, inputsWorkflow(), map[string]any{})
	if fault.KindOf(err) != fault.Usage || !strings.Contains(err.Error(), "feature, count") ||
		!strings.Contains(err.Error(), "--input feature=...") {
		t.Errorf("err = %v (kind %v), want a usage error naming feature and count", err, fault.KindOf(err))
	}
}

func TestMissingInputsAskedOnTerminal(t *testing.T) {
	ios, in, _, errOut := iostreams.Test()
	ios.SetStdinTTY(true)
	ios.SetStderrTTY(true)
	in.WriteString("add a flag\nmany\n3\n") // "many" is not an integer: asked again
	values, err := ResolveInputs(ios, inputsWorkflow(), map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if values["feature"] != "add a flag" || values["count"] != int64(3) || values["mode"] != "fast" {
		t.Errorf("values = %#v", values)
	}
	for _, want := range []string{"feature (What to implement): ", "count [integer]: ", "not an integer"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("prompt output lacks %q:\n%s", want, errOut.String())
		}
	}
}

func TestGivenInputs(t *testing.T) {
	if _, err := GivenInputs([]string{"novalue"}, ""); fault.KindOf(err) != fault.Usage {
		t.Errorf("--input without '=': %v", err)
	}
	got, err := GivenInputs([]string{"a=1=2", " b =x"}, "")
	if err != nil || got["a"] != "1=2" || got["b"] != "x" {
		t.Errorf("GivenInputs = %v, %v", got, err)
	}
}

// An --input-file saved with a byte order mark reads as without one, errors at the same
// positions; a UTF-16 one is refused with what to do.
func TestGivenInputsByteOrderMark(t *testing.T) {
	bomtest.TestFile(t, "in.yaml", []bomtest.Case{
		{Name: "valid", Doc: "feature: greet\ncount: 2\n"},
		{Name: "not a map", Doc: "feature: greet\n- 2\n", Err: "in.yaml: [2:1]"},
	}, func(path string) (string, error) {
		got, err := GivenInputs(nil, path)
		return fmt.Sprint(got), err
	})
}
