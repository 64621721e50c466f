package statestore

import (
	"encoding/base64"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/state"
)

// bytesRun is a run in which every kind of text field (step and call outputs, stderr, errors,
// the run's output, inputs, arguments, variables, message contents) holds text.
func bytesRun(text string) *state.RunState {
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	run := &state.RunState{ID: "bytes", Workflow: "w", WorkflowFile: "w.yaml", Status: state.Failed,
		Inputs: map[string]any{"in": text}, StartedAt: start, UpdatedAt: start,
		Output: text, Error: text}
	st := run.Step("s")
	st.Status, st.Output, st.Stderr, st.Error = state.Failed, text, text, text
	st.Vars = map[string]string{"v": text}
	st.ToolCalls = []state.ToolCallRecord{{ID: "c1", Tool: "shell",
		Arguments: map[string]any{"command": text, "list": []any{text}},
		Result:    &state.ToolCallResult{Output: text, Error: text}}}
	st.Conversation = &state.Conversation{Messages: []state.Message{{Role: "tool", Content: text, ToolCallID: "c1"}}}
	return run
}

// FuzzSaveLoadBytes states what the store promises of text: any bytes, valid UTF-8 or not,
// terminal escapes included, in any text field, are loaded back exactly; and a YAML reader
// that knows nothing of awf gets the same bytes from the state file.
func FuzzSaveLoadBytes(f *testing.F) {
	// The last five are not UTF-8 and their base64 reads as another type when plain: 8703,
	// true, null, 1e10, 0x12.
	for _, s := range append(trickyStrings, "\x1b]0;pwned\x07\x1b[2J\xff\n", "\xff", "\xc3\x28", "a\x00\x80b",
		"\xf3\xbd7", "\xb6\xbb\x9e", "\x9e\xe9e", "\xd5\xedt", "\xd3\x1dv") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s := newStore(t, t.TempDir(), WithOutputThreshold(1<<20))
		run := bytesRun(text)
		if err := s.Save(t.Context(), run); err != nil {
			t.Fatal(err)
		}
		assertLoads(t, newStore(t, s.dir), run)
		data, err := os.ReadFile(s.Path(run.ID))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Output string `yaml:"output"`
			States map[string]struct {
				Stderr string `yaml:"stderr"`
			} `yaml:"states"`
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Output != text || doc.States["s"].Stderr != text {
			t.Errorf("a YAML reader gets %q and %q, want %q", doc.Output, doc.States["s"].Stderr, text)
		}
	})
}

// TestBinaryMarked checks how text that is not valid UTF-8 is written: tagged !!binary with
// its base64, so that a reader sees it is bytes, not text.
func TestBinaryMarked(t *testing.T) {
	text := "\x1b]0;pwned\x07\x1b[2J\xff\n"
	s := newStore(t, t.TempDir())
	if err := s.Save(t.Context(), bytesRun(text)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.Path("bytes"))
	if err != nil {
		t.Fatal(err)
	}
	want := `output: !!binary "` + base64.StdEncoding.EncodeToString([]byte(text)) + "\"\n"
	if !strings.Contains(string(data), want) || strings.Contains(string(data), "output_file") {
		t.Errorf("state file does not hold %q inline:\n%s", want, data)
	}
	var generic map[string]any
	if err := yaml.Unmarshal(data, &generic); err != nil {
		t.Fatal(err)
	}
	if got := generic["output"]; !cmp.Equal(got, []byte(text)) {
		t.Errorf("a generic reader gets %#v, want the bytes", got)
	}
}
