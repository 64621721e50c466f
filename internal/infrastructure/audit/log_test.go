package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/ports"
)

func record(i int) ports.AuditRecord {
	return ports.AuditRecord{
		Time:       time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(i) * time.Second),
		RunID:      "run-1",
		Step:       "implement",
		CallID:     fmt.Sprintf("call_%03d", i),
		Tool:       "shell",
		Arguments:  map[string]any{"command": "git status", "padding": strings.Repeat("x", 3000)},
		Meta:       "run git status",
		Approval:   &ports.AuditApproval{Decision: ports.DecisionAllow, By: ports.ByRule, Rule: "approval.rules[0]"},
		Sandbox:    &ports.AuditSandbox{Decision: ports.DecisionAllow, Rule: "allow_all", Layer: "none"},
		Outcome:    ports.OutcomeOK,
		DurationMs: 12,
		OutputSize: 40,
	}
}

func TestRecordWritesMaskedLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := ports.AuditRecord{
		Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), RunID: "r", Step: "s", CallID: "c1", Tool: "http_request",
		Arguments: map[string]any{"url": "https://x/?api_key=abc", "headers": map[string]any{"Authorization": "Bearer zzz"}},
		Meta:      "GET https://x/?api_key=abc",
		Approval:  &ports.AuditApproval{Decision: ports.DecisionDeny, By: ports.ByUser, Answer: "no"},
		Sandbox:   &ports.AuditSandbox{Decision: ports.DecisionAllow, Rule: "sandbox.hosts[0]", Layer: "L1", Backend: "bwrap", Applied: map[string]string{"landlock": "abi7"}},
		Outcome:   ports.OutcomeDenied,
		Error:     "denied by the user; token=" + strings.Repeat("q", 5000),
		Secrets:   []string{"never-written"},
	}
	if err := l.Record(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(data, []byte("\n")) != 1 || !bytes.HasSuffix(data, []byte("\n")) {
		t.Fatalf("file = %q, want one line", data)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"time": "2026-01-02T03:04:05Z", "run_id": "r", "step": "s", "call_id": "c1", "tool": "http_request",
		"arguments":   map[string]any{"url": "https://x/?api_key=***", "headers": map[string]any{"Authorization": "***"}},
		"meta":        "GET https://x/?api_key=***",
		"approval":    map[string]any{"decision": "deny", "by": "user", "answer": "no"},
		"sandbox":     map[string]any{"decision": "allow", "rule": "sandbox.hosts[0]", "layer": "L1", "backend": "bwrap", "applied": map[string]any{"landlock": "abi7"}},
		"outcome":     "denied",
		"error":       "denied by the user; token=***",
		"duration_ms": float64(0), "output_size": float64(0),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
	if bytes.Contains(data, []byte("never-written")) {
		t.Error("the secrets list was written")
	}
}

func TestRecordCutsLongValues(t *testing.T) {
	line, err := Encode(ports.AuditRecord{Tool: "write_file", Arguments: map[string]any{"content": strings.Repeat("a", 10000)},
		Error: strings.Repeat("e", 5000)}, Options{MaxValue: 100, MaxError: 50})
	if err != nil {
		t.Fatal(err)
	}
	var rec ports.AuditRecord
	if err := json.Unmarshal(line, &rec); err != nil {
		t.Fatal(err)
	}
	if got, want := rec.Arguments["content"], strings.Repeat("a", 100)+"…[10000 bytes]"; got != want {
		t.Errorf("content = %q, want %q", got, want)
	}
	if want := strings.Repeat("e", 50) + "…[5000 bytes]"; rec.Error != want {
		t.Errorf("error = %q, want %q", rec.Error, want)
	}
}

func TestOpenMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", ".awf")
	path := filepath.Join(dir, "audit.jsonl")
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	assertMode(t, path, 0o600)
	assertMode(t, dir, 0o700|os.ModeDir)

	wide := filepath.Join(t.TempDir(), "wide.jsonl")
	if err := os.WriteFile(wide, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err = Open(wide, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	assertMode(t, wide, 0o600)

	if _, err := Open(t.TempDir(), Options{}); err == nil {
		t.Error("Open(directory): no error")
	}
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode() & (os.ModePerm | os.ModeDir); got != want {
		t.Errorf("mode of %s = %v, want %v", path, got, want)
	}
}

func TestRecordAfterClose(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "a.jsonl"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if err := l.Record(t.Context(), record(1)); err == nil {
		t.Error("Record after Close: no error")
	}
}

const helperEnv = "AWF_AUDIT_TEST_APPEND"

// TestHelperAppend is not a test: run by TestConcurrentAppends in a child process, it appends
// records to the file named by AWF_AUDIT_TEST_APPEND.
func TestHelperAppend(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("helper process only")
	}
	appendRecords(t, path, os.Getenv("AWF_AUDIT_TEST_ID"), 100)
}

func appendRecords(t *testing.T, path, who string, n int) {
	l, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Error(err)
		return
	}
	defer l.Close()
	for i := range n {
		rec := record(i)
		rec.RunID = who
		if err := l.Record(t.Context(), rec); err != nil {
			t.Error(err)
			return
		}
	}
}

func TestConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var procs []*exec.Cmd
	for _, id := range []string{"proc-a", "proc-b"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperAppend$")
		cmd.Env = append(os.Environ(), helperEnv+"="+path, "AWF_AUDIT_TEST_ID="+id)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() { appendRecords(t, path, fmt.Sprintf("goroutine-%d", g), 100) })
	}
	wg.Wait()
	for _, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("helper process: %v", err)
		}
	}
	recs, stats, err := ReadFile(path, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if stats != (Stats{}) {
		t.Errorf("stats = %+v, want every line a record", stats)
	}
	count := map[string]int{}
	for _, r := range recs {
		count[r.RunID]++
	}
	want := map[string]int{"proc-a": 100, "proc-b": 100, "goroutine-0": 100, "goroutine-1": 100, "goroutine-2": 100, "goroutine-3": 100}
	if diff := cmp.Diff(want, count); diff != "" {
		t.Errorf("records per writer (-want +got):\n%s", diff)
	}
}

// TestAppendAfterTornTail: a log whose last record a crash cut short is appended to by the
// next process; the new records start on a line of their own, so that they read back, and
// an intact log gets no stray blank line.
func TestAppendAfterTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	whole := lines(t, record(1))
	if err := os.WriteFile(path, []byte(whole+lines(t, record(2))[:70]), FileMode); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{3, 4} { // two processes, each opening the log
		l, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Record(t.Context(), record(i)); err != nil {
			t.Fatal(err)
		}
		l.Close()
	}
	recs, stats, err := ReadFile(path, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.CallID)
	}
	if want := []string{"call_001", "call_003", "call_004"}; !slices.Equal(ids, want) || stats.Skipped != 1 || stats.Torn {
		t.Errorf("records %v, %+v; want %v, the cut record skipped", ids, stats, want)
	}
	data, _ := os.ReadFile(path)
	if bytes.Contains(data, []byte("\n\n")) {
		t.Errorf("the log has a blank line:\n%s", data)
	}
}
