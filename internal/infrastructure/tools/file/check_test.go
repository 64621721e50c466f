package file

import (
	"testing"

	"github.com/awf-dev/awf/internal/domain/tool"
)

// TestWriteFileCheck: the intent recorded before a write tells afterwards whether the write
// took effect: a replaced file holds the content meant, an appended one grew by it; a file
// left as it was was not written, and a file in neither state cannot be told.
func TestWriteFileCheck(t *testing.T) {
	tests := []struct {
		name   string
		args   map[string]any
		before map[string]string // files before the call
		write  bool              // whether the call ran before the check
		after  map[string]string // files changed by someone else between the call and the check
		want   tool.Verdict
	}{
		{"new file written", map[string]any{"path": "a.txt", "content": "hello"}, nil, true, nil, tool.VerdictDone},
		{"new file not written", map[string]any{"path": "a.txt", "content": "hello"}, nil, false, nil, tool.VerdictNotDone},
		{"replace written", map[string]any{"path": "a.txt", "content": "new"}, map[string]string{"a.txt": "old"}, true, nil, tool.VerdictDone},
		{"replace not written", map[string]any{"path": "a.txt", "content": "new"}, map[string]string{"a.txt": "old"}, false, nil, tool.VerdictNotDone},
		{"same size, other content", map[string]any{"path": "a.txt", "content": "new"}, nil, true, map[string]string{"a.txt": "wen"}, tool.VerdictNotDone},
		{"append written", map[string]any{"path": "log", "content": "two\n", "append": true}, map[string]string{"log": "one\n"}, true, nil, tool.VerdictDone},
		{"append written twice is not this call", map[string]any{"path": "log", "content": "two\n", "append": true}, map[string]string{"log": "one\n"}, true,
			map[string]string{"log": "one\ntwo\ntwo\n"}, tool.VerdictUnknown},
		{"append not written", map[string]any{"path": "log", "content": "two\n", "append": true}, map[string]string{"log": "one\n"}, false, nil, tool.VerdictNotDone},
		{"append of other bytes", map[string]any{"path": "log", "content": "two\n", "append": true}, map[string]string{"log": "one\n"}, true,
			map[string]string{"log": "one\nxyz\n"}, tool.VerdictNotDone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, tc.before)
			w := toolset(t, Policy{WorkDir: fx.work})["write_file"].(*WriteFile)
			inv := invocation(tc.args)
			intent := w.Intent(t.Context(), inv)
			if tc.write {
				wantOK(t, call(t, w, tc.args), tc.name)
			}
			for name, content := range tc.after {
				writeFile(t, fx.path(name), content)
			}
			if got := w.Check(t.Context(), inv, intent); got.Verdict != tc.want {
				t.Errorf("Check = %+v, want %s", got, tc.want)
			}
		})
	}
}
