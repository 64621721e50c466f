package audit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/awf-dev/awf/internal/domain/ports"
)

// scanLog is a log with what reading must get right: calls that ended, two calls that did not
// (one of them with big arguments), calls of two runs and three tools interleaved, a reused
// call id, a tool named in another tool's meta, damaged lines and a torn last line.
func scanLog(t *testing.T) string {
	t.Helper()
	rec := func(i int, run, tool, outcome string) ports.AuditRecord {
		r := record(i)
		r.RunID, r.Tool, r.Outcome = run, tool, outcome
		if outcome == ports.OutcomeStarted {
			r.DurationMs, r.OutputSize = 0, 0
		}
		return r
	}
	mentions := rec(7, "run-b", "shell", ports.OutcomeOK)
	mentions.Meta = `cat read_file.go "tool":"read_file"`
	reused := rec(1, "run-a", "shell", ports.OutcomeStarted)
	orphan := rec(9, "run-b", "write_file", ports.OutcomeStarted)
	orphan.Arguments = map[string]any{"content": strings.Repeat("y", 50_000)}
	var b strings.Builder
	b.WriteString(lines(t,
		rec(1, "run-a", "shell", ports.OutcomeStarted),
		rec(2, "run-b", "read_file", ports.OutcomeStarted),
		rec(1, "run-a", "shell", ports.OutcomeOK),
		reused,
		rec(2, "run-b", "read_file", ports.OutcomeDenied),
	))
	b.WriteString("not json\n{\"cut\":\n")
	b.WriteString(lines(t,
		orphan,
		rec(3, "run-a", "read_file", ports.OutcomeStarted),
		rec(4, "run-b", "shell", ports.OutcomeStarted),
		rec(4, "run-b", "shell", ports.OutcomeTimeout),
		mentions,
		rec(3, "run-a", "read_file", ports.OutcomeOK),
		rec(5, "run-a", "read_file", ports.OutcomeOK), // a completion alone, as older logs have
	))
	b.WriteString(`{"time":"2026-01-02T03:04:05Z","run_id":"run-a","tool":"sh`)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// wholeRead is how reading was done before ScanFile, kept as the oracle: every line decoded
// and held, each completion ending the oldest started record of its call not ended yet, then
// filtered.
func wholeRead(t *testing.T, path string, f Filter) []ports.AuditRecord {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var all []ports.AuditRecord
	for line := range strings.Lines(string(data)) {
		var r ports.AuditRecord
		if json.Unmarshal([]byte(line), &r) == nil && f.matchCall(r) {
			all = append(all, r)
		}
	}
	same := func(a, b ports.AuditRecord) bool {
		return a.RunID == b.RunID && a.Step == b.Step && a.CallID == b.CallID && a.Tool == b.Tool && a.Depth == b.Depth
	}
	ended := make([]bool, len(all))
	for j, c := range all {
		if c.Outcome == ports.OutcomeStarted {
			continue
		}
		for i := range j { // the oldest started record of the call not ended yet
			if all[i].Outcome == ports.OutcomeStarted && !ended[i] && same(all[i], c) {
				ended[i] = true
				break
			}
		}
	}
	var out []ports.AuditRecord
	for i, r := range all {
		if !ended[i] && f.Match(r) {
			out = append(out, r)
		}
	}
	return out
}

// TestScanFileGivesWhatHoldingTheLogGave: ScanFile hands out, in order, what reading the whole
// log into memory gave, for every kind of filter; heads come before start, start before the
// first record, and heads are the records handed out.
func TestScanFileGivesWhatHoldingTheLogGave(t *testing.T) {
	path := scanLog(t)
	for _, f := range []Filter{
		{}, {RunID: "run-a"}, {RunID: "run-"}, {Tool: "read_file"}, {Tool: "shell"}, {Tool: "write_file"},
		{Outcome: ports.OutcomeStarted}, {Outcome: ports.OutcomeOK}, {Decision: ports.DecisionDeny},
		{Decision: ports.DecisionAllow, Tool: "read_file"}, {RunID: "run-b", Tool: "shell"}, {Tool: "sh\"ell"},
	} {
		t.Run(fmt.Sprintf("%+v", f), func(t *testing.T) {
			var heads, got []ports.AuditRecord
			var events []string
			stats, err := ScanFile(path, f,
				func(r ports.AuditRecord) { heads = append(heads, r); events = append(events, "head") },
				func() error { events = append(events, "start"); return nil },
				func(r ports.AuditRecord) error { got = append(got, r); events = append(events, "record"); return nil })
			if err != nil {
				t.Fatal(err)
			}
			want := wholeRead(t, path, f)
			if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("records (-whole log +ScanFile):\n%s", d)
			}
			order := slices.Compact(slices.Clone(events))
			if wantOrder := slices.DeleteFunc([]string{"head", "start", "record"}, func(e string) bool {
				return e != "start" && len(want) == 0
			}); !slices.Equal(order, wantOrder) || strings.Count(strings.Join(events, " "), "start") != 1 {
				t.Errorf("calls in the order %v, want %v with start once", order, wantOrder)
			}
			key := func(r ports.AuditRecord) string { return r.RunID + "/" + r.CallID + "/" + r.Tool + "/" + r.Outcome }
			hk, gk := mapKeys(heads, key), mapKeys(got, key)
			slices.Sort(hk)
			slices.Sort(gk)
			if d := cmp.Diff(gk, hk, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("heads are not the records (-records +heads):\n%s", d)
			}
			for _, h := range heads {
				if h.Outcome == ports.OutcomeStarted && h.Arguments != nil {
					t.Errorf("the head of a started record holds its arguments")
				}
			}
			if needles := f.needles(); len(needles) == 0 && (stats.Skipped != 2 || !stats.Torn) {
				t.Errorf("stats = %+v, want 2 skipped and torn", stats)
			}
		})
	}
}

