package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// readCallLog decodes every line of a calls file, failing on one that is not a record.
func readCallLog(t *testing.T, path string) []state.ToolCallRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []state.ToolCallRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r state.ToolCallRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("calls file line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestServerRecordsCalls: every call, allowed, denied, failed, panicking or with arguments
// that are not an object, is appended to the calls file as the state records it.
func TestServerRecordsCalls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	log, err := OpenCallLog(path)
	if err != nil {
		t.Fatal(err)
	}
	inv := testInvoker()
	inv.Tools["read_file"] = func(_ context.Context, req ports.ToolRequest) (tool.Result, error) {
		return tool.Result{Status: tool.StatusOK, Output: fmt.Sprintf("content of %v", req.Args["path"]), Approval: ports.ByAuto, Truncated: true}, nil
	}
	inv.Tools["write_file"] = func(context.Context, ports.ToolRequest) (tool.Result, error) {
		return tool.Result{Status: tool.StatusError, Error: "denied by policy: no writes here", Denied: true, Approval: ports.ByPolicy}, nil
	}
	var n atomic.Int64
	s, err := NewServer(ServerConfig{Tools: exposedTools, Invoker: inv, Refuser: noRefusals, RunID: "r", Calls: log,
		NewID: func() string { return fmt.Sprintf("call-%d", n.Add(1)) }})
	if err != nil {
		t.Fatal(err)
	}
	sess := serveStdio(t, s)
	call(t, sess, "read_file", map[string]any{"path": "a.txt", "limit": 3})
	call(t, sess, "write_file", map[string]any{"path": "a.txt"})
	call(t, sess, "boom", nil)
	call(t, sess, "faulty", nil)
	call(t, sess, "read_file", []string{"a.txt"})
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}

	want := []state.ToolCallRecord{
		{ID: "call-1", Tool: "read_file", Arguments: map[string]any{"path": "a.txt", "limit": float64(3)},
			Result: &state.ToolCallResult{Success: true, Output: "content of a.txt", Approval: ports.ByAuto, Truncated: true}},
		{ID: "call-2", Tool: "write_file", Arguments: map[string]any{"path": "a.txt"},
			Result: &state.ToolCallResult{Error: "denied by policy: no writes here", Approval: ports.ByPolicy, Denied: true}},
		{ID: "call-3", Tool: "boom", Arguments: map[string]any{},
			Result: &state.ToolCallResult{Error: `tool "boom" crashed: kaboom`}},
		{ID: "call-4", Tool: "faulty", Arguments: map[string]any{},
			Result: &state.ToolCallResult{Error: "approval needed and nobody to ask: " + ports.ErrAbortStep.Error(), Denied: true}},
		{ID: "call-5", Tool: "read_file", Arguments: map[string]any{state.RawArgsKey: `["a.txt"]`},
			Result: &state.ToolCallResult{Error: `tool "read_file": arguments must be a JSON object, got a list`, Denied: true, Approval: ports.ByGate}},
	}
	got := readCallLog(t, path)
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(state.ToolCallResult{}, "DurationMs")); diff != "" {
		t.Errorf("calls file (-want +got):\n%s", diff)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("calls file mode = %v (%v), want 0600", fi.Mode(), err)
	}
}

// TestCallLogConcurrentAppends: concurrent calls, and two servers sharing the file (a CLI
// may start the server more than once in a turn), never interleave lines; large outputs are
// kept whole.
func TestCallLogConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	var logs [2]*CallLog
	for i := range logs {
		l, err := OpenCallLog(path)
		if err != nil {
			t.Fatal(err)
		}
		logs[i] = l
	}
	big := strings.Repeat("x", 256<<10)
	const perLog = 40
	var wg sync.WaitGroup
	for i, l := range logs {
		for j := range perLog {
			wg.Go(func() {
				rec := state.ToolCallRecord{ID: fmt.Sprintf("%d-%d", i, j), Tool: "read_file", Arguments: map[string]any{},
					Result: &state.ToolCallResult{Success: true, Output: big}}
				if err := l.Append(rec); err != nil {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	for _, l := range logs {
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	recs := readCallLog(t, path)
	seen := map[string]bool{}
	for _, r := range recs {
		if r.Result == nil || r.Result.Output != big {
			t.Fatalf("record %s lost its output", r.ID)
		}
		seen[r.ID] = true
	}
	if len(recs) != 2*perLog || len(seen) != 2*perLog {
		t.Errorf("calls file holds %d records (%d distinct), want %d", len(recs), len(seen), 2*perLog)
	}
}

func TestOpenCallLogFails(t *testing.T) {
	if _, err := OpenCallLog(filepath.Join(t.TempDir(), "missing", "calls.jsonl")); err == nil || !strings.Contains(err.Error(), "open the calls file") {
		t.Errorf("OpenCallLog in a missing directory = %v, want an error", err)
	}
}

// TestReadCallLogReadsWhatCallLogWrote: the records come back as written, numbers as
// json.Number; a torn last line is left out; no file is no calls.
func TestReadCallLogReadsWhatCallLogWrote(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	if recs, err := ReadCallLog(path); err != nil || recs != nil {
		t.Fatalf("ReadCallLog of no file = %v, %v; want no calls", recs, err)
	}
	l, err := OpenCallLog(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []state.ToolCallRecord{
		{ID: "c1", Tool: "read_file", Arguments: map[string]any{"path": "a.go", "limit": json.Number("10")},
			Result: &state.ToolCallResult{Success: true, Output: "package a\n", DurationMs: 3}},
		{ID: "c2", Tool: "shell", Arguments: map[string]any{},
			Result: &state.ToolCallResult{Error: "denied by policy"}},
	}
	for _, rec := range want {
		if err := l.Append(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id":"c3","tool":"sh`) // the server killed while writing
	f.Close()
	got, err := ReadCallLog(path)
	if err != nil {
		t.Fatalf("ReadCallLog = %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadCallLog (-want +got):\n%s", diff)
	}
}
