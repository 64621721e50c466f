package manifest_test

import (
	"encoding/json"
	"testing"

	"github.com/awf-dev/awf/internal/bom/bomtest"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/manifest"
)

// read is what bomtest.Test compares: v as JSON, and the errors among probs.
func read(v any, probs workflow.Problems) (string, error) {
	out, _ := json.Marshal(v)
	if errs := probs.Errors(); len(errs) > 0 {
		return string(out), errs
	}
	return string(out), nil
}

// A manifest or .tool file saved with a byte order mark reads as without one (the mark is not
// part of the first key, nor of the description), problems at the same positions; a UTF-16
// one is refused at 1:1 with what to do.
func TestByteOrderMark(t *testing.T) {
	t.Run("manifest", func(t *testing.T) {
		bomtest.Test(t, []bomtest.Case{
			{Name: "valid", Doc: "name: shout\ndescription: Shout\nsteps:\n  - {type: tool, tool: shell, args: {command: \"echo {input}\"}, output_var: o}\noutput: \"{o}\"\n"},
			{Name: "invalid", Doc: "nme: shout\ndescription: Shout\nsteps: []\n", Err: `config.yaml:1:1: unknown key "nme"`},
		}, func(t *testing.T, data []byte) (string, error) {
			m, probs := manifest.Decode("config.yaml", data)
			return read(m, probs)
		})
	})
	t.Run(".tool", func(t *testing.T) {
		bomtest.Test(t, []bomtest.Case{
			{Name: "wrapped", Doc: "List files.\n\n@title List\n@name list\n@wrapped run_command\n@command ls {arguments}\n@param arguments {array<string>} [required] Paths\n"},
			{Name: "alias on line 1", Doc: "@name fetch\n@wrapped web_fetch\n"},
			{Name: "invalid", Doc: "@name list\n@wraped run_command\n", Err: "x.tool:2:1: unknown annotation @wraped"},
		}, func(t *testing.T, data []byte) (string, error) {
			tf, probs := manifest.ParseToolFile("x.tool", data)
			return read(tf, probs)
		})
	})
}
