package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// TestServeRecordsCalls: with --calls-file, every call (allowed, denied by the workflow,
// denied for want of approval, failed) is appended to the file as the state records it, with
// the call id of its audit record and its output whole, in a file only its owner can read.
func TestServeRecordsCalls(t *testing.T) {
	for _, l := range launchers {
		t.Run(l.name, func(t *testing.T) {
			e := newEnv(t)
			big := strings.Repeat("a line of the big file\n", 4<<10) // 92 KiB
			e.write("big.txt", big)
			path := filepath.Join(e.root, "calls.jsonl")
			sess := l.start(e, "--workflow", "serve.yaml", "--input", "greeting=hi", "--calls-file", path)
			calls := []struct {
				tool string
				args map[string]any
			}{
				{"greet", map[string]any{"name": "world"}},
				{"forbidden", map[string]any{}},
				{"write_file", map[string]any{"path": "new.txt", "content": "x"}},
				{"broken", map[string]any{}},
				{"read_file", map[string]any{"path": "big.txt"}},
			}
			var texts []string
			for _, c := range calls {
				text, _ := callTool(t, sess, c.tool, c.args)
				texts = append(texts, text)
			}
			sess.Close()

			recs := readCalls(t, path)
			type row struct {
				Tool            string
				Args            map[string]any
				Success, Denied bool
				Approval        string
			}
			var got []row
			for _, r := range recs {
				got = append(got, row{r.Tool, r.Arguments, r.Result.Success, r.Result.Denied, r.Result.Approval})
			}
			want := []row{
				{"greet", map[string]any{"name": "world"}, true, false, ports.ByAuto},
				{"forbidden", map[string]any{}, false, true, ports.ByPolicy},
				{"write_file", map[string]any{"path": "new.txt", "content": "x"}, false, true, ports.ByNonInteractive},
				{"broken", map[string]any{}, false, false, ports.ByAuto},
				{"read_file", map[string]any{"path": "big.txt"}, true, false, ports.ByAuto},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("calls file (-want +got):\n%s", diff)
			}
			if out := recs[0].Result.Output; strings.TrimSpace(out) != "hi world" {
				t.Errorf("greet's recorded output = %q, want hi world", out)
			}
			if !strings.Contains(recs[1].Result.Error, "denied") || !strings.Contains(recs[3].Result.Error, "exit") {
				t.Errorf("errors recorded: %q, %q; want the denial and the failure", recs[1].Result.Error, recs[3].Result.Error)
			}
			if out := recs[4].Result.Output; out != texts[4] || len(out) < len(big)/2 {
				t.Errorf("read_file's recorded output has %d bytes, the client got %d: want the whole output", len(out), len(texts[4]))
			}
			audit := e.auditRecords()
			for i, r := range recs {
				if i >= len(audit) || audit[i].CallID != r.ID || r.ID == "" {
					t.Errorf("record %d has call id %q, want its audit record's", i, r.ID)
				}
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("calls file mode = %v (%v), want 0600", fi.Mode(), err)
			}
		})
	}
}

// readCalls decodes the records of a calls file (that each is one line is checked in
// internal/infrastructure/mcp).
func readCalls(t *testing.T, path string) []state.ToolCallRecord {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("calls file: %v", err)
	}
	var recs []state.ToolCallRecord
	for dec := json.NewDecoder(bytes.NewReader(data)); dec.More(); {
		var r state.ToolCallRecord
		if err := dec.Decode(&r); err != nil || r.Result == nil {
			t.Fatalf("calls file %s: record %d: %v (result %v)", data, len(recs), err, r.Result)
		}
		recs = append(recs, r)
	}
	return recs
}

// TestServeCallsFileThatCannotBeOpened fails before serving, as a usage error naming the flag.
func TestServeCallsFileThatCannotBeOpened(t *testing.T) {
	e := newEnv(t)
	t.Chdir(e.dir)
	ios, _, _, _ := iostreams.Test()
	cmd := NewCmdServe(e.factory(ios), func(ctx context.Context, o *ServeOptions) error {
		o.OpenTerminal = noTerminal
		return runServe(ctx, o)
	})
	cmd.SetArgs([]string{"--tools", "read_file", "--calls-file", filepath.Join(e.root, "missing", "calls.jsonl")})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(t.Context())
	if fault.KindOf(err) != fault.Usage || err == nil || !strings.Contains(err.Error(), "--calls-file") {
		t.Errorf("serve = %v (kind %v), want a usage error about --calls-file", err, fault.KindOf(err))
	}
}