func mapKeys(recs []ports.AuditRecord, key func(ports.AuditRecord) string) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, key(r))
	}
	return out
}

// TestScanFileLeavesOutWhatCameAfterItsFirstReading: records appended while the log is read
// (a run going on) wait for the next reading, and do not change what the first reading
// decided.
func TestScanFileLeavesOutWhatCameAfterItsFirstReading(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	started := record(1)
	started.Outcome = ports.OutcomeStarted
	if err := os.WriteFile(path, []byte(lines(t, record(0), started)), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	_, err := ScanFile(path, Filter{}, nil, func() error {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString(lines(t, record(1), record(2))) // the call ends, another runs
		return err
	}, func(r ports.AuditRecord) error { got = append(got, r.CallID+" "+r.Outcome); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"call_000 ok", "call_001 started"}; !slices.Equal(got, want) {
		t.Errorf("records = %v, want %v", got, want)
	}
}

// TestScanFileStopsAtAnError: the error of start or of fn ends the reading and is returned.
func TestScanFileStopsAtAnError(t *testing.T) {
	path := scanLog(t)
	stop := fmt.Errorf("stop")
	n := 0
	if _, err := ScanFile(path, Filter{}, nil, nil, func(ports.AuditRecord) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("fn's error: %v after %d records, want stop after 1", err, n)
	}
	if _, err := ScanFile(path, Filter{}, nil, func() error { return stop }, func(ports.AuditRecord) error { n++; return nil }); err != stop || n != 1 {
		t.Errorf("start's error: %v after %d records, want stop and none", err, n-1)
	}
}

// TestScanFileHoldsNoMoreThanTheCallsInFlight: reading a 30 MB log keeps the heap to a few
// lines, where holding its records took about the log's size.
func TestScanFileHoldsNoMoreThanTheCallsInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 30 MB log")
	}
	const calls = 5_000
	path, info := writeCalls(t, calls, func(i int) []ports.AuditRecord {
		start, end := record(i), record(i)
		start.Outcome = ports.OutcomeStarted
		if i%1000 == 0 {
			return []ports.AuditRecord{start} // a call a crash cut off: stays started to the end
		}
		return []ports.AuditRecord{start, end}
	})
	var peak heapPeak
	n, kept := 0, 0
	_, err := ScanFile(path, Filter{}, nil, nil, func(r ports.AuditRecord) error {
		n++
		if r.Outcome == ports.OutcomeStarted {
			kept++
		}
		peak.sample(n)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != calls || kept != calls/1000 {
		t.Fatalf("%d records, %d started; want %d and %d", n, kept, calls, calls/1000)
	}
	t.Logf("heap at most %.1f MB reading a %.1f MB log", float64(peak)/(1<<20), float64(info.Size())/(1<<20))
	if limit := heapPeak(info.Size() / 3); peak > limit {
		t.Errorf("heap reached %d MB reading a %d MB log; want under %d MB", peak>>20, info.Size()>>20, limit>>20)
	}
}

// TestScanFileHoldsCallsThatNeverEndedByTheirPlace: a log of calls that never ended (awf
// killed again and again, never resumed) keeps them all until its end; reading it holds
// where each one is, not its record, and reads them again to size a table (heads).
func TestScanFileHoldsCallsThatNeverEndedByTheirPlace(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 30 MB log")
	}
	const calls = 10_000
	path, info := writeCalls(t, calls, func(i int) []ports.AuditRecord {
		r := record(i)
		r.Outcome, r.Sandbox.Applied = ports.OutcomeStarted, map[string]string{"landlock": "read-only /usr", "seccomp": "default"}
		return []ports.AuditRecord{r}
	})
	var peak heapPeak
	heads, n := 0, 0
	_, err := ScanFile(path, Filter{}, func(ports.AuditRecord) { heads++; peak.sample(heads) }, nil,
		func(ports.AuditRecord) error { n++; peak.sample(n); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if heads != calls || n != calls {
		t.Fatalf("%d heads, %d records; want %d of each", heads, n, calls)
	}
	t.Logf("heap at most %.1f MB reading a %.1f MB log of %d calls that never ended", float64(peak)/(1<<20), float64(info.Size())/(1<<20), calls)
	if limit := heapPeak(info.Size() / 4); peak > limit {
		t.Errorf("heap reached %d MB; want under %d MB", peak>>20, limit>>20)
	}
}

// TestScanFileKeepsACallInFlightInAFewDozenBytes: for each call still in flight, reading
// holds a digest of the call's names and where its line is, not the names themselves, so a
// log of many calls that never ended, with a model's long call ids, costs a few dozen bytes
// for each (it cost some 250 when the names were the key).
func TestScanFileKeepsACallInFlightInAFewDozenBytes(t *testing.T) {
	const open, ended = 50_000, 1_000
	path, _ := writeCalls(t, open+ended, func(i int) []ports.AuditRecord {
		r := ports.AuditRecord{
			Time:    time.Date(2026, 11, 27, 13, 40, 0, 0, time.UTC),
			RunID:   fmt.Sprintf("20261127-134000-%08x", i/100),
			Step:    fmt.Sprintf("implement_the_feature_%d", i%7),
			CallID:  fmt.Sprintf("toolu_01A09q90qw90lq917835lq9%06d", i),
			Tool:    "shell",
			Outcome: ports.OutcomeStarted,
		}
		if i < open {
			return []ports.AuditRecord{r}
		}
		done := r
		done.Outcome = ports.OutcomeOK
		return []ports.AuditRecord{r, done}
	})
	live := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	before := live()
	var held int64
	seen := 0
	heads := func(r ports.AuditRecord) {
		// The ended calls come last in the log: at the last one's completion, every call
		// that never ended is held.
		if seen++; seen == ended {
			held = live() - before
		}
	}
	if _, err := ScanFile(path, Filter{}, heads, nil, func(ports.AuditRecord) error { return nil }); err != nil {
		t.Fatal(err)
	}
	perCall := float64(held) / open
	t.Logf("%.0f bytes held for each of %d calls in flight", perCall, open)
	if perCall > 80 {
		t.Errorf("%.0f bytes held for each call in flight; want at most 80", perCall)
	}
}

// writeCalls writes an audit log of the records of calls calls, as call(i) gives them.
func writeCalls(t *testing.T, calls int, call func(i int) []ports.AuditRecord) (string, os.FileInfo) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := range calls {
		if _, err := f.WriteString(lines(t, call(i)...)); err != nil {
			t.Fatal(err)
		}
	}
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return path, info
}

// heapPeak is the most heap in use seen by sample, in bytes.
type heapPeak uint64

// sample looks at the heap every thousandth record.
func (p *heapPeak) sample(n int) {
	if n%1000 == 0 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		*p = max(*p, heapPeak(m.HeapAlloc))
	}
}
