package audit

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/awf-dev/awf/internal/domain/ports"
)

func lines(t testing.TB, recs ...ports.AuditRecord) string {
	var b strings.Builder
	for _, r := range recs {
		line, err := Encode(r, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
	}
	return b.String()
}

func TestReadToleratesTornLastLine(t *testing.T) {
	full := lines(t, record(1), record(2))
	torn := full + lines(t, record(3))[:50]
	recs, stats, err := Read(strings.NewReader(torn), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || !stats.Torn || stats.Skipped != 0 {
		t.Errorf("Read(torn) = %d records, %+v; want 2, torn", len(recs), stats)
	}
	damaged := "not json\n" + full
	recs, stats, err = Read(strings.NewReader(damaged), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || stats.Skipped != 1 || stats.Torn {
		t.Errorf("Read(damaged) = %d records, %+v; want 2, 1 skipped", len(recs), stats)
	}
}

func TestFilter(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	recs := []ports.AuditRecord{
		{Time: base, RunID: "a", Tool: "shell", Outcome: ports.OutcomeOK},
		{Time: base.Add(time.Hour), RunID: "a", Tool: "read_file", Outcome: ports.OutcomeDenied},
		{Time: base.Add(2 * time.Hour), RunID: "b", Tool: "shell", Outcome: ports.OutcomeTimeout},
		// a call that a layer inside the tool refused: started, then denied
		{Time: base.Add(3 * time.Hour), RunID: "c", CallID: "1", Tool: "write_file", Outcome: ports.OutcomeStarted},
		{Time: base.Add(3 * time.Hour), RunID: "c", CallID: "1", Tool: "write_file", Outcome: ports.OutcomeDenied},
	}
	tests := []struct {
		name string
		f    Filter
		want []string // call tools + run ids
	}{
		{"all", Filter{}, []string{"a/shell", "a/read_file", "b/shell", "c/write_file"}},
		{"run", Filter{RunID: "a"}, []string{"a/shell", "a/read_file"}},
		{"tool", Filter{Tool: "shell"}, []string{"a/shell", "b/shell"}},
		{"deny", Filter{Decision: "deny"}, []string{"a/read_file", "c/write_file"}},
		{"allow", Filter{Decision: "allow"}, []string{"a/shell", "b/shell"}},
		{"outcome", Filter{Outcome: "timeout"}, []string{"b/shell"}},
		{"since", Filter{Since: base.Add(time.Hour)}, []string{"a/read_file", "b/shell", "c/write_file"}},
		{"denied inside the tool", Filter{Tool: "write_file", Decision: "allow"}, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := Read(strings.NewReader(lines(t, recs...)), tc.f)
			if err != nil {
				t.Fatal(err)
			}
			names := []string{}
			for _, r := range got {
				names = append(names, r.RunID+"/"+r.Tool)
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("Read(%+v) (-want +got):\n%s", tc.f, diff)
			}
		})
	}
}

func TestReadFileMissing(t *testing.T) {
	recs, _, err := ReadFile(t.TempDir()+"/none.jsonl", Filter{})
	if err != nil || len(recs) != 0 {
		t.Errorf("ReadFile(missing) = %v, %v; want no records", recs, err)
	}
}

func TestReadFoldsStartedRecords(t *testing.T) {
	started := func(i int) ports.AuditRecord {
		r := record(i)
		r.Outcome, r.DurationMs, r.OutputSize = ports.OutcomeStarted, 0, 0
		return r
	}
	twin := func(r ports.AuditRecord, callID string) ports.AuditRecord { r.CallID = callID; return r }
	moved := func(r ports.AuditRecord, run, step string) ports.AuditRecord { r.RunID, r.Step = run, step; return r }
	type got struct{ CallID, Outcome string }
	tests := []struct {
		name    string
		recs    []ports.AuditRecord
		outcome string
		want    []got
	}{
		{"completed calls show once", []ports.AuditRecord{started(1), record(1), started(2), record(2)}, "",
			[]got{{"call_001", "ok"}, {"call_002", "ok"}}},
		{"a call without a result stays started", []ports.AuditRecord{started(1), record(1), started(2)}, "",
			[]got{{"call_001", "ok"}, {"call_002", "started"}}},
		{"interleaved parallel calls", []ports.AuditRecord{started(1), started(2), record(2), record(1)}, "",
			[]got{{"call_002", "ok"}, {"call_001", "ok"}}},
		{"a reused call id pairs oldest first", []ports.AuditRecord{started(1), twin(started(2), "call_001"), record(1)}, "",
			[]got{{"call_001", "started"}, {"call_001", "ok"}}},
		{"three calls under one id pair in order", []ports.AuditRecord{started(1), twin(started(2), "call_001"),
			twin(started(3), "call_001"), record(1), record(1)}, "",
			[]got{{"call_001", "started"}, {"call_001", "ok"}, {"call_001", "ok"}}},
		{"names that run together are other calls", []ports.AuditRecord{moved(started(1), "run-1i", "mplement"), record(1)}, "",
			[]got{{"call_001", "started"}, {"call_001", "ok"}}},
		{"a completion alone (older logs) is kept", []ports.AuditRecord{record(1)}, "", []got{{"call_001", "ok"}}},
		{"--outcome started lists the unfinished", []ports.AuditRecord{started(1), record(1), started(2)}, ports.OutcomeStarted,
			[]got{{"call_002", "started"}}},
		{"--outcome ok", []ports.AuditRecord{started(1), record(1), started(2)}, ports.OutcomeOK,
			[]got{{"call_001", "ok"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, _, err := Read(strings.NewReader(lines(t, tc.recs...)), Filter{Outcome: tc.outcome})
			if err != nil {
				t.Fatal(err)
			}
			var g []got
			for _, r := range recs {
				g = append(g, got{r.CallID, r.Outcome})
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("Read (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadOneRunSkipsOthersUndecoded: reading one run's records (awf audit --run, a run's
// page in the viewer) gives what filtering every decoded record gives, damaged lines counted,
// while other runs' lines are not decoded.
func TestReadOneRunSkipsOthersUndecoded(t *testing.T) {
	var log strings.Builder
	for i := range 6 {
		r := record(i)
		r.RunID = []string{"run-a", "run-b", "run-ab"}[i%3]
		if i == 4 {
			r.Meta = `mentions "run_id":"run-a" in its text`
		}
		line := lines(t, r)
		if i == 5 { // rewritten by a tool that spaces its JSON
			line = strings.Replace(line, `"run_id":"`, `"run_id" : "`, 1)
		}
		log.WriteString(line)
		if i == 2 {
			log.WriteString("not json at all\n{\"cut\":\n")
		}
	}
	for _, prefix := range []string{"run-a", "run-ab", "run-b", "run-", "x"} {
		fast, fastStats, err := Read(strings.NewReader(log.String()), Filter{RunID: prefix})
		if err != nil {
			t.Fatal(err)
		}
		all, allStats, err := Read(strings.NewReader(log.String()), Filter{})
		if err != nil {
			t.Fatal(err)
		}
		var want []ports.AuditRecord
		for _, r := range all {
			if strings.HasPrefix(r.RunID, prefix) {
				want = append(want, r)
			}
		}
		if d := cmp.Diff(want, fast, cmpopts.EquateEmpty()); d != "" || fastStats != allStats {
			t.Errorf("run %q: records differ (-all filtered +read with the filter):\n%s\nstats %+v, want %+v", prefix, d, fastStats, allStats)
		}
	}
}
