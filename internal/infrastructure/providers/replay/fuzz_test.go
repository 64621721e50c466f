package replay_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/awf-dev/awf/internal/infrastructure/providers/replay"
)

// FuzzLoad: a cassette file of any content loads or is refused without panicking, within the
// copies Load allows, and one that loads is written back (Encode) as a file that loads as
// the same interactions.
func FuzzLoad(f *testing.F) {
	f.Add("version: 2\ninteractions:\n  - {step: a, request: {messages: [{role: user, content: hi}]}, response: {content: x}}\n" +
		"  - {step: a, request: {prior: 1, messages: [{role: assistant, content: y}]}}\n")
	f.Add("version: 2\ninteractions:\n  - {step: a, request: {prior: 1, messages: []}}\n")
	f.Add("version: 1\ninteractions:\n  - {workflow: w, step: a, request: {messages: [{role: user}]}}\n  - {step: a, request: {messages: []}}\n")
	f.Fuzz(func(t *testing.T, content string) {
		dir := t.TempDir()
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := replay.Load(path)
		if err != nil {
			return
		}
		data, err := replay.Encode(c)
		if err != nil {
			t.Fatalf("Encode of a loaded cassette: %v", err)
		}
		again := filepath.Join(dir, "again.yaml")
		if err := os.WriteFile(again, data, 0o644); err != nil {
			t.Fatal(err)
		}
		back, err := replay.Load(again)
		if err != nil {
			t.Fatalf("the cassette written back does not load: %v\n%s", err, data)
		}
		if d := cmp.Diff(c.Interactions, back.Interactions, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("written back, the cassette loads otherwise (-loaded +again):\n%s", d)
		}
	})
}
